// Scaled dot-product attention by sequence length: fast path (tiled online
// softmax, no T×T) against the traced path (every intermediate kept).
#include <cstdio>
#include <vector>

#include "attnscope/attnscope.hpp"
#include "bench_util.hpp"

namespace attnscope::bench {

namespace {

constexpr std::size_t kHeads = 8;
constexpr std::size_t kHeadDim = 64;
// The traced path keeps 4 tensors of H·T² floats: 2 GB at T = 4096.
constexpr std::size_t kMaxTracedT = 2048;

Timing time_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal, bool trace,
                      std::size_t T) {
  AttentionOptions options;
  options.mask.causal = causal;
  options.trace = trace;
  // Fewer repetitions at large T keep the whole run within about two minutes.
  const double budget_ms = T >= 2048 ? 1.0 : 600.0;
  return measure(
      [&] {
        const AttentionResult r = attention(q, k, v, options);
        keep(r.output.data[0]);
      },
      budget_ms, 3, 30);
}

}  // namespace

void bench_attention(std::size_t max_t) {
  std::printf(
      "\nattention(q, k, v): B=1, H=%zu, d=%zu; GFLOP/s = 4*H*T^2*d / time "
      "(the same count for causal, which skips about half of it)\n",
      kHeads, kHeadDim);
  std::printf("  %6s %-7s %12s %9s %4s %12s %9s %4s %13s\n", "T", "mask", "fast ms", "GFLOP/s",
              "reps", "traced ms", "GFLOP/s", "reps", "traced/fast");
  for (std::size_t T = 64; T <= max_t; T *= 2) {
    const Shape shape{1, kHeads, T, kHeadDim};
    const std::size_t n = kHeads * T * kHeadDim;
    // Spread 0.5 keeps the softmax neither flat nor one-hot at d = 64.
    const Tensor q(shape, random_floats(n, 10, 0.5f));
    const Tensor k(shape, random_floats(n, 11, 0.5f));
    const Tensor v(shape, random_floats(n, 12));
    const double flop = 4.0 * kHeads * static_cast<double>(T) * T * kHeadDim;
    for (bool causal : {false, true}) {
      const Timing fast = time_attention(q, k, v, causal, false, T);
      std::printf("  %6zu %-7s %12.3f %9.2f %4zu", T, causal ? "causal" : "none", fast.median_ms,
                  flop / (fast.median_ms * 1e-3) * 1e-9, fast.reps);
      if (T <= kMaxTracedT) {
        const Timing traced = time_attention(q, k, v, causal, true, T);
        std::printf(" %12.3f %9.2f %4zu %13.2f\n", traced.median_ms,
                    flop / (traced.median_ms * 1e-3) * 1e-9, traced.reps,
                    traced.median_ms / fast.median_ms);
      } else {
        std::printf(" %12s %9s %4s %13s\n", "skipped", "-", "-", "-");
      }
      std::fflush(stdout);
    }
  }
  std::printf(
      "  (traced path skipped above T=%zu: its 4 x H x T^2 floats would need "
      "%.1f GB at T=4096)\n",
      kMaxTracedT, 4.0 * kHeads * 4096.0 * 4096.0 * 4.0 / 1e9);
}

void bench_block() {
  const std::size_t T = 256, C = 512, H = 8, hidden = 2048;
  std::printf("\ntransformer_block: T=%zu, C=%zu, H=%zu, hidden=%zu, GELU, pre-norm\n", T, C, H,
              hidden);
  BlockWeights w;
  const float s = 0.05f;
  w.attention.wq = Tensor({C, C}, random_floats(C * C, 20, s));
  w.attention.wk = Tensor({C, C}, random_floats(C * C, 21, s));
  w.attention.wv = Tensor({C, C}, random_floats(C * C, 22, s));
  w.attention.wo = Tensor({C, C}, random_floats(C * C, 23, s));
  w.attention.heads = H;
  w.ff1 = Linear{Tensor({C, hidden}, random_floats(C * hidden, 24, s)), Tensor()};
  w.ff2 = Linear{Tensor({hidden, C}, random_floats(hidden * C, 25, s)), Tensor()};
  w.activation = Activation::GELU;
  w.norm_first = true;
  const Tensor x({T, C}, random_floats(T * C, 26));
  for (bool trace : {false, true}) {
    AttentionOptions options;
    options.trace = trace;
    const Timing t = measure(
        [&] {
          const BlockResult r = transformer_block(x, w, options);
          keep(r.output.data[0]);
        },
        500.0, 3, 20);
    std::printf("  %-8s %10.3f ms (median of %zu)\n", trace ? "traced" : "fast", t.median_ms,
                t.reps);
  }
}

}  // namespace attnscope::bench
