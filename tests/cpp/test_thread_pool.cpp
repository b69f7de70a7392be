// The pool behind set_threads (cpp/src/thread_pool.cpp): for n > 1 threads,
// a call's tasks run on n + 1 threads at once (the caller and n pool threads),
// each in its own slot, so that a pool thread queued behind the caller on its
// CPU leaves no other CPU idle; inside a KeepPoolAwake scope, on n.
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
using attnscope::detail::KeepPoolAwake;
using attnscope::detail::parallel_for;
using attnscope::detail::parallel_slots;
using attnscope::testing::OneThreadAfter;

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)

namespace {

/// The threads and slots that ran a call of `tasks` tasks, each of which
/// waits until `tasks` have started: with fewer threads than tasks the waits
/// run out instead (all_started false).
struct Spread {
  bool all_started = true;
  std::set<std::thread::id> threads;
  std::set<std::size_t> slots;
};

Spread spread_of_call(std::size_t tasks,
                      std::chrono::milliseconds wait = std::chrono::seconds(20)) {
  Spread spread;
  std::atomic<std::size_t> started{0};
  std::atomic<bool> all_started{true};
  std::mutex seen_mutex;
  parallel_for(tasks, parallel_slots(), [&](std::size_t, std::size_t slot) {
    {
      std::lock_guard<std::mutex> lock(seen_mutex);
      spread.threads.insert(std::this_thread::get_id());
      spread.slots.insert(slot);
    }
    ++started;
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (started.load() < tasks) {
      if (std::chrono::steady_clock::now() > deadline) {
        all_started = false;
        return;
      }
      std::this_thread::yield();
    }
  });
  spread.all_started = all_started.load();
  return spread;
}

}  // namespace

TEST_CASE("set_threads(n) runs a call's tasks on n + 1 threads at once, the caller's among them",
          "[threads]") {
  OneThreadAfter restore;
  for (const std::size_t threads : {2, 3}) {
    set_threads(threads);
    const std::size_t slots = parallel_slots();
    REQUIRE(slots == threads + 1);
    const Spread spread = spread_of_call(slots);
    CHECK(spread.all_started);
    CHECK(spread.threads.size() == slots);
    CHECK(spread.threads.count(std::this_thread::get_id()) == 1);
    CHECK(spread.slots.size() == slots);
    CHECK(*spread.slots.rbegin() == slots - 1);
  }
  set_threads(1);
  CHECK(parallel_slots() == 1);
}

TEST_CASE("inside KeepPoolAwake a call runs on n threads, and on n + 1 again after it",
          "[threads]") {
  OneThreadAfter restore;
  for (const std::size_t threads : {2, 3}) {
    set_threads(threads);
    {
      const KeepPoolAwake awake;
      // Several calls in a row, as a model's pass makes them: the pool's
      // threads poll between them, and the last one stays asleep.
      for (int call = 0; call < 3; ++call) {
        const Spread spread = spread_of_call(threads);
        CHECK(spread.all_started);
        CHECK(spread.threads.size() == threads);
        CHECK(spread.threads.count(std::this_thread::get_id()) == 1);
        CHECK(*spread.slots.rbegin() == threads - 1);
      }
      {
        const KeepPoolAwake nested;
        CHECK(spread_of_call(threads).threads.size() == threads);
      }
      // One task more than the awake threads: it starts only after another
      // ends, so the waits run out (they stop at the deadline, not hang).
      CHECK_FALSE(spread_of_call(threads + 1, std::chrono::milliseconds(300)).all_started);
    }
    const Spread after = spread_of_call(threads + 1);
    CHECK(after.all_started);
    CHECK(after.threads.size() == threads + 1);
  }
}

#endif
