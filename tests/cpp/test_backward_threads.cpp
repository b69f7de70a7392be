// The attention backward (traced, flash, and flash from a saved forward) and
// LayerNorm's backward on 2 and 3 threads (set_threads) give one thread's
// bits: key/value heads, rows and column blocks are split, and each grouped
// key/value head sums its query heads in the same order.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "attnscope/backward.hpp"
#include "attnscope/threads.hpp"
#include "backward_layers.hpp"
#include "test_kernels_support.hpp"
#include "test_one_thread_after.hpp"

using namespace attnscope;

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)

using attnscope::testing::OneThreadAfter;
using attnscope::testing::same_bits;

namespace {

std::vector<float> randoms(std::mt19937& rng, std::size_t n) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(n);
  for (float& value : x) value = dist(rng);
  return x;
}

/// dq, dk and dv of every path, one after the other.
std::vector<float> backward_bits(const Tensor& q, const Tensor& k, const Tensor& v,
                                 const Tensor& d_out, AttentionOptions options) {
  std::vector<float> all;
  const auto add = [&](const AttentionGradients& g) {
    for (const Tensor* t : {&g.dq, &g.dk, &g.dv})
      all.insert(all.end(), t->data.begin(), t->data.end());
  };
  options.trace = true;
  add(attention_backward(q, k, v, d_out, options));
  options.trace = false;
  add(attention_backward(q, k, v, d_out, options));
  const AttentionResult forward = attention_with_log_sum_exp(q, k, v, options);
  add(attention_backward(q, k, v, d_out, {forward.output, forward.log_sum_exp}, options));
  return all;
}

}  // namespace

TEST_CASE("attention_backward on 2 and 3 threads gives one thread's bits", "[threads][backward]") {
  OneThreadAfter restore;
  std::mt19937 rng(5);
  const std::size_t B = 2, H = 6, Tq = 70, Tk = 90, d = 8;
  for (std::size_t Hkv : {6, 3, 1}) {
    const Tensor q({B, H, Tq, d}, randoms(rng, B * H * Tq * d));
    const Tensor k({B, Hkv, Tk, d}, randoms(rng, B * Hkv * Tk * d));
    const Tensor v({B, Hkv, Tk, d}, randoms(rng, B * Hkv * Tk * d));
    const Tensor d_out({B, H, Tq, d}, randoms(rng, B * H * Tq * d));
    AttentionOptions options;
    options.mask.causal = true;
    options.mask.lengths = {Tk, 50};
    options.bias.alibi = Hkv == 3;
    options.rope.enabled = Hkv == 1;
    set_threads(1);
    const std::vector<float> single = backward_bits(q, k, v, d_out, options);
    for (std::size_t threads : {2, 3}) {
      INFO("Hkv=" << Hkv << ", " << threads << " threads");
      set_threads(threads);
      CHECK(same_bits(backward_bits(q, k, v, d_out, options), single));
    }
  }
}

TEST_CASE("layer_norm_backward on 2 and 3 threads gives one thread's bits", "[threads][backward]") {
  OneThreadAfter restore;
  std::mt19937 rng(6);
  const std::size_t rows = 300, n = 200;  // n: three 64-column blocks and a tail
  const std::vector<float> x = randoms(rng, rows * n), gamma = randoms(rng, n),
                           dy = randoms(rng, rows * n), dx0 = randoms(rng, rows * n),
                           dgamma0 = randoms(rng, n), dbeta0 = randoms(rng, n);
  const auto run = [&] {
    std::vector<float> dx = dx0, dgamma = dgamma0, dbeta = dbeta0;
    detail::layer_norm_backward(x.data(), gamma.data(), dy.data(), rows, n, 1e-5f, dx.data(),
                                dgamma.data(), dbeta.data());
    dx.insert(dx.end(), dgamma.begin(), dgamma.end());
    dx.insert(dx.end(), dbeta.begin(), dbeta.end());
    return dx;
  };
  set_threads(1);
  const std::vector<float> single = run();
  for (std::size_t threads : {2, 3}) {
    INFO(threads << " threads");
    set_threads(threads);
    CHECK(same_bits(run(), single));
  }
}

#endif
