#include "thread_pool.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "attnscope/tensor.hpp"
#include "attnscope/threads.hpp"

namespace attnscope {

namespace {

// A WebAssembly build without -pthread cannot start threads at all.
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
constexpr bool kCanStartThreads = false;
#else
constexpr bool kCanStartThreads = true;
#endif

// Set while this thread runs a task: a parallel call from inside one (the
// model's heads calling attention(), say) runs on this thread, as it would
// if the pool were busy, instead of asking the pool it is part of.
thread_local bool running_task = false;

/// Marks the current thread as running tasks for its lifetime.
class TaskScope {
 public:
  TaskScope() : outer_(running_task) { running_task = true; }
  ~TaskScope() { running_task = outer_; }
  TaskScope(const TaskScope&) = delete;
  TaskScope& operator=(const TaskScope&) = delete;

 private:
  bool outer_;
};

// How long a thread polls for the event it waits for before it sleeps on a
// condition variable: by default not at all. Polling saves a wake-up between
// a call's phases and between calls, but a polling thread holds its CPU, and
// where threads share CPUs (other programs, or a virtual machine that puts
// the pool's thread on the caller's CPU after an idle moment) it keeps that
// CPU from the very thread it waits for. On a 2-CPU virtual machine polling
// made short calls slower, never faster (docs/performance/journal.md, "The
// pool's spinning, measured"). A build can set it (ATTN_POOL_SPIN_US,
// cmake/threads.cmake) to measure it on other machines.
#ifndef ATTN_POOL_SPIN_US
#define ATTN_POOL_SPIN_US 0
#endif
constexpr auto kSpin = std::chrono::microseconds(ATTN_POOL_SPIN_US);

// How long they poll inside a KeepPoolAwake scope (a model's pass), where
// one parallel call follows another after microseconds of serial work; the
// limit bounds the CPU time spent polling when a caller's serial work inside
// the scope runs longer.
constexpr auto kAwakeSpin = std::chrono::microseconds(1000);

/// Polls `ready` for up to `spin`; true as soon as it holds.
template <class Ready>
bool spin_until(Ready ready, std::chrono::microseconds spin) {
  if (spin.count() == 0) return ready();
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    // The clock is read once per 64 polls: in wasm it is a call out to JS.
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
    }
    if (std::chrono::steady_clock::now() - start > spin) return false;
  }
}

// Threads, the caller included, that run the tasks of a call on `threads`
// threads: one pool thread more than the caller asked for. A woken thread
// goes where it last ran when that CPU is idle, or else queues behind the
// thread that woke it; once the pool's thread has run on the caller's CPU,
// the guest scheduler on a 2-vCPU virtual machine kept queueing it there, the
// other vCPU idle, for the whole of a call a few milliseconds long (measured
// with /proc/<pid>/task/*/schedstat: docs/performance/journal.md, "Short
// threaded calls: the pool's thread queued behind the caller"). With a second
// pool thread, the one that last ran on the other CPU is woken there, and
// tasks taken from one counter balance whichever threads do run. Every thread
// adds each element's steps in the same order, so the results do not change.
std::size_t slots_for(std::size_t threads) { return threads > 1 ? threads + 1 : 1; }

void run_here(std::size_t tasks, const detail::ParallelTask& task) {
  for (std::size_t t = 0; t < tasks; ++t) task(t, 0);
}

class ThreadPool {
 public:
  ~ThreadPool() { stop_workers(); }

  std::size_t threads() const { return threads_.load(); }

  void keep_awake(bool awake) { awake_scopes_ += awake ? 1 : -1; }

  void resize(std::size_t threads) {
    std::lock_guard<std::mutex> running(run_mutex_);
    stop_workers();
    threads_ = 1;
    try {
      // A new worker waits for the next call: the calls before it are done.
      const std::size_t seen = generation_;
      const std::size_t slots = slots_for(threads);
      for (std::size_t i = 1; i < slots; ++i) {
        const bool last = i + 1 == slots;
        workers_.emplace_back([this, i, seen, last] { work(i, seen, last); });
      }
    } catch (const std::system_error& e) {
      const std::size_t started = workers_.size() + 1;
      stop_workers();
      throw ResourceError("set_threads: could only start " + std::to_string(started) + " of " +
                          std::to_string(threads) + " threads (" + e.what() + ")");
    }
    threads_ = threads;
  }

  void run(std::size_t tasks, std::size_t slots, const detail::ParallelTask& task) {
    if (running_task || slots <= 1 || tasks <= 1) return run_here(tasks, task);
    std::unique_lock<std::mutex> running(run_mutex_, std::try_to_lock);
    if (!running || workers_.empty()) {
      if (running) running.unlock();  // a parallel call inside a task may then use the pool
      return run_here(tasks, task);
    }
    // Awake, the pool's last thread sits out: one thread per CPU asked for,
    // none of them sleeping, so none waits for a CPU behind a polling one.
    const bool awake = awake_scopes_.load() > 0;
    const std::size_t helpers = awake ? workers_.size() - 1 : workers_.size();
    {
      std::lock_guard<std::mutex> lock(state_mutex_);
      task_ = &task;
      tasks_ = tasks;
      slots_ = std::min(slots, helpers + 1);
      next_task_ = 0;
      error_ = nullptr;
      busy_ = helpers;
      helpers_ = helpers;
      ++generation_;
    }
    wake_.notify_all();
    if (!awake) wake_last_.notify_one();
    take_tasks(0);
    const auto all_done = [this] { return busy_.load() == 0; };
    std::unique_lock<std::mutex> lock(state_mutex_, std::defer_lock);
    if (!spin_until(all_done, awake ? kAwakeSpin : kSpin)) {
      lock.lock();
      done_.wait(lock, all_done);
    }
    task_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void stop_workers() {
    {
      std::lock_guard<std::mutex> lock(state_mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    wake_last_.notify_all();
    for (std::thread& worker : workers_) worker.join();
    workers_.clear();
    stop_ = false;
  }

  void work(std::size_t slot, std::size_t seen, bool last) {
    TaskScope scope;
    std::condition_variable& wake = last ? wake_last_ : wake_;
    for (;;) {
      {
        // A call for this thread: a new one that counts it among its helpers.
        const auto called = [&] {
          return stop_.load() || (generation_.load() != seen && slot <= helpers_.load());
        };
        const auto called_or_asleep = [&] { return called() || awake_scopes_.load() == 0; };
        if (awake_scopes_.load() > 0 && !last) spin_until(called_or_asleep, kAwakeSpin);
        spin_until(called, kSpin);
        std::unique_lock<std::mutex> lock(state_mutex_);
        wake.wait(lock, called);
        if (stop_) return;
        seen = generation_;
      }
      if (slot < slots_) take_tasks(slot);
      std::lock_guard<std::mutex> lock(state_mutex_);
      if (--busy_ == 0) done_.notify_one();
    }
  }

  void take_tasks(std::size_t slot) {
    TaskScope scope;
    for (std::size_t t = next_task_++; t < tasks_; t = next_task_++) {
      try {
        (*task_)(t, slot);
      } catch (...) {
        std::lock_guard<std::mutex> lock(state_mutex_);
        if (!error_) error_ = std::current_exception();
        next_task_ = tasks_;  // skip what has not started
      }
    }
  }

  std::mutex run_mutex_;  // held by the one call using the workers, and by resize
  std::mutex state_mutex_;
  // The last pool thread sleeps on its own: a call inside a KeepPoolAwake
  // scope leaves it asleep.
  std::condition_variable wake_, wake_last_, done_;
  std::vector<std::thread> workers_;
  std::atomic<std::size_t> threads_{1};
  // The current call, written under state_mutex_ before the workers wake.
  const detail::ParallelTask* task_ = nullptr;
  std::size_t tasks_ = 0, slots_ = 0;
  std::atomic<std::size_t> next_task_{0};
  std::exception_ptr error_;
  // Atomic because waiting threads poll them before they lock (spin_until);
  // they change only under state_mutex_.
  std::atomic<std::size_t> busy_{0}, generation_{0}, helpers_{0};
  std::atomic<bool> stop_{false};
  std::atomic<int> awake_scopes_{0};  // KeepPoolAwake scopes alive
};

ThreadPool& pool() {
  static ThreadPool instance;
  return instance;
}

}  // namespace

void set_threads(std::size_t threads) {
  const std::size_t limit = kCanStartThreads ? kMaxThreads : 1;
  if (threads < 1 || threads > limit) {
    throw Error("set_threads: threads is " + std::to_string(threads) + ", expected 1 to " +
                std::to_string(limit) + (kCanStartThreads ? "" : " (this build has no threads)"));
  }
  pool().resize(threads);
}

std::size_t thread_count() { return pool().threads(); }

std::size_t hardware_threads() {
  if (!kCanStartThreads) return 1;
  const unsigned n = std::thread::hardware_concurrency();
  return n ? n : 1;
}

namespace detail {

// Inside a task the pool is not asked (ThreadPool::run): nothing to keep awake.
KeepPoolAwake::KeepPoolAwake() : counted_(!running_task) {
  if (counted_) pool().keep_awake(true);
}

KeepPoolAwake::~KeepPoolAwake() {
  if (counted_) pool().keep_awake(false);
}

std::size_t parallel_slots() { return slots_for(pool().threads()); }

void parallel_for(std::size_t tasks, std::size_t slots, const ParallelTask& task) {
  pool().run(tasks, slots, task);
}

}  // namespace detail

}  // namespace attnscope
