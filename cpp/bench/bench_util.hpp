// Timing helpers shared by the benchmarks: median of repeated runs.
#pragma once

#include <time.h>

#include <algorithm>
#include <cstddef>
#include <random>
#include <vector>

namespace attnscope::bench {

/// CPU time of the calling thread, in milliseconds. The library runs on one
/// thread, so this equals wall time on an idle machine, and unlike wall time
/// it does not grow when other processes share the cores.
inline double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

/// Milliseconds (thread CPU time) taken by one call of f.
template <class F>
double time_ms(F&& f) {
  const double start = thread_cpu_ms();
  f();
  return thread_cpu_ms() - start;
}

struct Timing {
  double median_ms = 0.0;
  std::size_t reps = 0;
};

/// One warm-up call, then as many timed calls as fit in `budget_ms`
/// (at least `min_reps`, at most `max_reps`); returns their median. A warm-up
/// longer than a second is counted as a sample too: at that length the
/// first-call effects are noise, and it saves a long run.
template <class F>
Timing measure(F&& f, double budget_ms, std::size_t min_reps = 3, std::size_t max_reps = 50) {
  const double warmup = time_ms(f);
  const bool keep_warmup = warmup > 1000.0;
  std::size_t reps = warmup > 0.0 ? static_cast<std::size_t>(budget_ms / warmup) : max_reps;
  reps = std::clamp(reps, min_reps, max_reps);
  std::vector<double> samples(keep_warmup ? reps - 1 : reps);
  for (double& s : samples) s = time_ms(f);
  if (keep_warmup) samples.push_back(warmup);
  std::nth_element(samples.begin(), samples.begin() + reps / 2, samples.end());
  return {samples[reps / 2], reps};
}

inline std::vector<float> random_floats(std::size_t n, unsigned seed, float spread = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, spread);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

/// Keeps a result alive so the optimiser cannot drop the work.
inline volatile float g_sink = 0.0f;
inline void keep(float value) { g_sink = g_sink + value; }

}  // namespace attnscope::bench
