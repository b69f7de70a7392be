// The pool behind set_threads (attnscope/threads.hpp): for n > 1 threads, n
// pool threads (one more than the caller's share, thread_pool.cpp says why),
// started once by set_threads and parked between calls, plus the calling
// thread. A parallel call hands out task indices 0 .. tasks − 1 from one
// counter; whoever is free takes the next, so uneven tasks (causal blocks)
// balance themselves. Inside a KeepPoolAwake scope the pool's threads poll
// between calls instead of sleeping, and the last one sits out.
#pragma once

#include <cstddef>
#include <functional>

namespace attnscope::detail {

/// A task gets its index and a slot in [0, slots): no two tasks run at the
/// same time in one slot, so a slot can own scratch memory.
using ParallelTask = std::function<void(std::size_t task, std::size_t slot)>;

/// How many slots parallel_for may use right now (thread_count() + 1 when
/// above 1): size the per-slot scratch with it before calling parallel_for.
std::size_t parallel_slots();

/// Runs task(0 .. tasks − 1) on at most `slots` threads, the caller included,
/// and returns when all have finished. Runs them all on the caller when the
/// pool is busy with another call or has no threads. If tasks throw, the
/// first exception is rethrown once every started task has finished; the
/// tasks not yet started are skipped.
void parallel_for(std::size_t tasks, std::size_t slots, const ParallelTask& task);

/// While one lives, the pool's threads poll for the next parallel call for
/// up to a millisecond before they sleep, and a call uses one thread per CPU
/// asked for (the caller and all pool threads but the last). For a model's
/// pass: many short parallel calls with a little serial work between them,
/// where a sleeping thread's wake-up and the scheduler's placement of it
/// cost more than the work of a call's last tasks.
class KeepPoolAwake {
 public:
  KeepPoolAwake();
  ~KeepPoolAwake();
  KeepPoolAwake(const KeepPoolAwake&) = delete;
  KeepPoolAwake& operator=(const KeepPoolAwake&) = delete;

 private:
  bool counted_;
};

}  // namespace attnscope::detail
