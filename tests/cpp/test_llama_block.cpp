// RMSNorm, SwiGLU and the Llama-style block (GQA, rope, window) against
// double-precision definitions.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "attnscope/attnscope.hpp"
#include "test_attention_reference.hpp"
#include "test_kernels_support.hpp"

using namespace attnscope;
using attnscope::testing::max_scaled_error;
using attnscope::testing::random_tensor;
using attnscope::testing::reference_self_attention;

namespace {

std::vector<double> reference_rms_norm(const std::vector<double>& x, std::size_t C,
                                       const Tensor& gamma, double eps) {
  std::vector<double> y(x.size());
  for (std::size_t r = 0; r < x.size() / C; ++r) {
    double ms = 0.0;
    for (std::size_t c = 0; c < C; ++c) ms += x[r * C + c] * x[r * C + c];
    ms /= double(C);
    for (std::size_t c = 0; c < C; ++c) {
      y[r * C + c] = x[r * C + c] / std::sqrt(ms + eps) * (gamma.empty() ? 1.0 : gamma.data[c]);
    }
  }
  return y;
}

std::vector<double> reference_linear(const std::vector<double>& x, std::size_t in,
                                     const Linear& l) {
  const std::size_t out = l.weight.shape[1];
  std::vector<double> y(x.size() / in * out);
  for (std::size_t r = 0; r < x.size() / in; ++r) {
    for (std::size_t o = 0; o < out; ++o) {
      double s = l.bias.empty() ? 0.0 : l.bias.data[o];
      for (std::size_t c = 0; c < in; ++c) s += x[r * in + c] * l.weight.data[c * out + o];
      y[r * out + o] = s;
    }
  }
  return y;
}

std::vector<double> reference_swiglu(const std::vector<double>& x, std::size_t C,
                                     const Linear& gate, const Linear& up, const Linear& down) {
  std::vector<double> g = reference_linear(x, C, gate);
  const std::vector<double> u = reference_linear(x, C, up);
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
  return reference_linear(g, gate.weight.shape[1], down);
}

std::vector<double> as_double(const std::vector<float>& x) { return {x.begin(), x.end()}; }

}  // namespace

TEST_CASE("rms_norm matches its definition, with and without gamma", "[block][llama]") {
  std::mt19937 rng(3);
  for (std::size_t C : {1u, 3u, 4u, 17u, 64u}) {
    const Tensor x = random_tensor(rng, {2, 5, C}, -3.0f, 3.0f);
    const Tensor gamma = random_tensor(rng, {C});
    for (const Tensor* g : {&gamma, static_cast<const Tensor*>(nullptr)}) {
      const Tensor no_gamma;
      const Tensor& used = g ? *g : no_gamma;
      const Tensor y = rms_norm(x, used, 1e-5f);
      CHECK(y.shape == x.shape);
      CHECK(max_scaled_error(y.data, reference_rms_norm(as_double(x.data), C, used, 1e-5), 1.0) <=
            1e-6);
    }
  }
  // Huge values: the sum of squares would overflow float.
  const Tensor huge({1, 4}, {3e30f, -3e30f, 1e30f, 0.0f});
  const Tensor y = rms_norm(huge, {});
  CHECK(max_scaled_error(y.data, reference_rms_norm(as_double(huge.data), 4, {}, 1e-6), 1.0) <=
        1e-6);
}

TEST_CASE("swiglu matches its definition", "[block][llama]") {
  std::mt19937 rng(4);
  const std::size_t C = 6, hidden = 10;
  const Tensor x = random_tensor(rng, {3, 4, C}, -4.0f, 4.0f);
  const Linear gate{random_tensor(rng, {C, hidden}), {}}, up{random_tensor(rng, {C, hidden}), {}};
  const Linear down{random_tensor(rng, {hidden, C}), random_tensor(rng, {C})};
  const Tensor y = swiglu(x, gate, up, down);
  CHECK(y.shape == x.shape);
  CHECK(max_scaled_error(y.data, reference_swiglu(as_double(x.data), C, gate, up, down), 1.0) <=
        1e-5);
}

TEST_CASE("rms_norm, swiglu and llama_block name bad arguments", "[block][llama][errors]") {
  using Catch::Matchers::Contains;
  const Tensor x({2, 4}, std::vector<float>(8, 0.5f));
  CHECK_THROWS_WITH(rms_norm(x, Tensor({3}, {1, 1, 1})),
                    Contains("rms_norm: gamma has shape (3,)"));
  CHECK_THROWS_WITH(rms_norm(x, {}, 0.0f), Contains("rms_norm: eps"));
  const Linear gate{Tensor({4, 3}, std::vector<float>(12, 0.1f)), {}};
  const Linear up{Tensor({4, 2}, std::vector<float>(8, 0.1f)), {}};
  const Linear down{Tensor({3, 4}, std::vector<float>(12, 0.1f)), {}};
  CHECK_THROWS_WITH(swiglu(x, gate, up, down), Contains("swiglu: up.weight has shape (4, 2)"));
  CHECK_NOTHROW(swiglu(x, gate, gate, down));
}

TEST_CASE("llama_block with GQA, rope and a window matches its definition", "[block][llama]") {
  std::mt19937 rng(5);
  const std::size_t B = 2, T = 19, C = 16, H = 4, Hkv = 2, d = 4, hidden = 24;
  LlamaBlockWeights w;
  w.attention.heads = H;
  w.attention.kv_heads = Hkv;
  w.attention.wq = random_tensor(rng, {C, H * d});
  w.attention.wk = random_tensor(rng, {C, Hkv * d});
  w.attention.wv = random_tensor(rng, {C, Hkv * d});
  w.attention.wo = random_tensor(rng, {H * d, C});
  w.attention_norm = random_tensor(rng, {C}, 0.5f, 1.5f);
  w.ffn_norm = random_tensor(rng, {C}, 0.5f, 1.5f);
  w.gate = {random_tensor(rng, {C, hidden}), {}};
  w.up = {random_tensor(rng, {C, hidden}), {}};
  w.down = {random_tensor(rng, {hidden, C}), {}};
  const Tensor x = random_tensor(rng, {B, T, C});
  for (bool trace : {true, false}) {
    AttentionOptions o;
    o.trace = trace;
    o.mask.causal = true;
    o.mask.window = 6;
    o.mask.sinks = 1;
    o.rope.enabled = true;
    const LlamaBlockResult r = llama_block(x, w, o);
    // The reference, step by step, each from the float input of the step
    // before, so that errors do not compound through the comparison.
    const auto norm1 = reference_rms_norm(as_double(x.data), C, w.attention_norm, 1e-6);
    CHECK(max_scaled_error(r.trace.attention_norm.data, norm1, 1.0) <= 1e-5);
    const std::vector<double> attn =
        reference_self_attention(r.trace.attention_norm.data, B, T, C, w.attention, o);
    CHECK(max_scaled_error(r.trace.attention.output.data, attn, 1.0) <= 1e-4);
    const auto norm2 =
        reference_rms_norm(as_double(r.trace.attention_residual.data), C, w.ffn_norm, 1e-6);
    CHECK(max_scaled_error(r.trace.ffn_norm.data, norm2, 1.0) <= 1e-5);
    const auto ffn = reference_swiglu(as_double(r.trace.ffn_norm.data), C, w.gate, w.up, w.down);
    CHECK(max_scaled_error(r.trace.ffn_output.data, ffn, 1.0) <= 1e-4);
    std::vector<double> out(ffn.size());
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = r.trace.attention_residual.data[i] + ffn[i];
    CHECK(max_scaled_error(r.output.data, out, 1.0) <= 1e-4);
    if (trace) {
      REQUIRE(r.trace.attention.trace);
      CHECK(r.trace.attention.trace->k.shape == Shape{B, Hkv, T, d});
      CHECK(r.trace.attention.trace->q_rotated.shape == Shape{B, H, T, d});
    }
  }
}

TEST_CASE("self_attention with kv_heads, rope, ALiBi and a window matches the reference",
          "[attention][heads][variants]") {
  using Catch::Matchers::Contains;
  std::mt19937 rng(6);
  const std::size_t B = 2, T = 33, C = 12, H = 6, d = 4;
  for (std::size_t Hkv : {1u, 2u, 3u, 6u}) {
    SelfAttentionWeights w;
    w.heads = H;
    w.kv_heads = Hkv;
    w.wq = random_tensor(rng, {C, H * d});
    w.wk = random_tensor(rng, {C, Hkv * d});
    w.wv = random_tensor(rng, {C, Hkv * 5});
    w.bk = random_tensor(rng, {Hkv * d});
    w.wo = random_tensor(rng, {H * 5, 7});
    const Tensor x = random_tensor(rng, {B, T, C});
    for (bool trace : {true, false}) {
      AttentionOptions o;
      o.trace = trace;
      o.mask.causal = true;
      o.mask.window = 9;
      o.rope.enabled = true;
      o.bias.alibi = true;
      const SelfAttentionResult r = self_attention(x, w, o);
      const std::vector<double> ref = reference_self_attention(x.data, B, T, C, w, o);
      INFO("Hkv = " << Hkv << ", trace = " << trace);
      CHECK(r.output.shape == Shape{B, T, 7});
      CHECK(max_scaled_error(r.output.data, ref, 1.0) <= 2e-5);
      if (trace) {
        CHECK(r.trace->v.shape == Shape{B, Hkv, T, 5});
        CHECK(r.trace->bias.shape == Shape{B, H, T, T});
      }
    }
  }
  SelfAttentionWeights w;
  w.heads = 4;
  w.kv_heads = 3;
  w.wq = random_tensor(rng, {C, 8});
  w.wk = random_tensor(rng, {C, 6});
  w.wv = random_tensor(rng, {C, 6});
  CHECK_THROWS_WITH(self_attention(random_tensor(rng, {T, C}), w),
                    Contains("self_attention: kv_heads is 3, expected a divisor of heads=4"));
  w.kv_heads = 2;
  CHECK_THROWS_WITH(
      self_attention(random_tensor(rng, {T, C}), w),
      Contains(
          "self_attention: wk has shape (12, 6), expected (12, 4) to match wq and kv_heads=2"));
}
