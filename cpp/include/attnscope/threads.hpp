// How many threads the fast paths use.
//
// attention() and self_attention() without a trace (the tiled fast path)
// split their work over a small pool of threads created by set_threads and
// kept until the next set_threads: across batch × heads × blocks of 16 query
// rows, so that one head at T = 256 still keeps every thread busy. Each query
// row is computed by the same code in the same order whichever thread runs
// it, so the results are bit for bit those of one thread. Gpt2Model's
// forward (traced or not), step and extend, and Gpt2Trainer's step, use the
// same threads, with the same guarantee. So do the traced path of
// attention() and self_attention() (blocks of query rows of every head),
// self_attention()'s projections, and linear() (hence the block's
// feed-forward); the other calls run on the calling thread.
//
// Calls may come from several threads at once: one call at a time uses the
// pool, and a call that finds it busy runs on its own thread (same results).
// A WebAssembly build without pthreads has no threads: there, only 1 is
// accepted.
#pragma once

#include <cstddef>

namespace attnscope {

/// The largest count set_threads accepts.
inline constexpr std::size_t kMaxThreads = 256;

/// Computes on `threads` CPUs from now on: for more than 1, the caller and
/// `threads` pool threads, one more than the CPUs, so that a pool thread the
/// system queues behind the caller leaves no CPU idle; 1 = the calling thread
/// only (the default). Waits for a call running on the pool to finish. Throws
/// Error for 0, for more than kMaxThreads (or more than the build can start),
/// and ResourceError when a thread cannot be started (the count is then 1).
void set_threads(std::size_t threads);

/// The count set by set_threads (1 until then).
std::size_t thread_count();

/// What the platform reports as its hardware threads (at least 1); 1 in a
/// WebAssembly build without pthreads.
std::size_t hardware_threads();

}  // namespace attnscope
