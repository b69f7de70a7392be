// Embind bindings: the only translation unit that sees Emscripten.
//
// Thin and raw on purpose: it registers the call frame of call.hpp, whose
// methods take only numbers and strings, and a few memory queries. The
// TypeScript layer (web/lib/call.ts) copies inputs into the buffers a Call
// hands out and copies the outputs out of it, on the JS side of the
// boundary, so no JavaScript ever runs inside a C++ frame and a JS exception
// can only ever skip JS code (which frees the call in `finally`).
#include <emscripten/bind.h>
#include <emscripten/heap.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "attnscope/attnscope.hpp"
#include "call.hpp"

namespace {

std::string version() { return attnscope::version(); }
std::string simd_arch() { return attnscope::simd_arch(); }

/// set_threads as a result string: "" or the core's message (nothing throws
/// across the boundary).
std::string set_threads(double threads) {
  if (!(threads >= 1 && threads <= double(attnscope::kMaxThreads))) {
    return "set_threads: threads must be 1 to " + std::to_string(attnscope::kMaxThreads);
  }
  try {
    attnscope::set_threads(static_cast<std::size_t>(threads));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}
double thread_count() { return static_cast<double>(attnscope::thread_count()); }

double matmul_tile_rows() { return static_cast<double>(attnscope::matmul_tile_rows()); }
/// set_matmul_tile_rows as a result string: "" or the core's message.
std::string set_matmul_tile_rows(double rows) {
  try {
    attnscope::set_matmul_tile_rows(static_cast<std::size_t>(rows));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

/// Bytes currently allocated by malloc: lets tests check that calls, good or
/// rejected, leave nothing behind.
double heap_in_use() { return static_cast<double>(mallinfo().uordblks); }
/// Current size of the wasm memory in bytes.
double heap_size() { return static_cast<double>(emscripten_get_heap_size()); }
/// Bytes malloc can still hand out: the free blocks below the break plus the
/// room between the break and the largest memory the build may grow to.
double memory_available() {
  const auto brk = reinterpret_cast<std::uintptr_t>(sbrk(0));
  return static_cast<double>(emscripten_get_heap_max()) - static_cast<double>(brk) +
         static_cast<double>(mallinfo().fordblks);
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnscope) {
  using attnscope::bindings::Call;
  emscripten::class_<Call>("Call")
      .constructor<>()
      .function("tensor", &Call::tensor)
      .function("bytes", &Call::bytes)
      .function("counts", &Call::counts)
      .function("number", &Call::number)
      .function("text", &Call::text)
      .function("run", &Call::run)
      .function("outputNames", &Call::output_names)
      .function("outputTable", &Call::output_table)
      .function("error", &Call::error);
  emscripten::constant("kOutputRecord", static_cast<double>(attnscope::bindings::kOutputRecord));
  emscripten::function("_version", &version);
  emscripten::function("_simd_arch", &simd_arch);
  emscripten::function("_set_threads", &set_threads);
  emscripten::function("_thread_count", &thread_count);
  emscripten::function("_matmul_tile_rows", &matmul_tile_rows);
  emscripten::function("_set_matmul_tile_rows", &set_matmul_tile_rows);
  emscripten::function("_heap_in_use", &heap_in_use);
  emscripten::function("_heap_size", &heap_size);
  emscripten::function("_memory_available", &memory_available);
}
