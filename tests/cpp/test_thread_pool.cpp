// The pool behind set_threads (cpp/src/thread_pool.cpp): for n > 1 threads,
// a call's tasks run on n + 1 threads at once (the caller and n pool threads),
// each in its own slot, so that a pool thread queued behind the caller on its
// CPU leaves no other CPU idle.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "attnscope/threads.hpp"
#include "test_one_thread_after.hpp"
#include "thread_pool.hpp"

using attnscope::set_threads;
using attnscope::detail::parallel_for;
using attnscope::detail::parallel_slots;
using attnscope::testing::OneThreadAfter;

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)

TEST_CASE("set_threads(n) runs a call's tasks on n + 1 threads at once, the caller's among them",
          "[threads]") {
  OneThreadAfter restore;
  for (const std::size_t threads : {2, 3}) {
    set_threads(threads);
    const std::size_t slots = parallel_slots();
    REQUIRE(slots == threads + 1);
    // Each task waits until every one has started: with fewer threads than
    // tasks the waits would run out instead.
    std::atomic<std::size_t> started{0};
    std::atomic<bool> all_started{true};
    std::mutex seen_mutex;
    std::set<std::thread::id> thread_ids;
    std::set<std::size_t> slot_ids;
    parallel_for(slots, slots, [&](std::size_t, std::size_t slot) {
      {
        std::lock_guard<std::mutex> lock(seen_mutex);
        thread_ids.insert(std::this_thread::get_id());
        slot_ids.insert(slot);
      }
      ++started;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (started.load() < slots) {
        if (std::chrono::steady_clock::now() > deadline) {
          all_started = false;
          return;
        }
        std::this_thread::yield();
      }
    });
    CHECK(all_started.load());
    CHECK(thread_ids.size() == slots);
    CHECK(thread_ids.count(std::this_thread::get_id()) == 1);
    CHECK(slot_ids.size() == slots);
    CHECK(*slot_ids.rbegin() == slots - 1);
  }
  set_threads(1);
  CHECK(parallel_slots() == 1);
}

#endif
