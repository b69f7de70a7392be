// Modern attention variants on the fast path, each printed beside the plain
// case it should be compared with, as ratios from the same run:
// GQA against MHA, a decode step against the machine's memcpy bandwidth,
// a sliding window against full causal attention, RoPE and ALiBi against
// plain attention.
#include <cstdio>
#include <cstring>
#include <vector>

#include "attnscope/attnscope.hpp"
#include "bench_util.hpp"

namespace attnscope::bench {

namespace {

struct Inputs {
  Tensor q, k, v;
};

Inputs make_inputs(std::size_t H, std::size_t Hkv, std::size_t Tq, std::size_t Tk, std::size_t d,
                   unsigned seed) {
  // Spread 0.3 keeps the softmax neither flat nor one-hot at d = 64..128.
  return {Tensor({1, H, Tq, d}, random_floats(H * Tq * d, seed, 0.3f)),
          Tensor({1, Hkv, Tk, d}, random_floats(Hkv * Tk * d, seed + 1, 0.3f)),
          Tensor({1, Hkv, Tk, d}, random_floats(Hkv * Tk * d, seed + 2))};
}

Timing time_fast(const Inputs& in, AttentionOptions options, double budget_ms) {
  options.trace = false;
  return measure(
      [&] {
        const AttentionResult r = attention(in.q, in.k, in.v, options);
        keep(r.output.data[0]);
      },
      budget_ms, 3, 200);
}

AttentionOptions causal() {
  AttentionOptions o;
  o.mask.causal = true;
  return o;
}

// Bytes per microsecond that memcpy moves (counting the bytes read) on a
// buffer well past the last-level cache.
double memcpy_bytes_per_us() {
  const std::size_t n = std::size_t(256) << 20;
  std::vector<char> src(n, 1), dst(n, 0);
  const Timing t = measure(
      [&] {
        std::memcpy(dst.data(), src.data(), n);
        keep(float(dst[n / 2]));
      },
      1500.0, 3, 20);
  return double(n) / (t.median_ms * 1e3);
}

void bench_gqa(std::size_t max_t) {
  const std::size_t H = 32, Hkv = 8, d = 128;
  std::printf("\nGQA: H=%zu, Hkv=%zu, d=%zu, causal, fast path; per query head = time / H\n", H,
              Hkv, d);
  std::printf("  %6s %14s %14s %12s\n", "T", "MHA ms/head", "GQA ms/head", "MHA/GQA");
  for (std::size_t T = 1024; T <= max_t; T *= 2) {
    const Timing mha = time_fast(make_inputs(H, H, T, T, d, 1), causal(), 2000.0);
    const Timing gqa = time_fast(make_inputs(H, Hkv, T, T, d, 1), causal(), 2000.0);
    std::printf("  %6zu %14.3f %14.3f %12.2f\n", T, mha.median_ms / H, gqa.median_ms / H,
                mha.median_ms / gqa.median_ms);
    std::fflush(stdout);
  }
}

void bench_decode(double copy_rate) {
  const std::size_t H = 32, Hkv = 8, Tk = 4096, d = 128;
  std::printf("\nDecode step: Tq=1, Tk=%zu, H=%zu, d=%zu, causal, fast path\n", Tk, H, d);
  std::printf("  %-10s %10s %14s %16s\n", "kv heads", "us/step", "K+V MB", "bytes/us (%copy)");
  for (std::size_t kv : {Hkv, H}) {
    const Inputs in = make_inputs(H, kv, 1, Tk, d, 3);
    const Timing t = time_fast(in, causal(), 1500.0);
    const double bytes = 2.0 * double(kv) * Tk * d * sizeof(float);
    const double rate = bytes / (t.median_ms * 1e3);
    std::printf("  Hkv=%-6zu %10.1f %14.1f %10.0f (%3.0f%%)\n", kv, t.median_ms * 1e3, bytes / 1e6,
                rate, 100.0 * rate / copy_rate);
    std::fflush(stdout);
  }
}

void bench_window(std::size_t T) {
  const std::size_t H = 1, d = 64, W = 512;
  std::printf("\nSliding window: T=%zu, H=%zu, d=%zu, causal, fast path\n", T, H, d);
  const Inputs in = make_inputs(H, H, T, T, d, 5);
  const Timing full = time_fast(in, causal(), 1.0);
  AttentionOptions windowed = causal();
  windowed.mask.window = static_cast<std::int64_t>(W);
  const Timing win = time_fast(in, windowed, 500.0);
  std::printf("  full causal %10.1f ms, window W=%zu %8.1f ms, full/window %6.1fx\n",
              full.median_ms, W, win.median_ms, full.median_ms / win.median_ms);
}

void bench_position_terms() {
  const std::size_t H = 8, d = 64;
  std::printf("\nRoPE and ALiBi: H=%zu, d=%zu, causal, fast path (overhead over plain)\n", H, d);
  std::printf("  %6s %10s %10s %10s %8s %8s\n", "T", "plain ms", "rope ms", "alibi ms", "rope",
              "alibi");
  for (std::size_t T : {1024u, 2048u}) {
    const Inputs in = make_inputs(H, H, T, T, d, 7);
    AttentionOptions rope = causal(), alibi = causal();
    rope.rope.enabled = true;
    alibi.bias.alibi = true;
    const Timing plain = time_fast(in, causal(), 1500.0);
    const Timing r = time_fast(in, rope, 1500.0);
    const Timing a = time_fast(in, alibi, 1500.0);
    std::printf("  %6zu %10.2f %10.2f %10.2f %+7.1f%% %+7.1f%%\n", T, plain.median_ms, r.median_ms,
                a.median_ms, 100.0 * (r.median_ms / plain.median_ms - 1.0),
                100.0 * (a.median_ms / plain.median_ms - 1.0));
    std::fflush(stdout);
  }
}

}  // namespace

void bench_variants(std::size_t max_t, std::size_t window_t) {
  const double copy_rate = memcpy_bytes_per_us();
  std::printf("\nmemcpy of 256 MiB: %.0f bytes read per us\n", copy_rate);
  bench_decode(copy_rate);
  bench_position_terms();
  bench_window(window_t);
  bench_gqa(max_t);
}

}  // namespace attnscope::bench
