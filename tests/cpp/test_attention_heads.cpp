// Multi-head self-attention: projections, head split, concat and W_O
// against a double-precision reference; equivariance under permutation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>

#include "attnscope/attention.hpp"
#include "test_attention_reference.hpp"
#include "test_kernels_support.hpp"

using namespace attnscope;
using attnscope::testing::max_scaled_error;
using attnscope::testing::random_tensor;
using attnscope::testing::reference_self_attention;
using attnscope::testing::ReferenceResult;

namespace {

SelfAttentionWeights random_weights(std::mt19937& rng, std::size_t C, std::size_t H,
                                    std::size_t d_k, std::size_t d_v, std::size_t c_out,
                                    bool biases, bool output_projection) {
  SelfAttentionWeights w;
  w.heads = H;
  w.wq = random_tensor(rng, {C, H * d_k});
  w.wk = random_tensor(rng, {C, H * d_k});
  w.wv = random_tensor(rng, {C, H * d_v});
  if (biases) {
    w.bq = random_tensor(rng, {H * d_k});
    w.bk = random_tensor(rng, {H * d_k});
    w.bv = random_tensor(rng, {H * d_v});
  }
  if (output_projection) {
    w.wo = random_tensor(rng, {H * d_v, c_out});
    if (biases) w.bo = random_tensor(rng, {c_out});
  }
  return w;
}

}  // namespace

TEST_CASE("self_attention with W_O matches the double reference", "[attention][heads]") {
  std::mt19937 rng(51);
  struct Case {
    std::size_t B, T, C, H, d_k, d_v, c_out;
    bool biases, wo, causal;
  };
  const Case cases[] = {
      {1, 1, 1, 1, 1, 1, 1, false, false, false},    {2, 8, 32, 2, 16, 16, 32, true, true, false},
      {6, 8, 32, 1, 16, 16, 32, false, false, true}, {3, 17, 12, 3, 4, 5, 7, true, true, true},
      {2, 70, 16, 4, 8, 3, 16, true, true, false},   {1, 9, 10, 5, 2, 6, 1, false, true, true}};
  for (const Case& c : cases) {
    const SelfAttentionWeights w =
        random_weights(rng, c.C, c.H, c.d_k, c.d_v, c.c_out, c.biases, c.wo);
    const Tensor x = random_tensor(rng, {c.B, c.T, c.C});
    for (bool trace : {true, false}) {
      AttentionOptions o;
      o.mask.causal = c.causal;
      o.trace = trace;
      const SelfAttentionResult r = self_attention(x, w, o);
      ReferenceResult heads;
      const std::vector<double> ref = reference_self_attention(x.data, c.B, c.T, c.C, w, o, &heads);
      const std::size_t width = c.wo ? c.c_out : c.H * c.d_v;
      INFO("B=" << c.B << " T=" << c.T << " C=" << c.C << " H=" << c.H << " trace=" << trace);
      CHECK(r.output.shape == Shape{c.B, c.T, width});
      double magnitude = 0.0;
      for (double y : ref) magnitude = std::max(magnitude, std::abs(y));
      CHECK(max_scaled_error(r.output.data, ref, std::max(magnitude, 1.0)) <= 1e-5);
      CHECK(r.fully_masked_count == 0);
      CHECK(r.trace.has_value() == trace);
      if (!trace) continue;
      const SelfAttentionTrace& t = *r.trace;
      CHECK(t.q.shape == Shape{c.B, c.H, c.T, c.d_k});
      CHECK(t.k.shape == Shape{c.B, c.H, c.T, c.d_k});
      CHECK(t.v.shape == Shape{c.B, c.H, c.T, c.d_v});
      CHECK(t.weights.shape == Shape{c.B, c.H, c.T, c.T});
      CHECK(t.head_outputs.shape == Shape{c.B, c.H, c.T, c.d_v});
      CHECK(t.concat.shape == Shape{c.B, c.T, c.H * c.d_v});
      CHECK(max_scaled_error(t.weights.data, heads.weights, 1e-6) <= 1e-5);
      double hm = 1.0;
      for (double y : heads.output) hm = std::max(hm, std::abs(y));
      CHECK(max_scaled_error(t.head_outputs.data, heads.output, hm) <= 1e-5);
      // concat puts head h in columns [h·d_v, (h+1)·d_v).
      for (std::size_t b = 0; b < c.B; ++b)
        for (std::size_t h = 0; h < c.H; ++h)
          for (std::size_t tt = 0; tt < c.T; ++tt)
            for (std::size_t e = 0; e < c.d_v; ++e)
              REQUIRE(t.concat.data[(b * c.T + tt) * c.H * c.d_v + h * c.d_v + e] ==
                      t.head_outputs.data[((b * c.H + h) * c.T + tt) * c.d_v + e]);
    }
  }
}

TEST_CASE("self_attention on one sequence (T, C) drops the batch dimension", "[attention][heads]") {
  std::mt19937 rng(52);
  const SelfAttentionWeights w = random_weights(rng, 6, 2, 3, 4, 5, true, true);
  const Tensor x = random_tensor(rng, {7, 6});
  const Tensor xb({1, 7, 6}, x.data);
  const SelfAttentionResult single = self_attention(x, w), batched = self_attention(xb, w);
  CHECK(single.output.shape == Shape{7, 5});
  CHECK(single.output.data == batched.output.data);
  CHECK(single.trace->q.shape == Shape{2, 7, 3});
  CHECK(single.trace->weights.shape == Shape{2, 7, 7});
  CHECK(single.trace->concat.shape == Shape{7, 8});
  CHECK(single.fully_masked.size() == 2 * 7);
}

TEST_CASE("self_attention without masks is permutation equivariant", "[attention][heads]") {
  std::mt19937 rng(53);
  const std::size_t T = 13, C = 8;
  const SelfAttentionWeights w = random_weights(rng, C, 2, 4, 4, C, true, true);
  const Tensor x = random_tensor(rng, {T, C});
  std::vector<std::size_t> perm(T);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  Tensor xp = x;
  for (std::size_t t = 0; t < T; ++t) {
    std::copy(x.data.begin() + perm[t] * C, x.data.begin() + (perm[t] + 1) * C,
              xp.data.begin() + t * C);
  }
  for (bool trace : {true, false}) {
    AttentionOptions o;
    o.trace = trace;
    const SelfAttentionResult a = self_attention(x, w, o), b = self_attention(xp, w, o);
    std::vector<float> permuted(a.output.size());
    for (std::size_t t = 0; t < T; ++t) {
      std::copy(a.output.data.begin() + perm[t] * C, a.output.data.begin() + (perm[t] + 1) * C,
                permuted.begin() + t * C);
    }
    INFO("trace = " << trace);
    CHECK(max_scaled_error(b.output.data, permuted, 1.0) <= 1e-5);
  }
}
