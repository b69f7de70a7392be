// Transformer-block parts against double-precision references written here,
// at lengths below, at, around and well past the SIMD width.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "attnscope/attnscope.hpp"
#include "kernels/activation.hpp"
#include "kernels/layer_norm.hpp"
#include "test_attention_reference.hpp"
#include "test_kernels_support.hpp"

using attnscope::Activation;
using attnscope::Linear;
using attnscope::Shape;
using attnscope::Tensor;
using attnscope::testing::random_floats;
using attnscope::testing::random_tensor;

namespace {

using Arch = xsimd::default_arch;

// 1..67 covers below / at / just above one and several SIMD widths (4, 8, 16).
std::vector<std::size_t> test_lengths() {
  std::vector<std::size_t> n;
  for (std::size_t i = 1; i <= 67; ++i) n.push_back(i);
  for (std::size_t i : {96u, 128u, 255u, 1000u}) n.push_back(i);
  return n;
}

// The block tests draw values in [-2, 2) unless they say otherwise.
constexpr float kLo = -2.0f, kHi = 2.0f;

// x (rows, in) · W (in, out) + b in double.
std::vector<double> linear_ref(const std::vector<double>& x, std::size_t rows, std::size_t in,
                               const Tensor& w, const Tensor& b) {
  const std::size_t out = w.shape[1];
  std::vector<double> y(rows * out);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t j = 0; j < out; ++j) {
      double acc = b.empty() ? 0.0 : b.data[j];
      for (std::size_t i = 0; i < in; ++i) acc += x[r * in + i] * w.data[i * out + j];
      y[r * out + j] = acc;
    }
  }
  return y;
}

std::vector<double> layer_norm_ref(const std::vector<double>& x, std::size_t C, const Tensor& gamma,
                                   const Tensor& beta, double eps) {
  std::vector<double> y(x.size());
  for (std::size_t r = 0; r < x.size() / C; ++r) {
    double mean = 0.0, var = 0.0;
    for (std::size_t c = 0; c < C; ++c) mean += x[r * C + c];
    mean /= C;
    for (std::size_t c = 0; c < C; ++c) var += (x[r * C + c] - mean) * (x[r * C + c] - mean);
    var /= C;
    for (std::size_t c = 0; c < C; ++c) {
      const double g = gamma.empty() ? 1.0 : gamma.data[c];
      const double b = beta.empty() ? 0.0 : beta.data[c];
      y[r * C + c] = (x[r * C + c] - mean) / std::sqrt(var + eps) * g + b;
    }
  }
  return y;
}

std::vector<double> to_double(const Tensor& t) {
  return std::vector<double>(t.data.begin(), t.data.end());
}

void check_close(const Tensor& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("index " << i);
    CHECK(got.data[i] == Approx(want[i]).margin(tol));
  }
}

}  // namespace

TEST_CASE("layer_norm kernel matches its double reference", "[block][layer_norm]") {
  std::mt19937 rng(7);
  for (std::size_t n : test_lengths()) {
    // A large offset checks the two-pass variance (no E[x²]−E[x]² cancellation).
    for (float offset : {0.0f, 50.0f}) {
      std::vector<float> x = random_floats(rng, n, offset - 1.5f, offset + 1.5f);
      std::vector<float> gamma = random_floats(rng, n, 0.5f, 1.5f);
      std::vector<float> beta = random_floats(rng, n, kLo, kHi);
      std::vector<float> got(n), want(n);
      attnscope::kernels::layer_norm_row<Arch>(x.data(), gamma.data(), beta.data(), 1e-5f,
                                               got.data(), n);
      attnscope::kernels::layer_norm_row_reference(x.data(), gamma.data(), beta.data(), 1e-5f,
                                                   want.data(), n);
      INFO("n = " << n << ", offset = " << offset);
      const double tol = offset == 0.0f ? 2e-5 : 3e-4;
      for (std::size_t i = 0; i < n; ++i) CHECK(got[i] == Approx(want[i]).margin(tol));
    }
  }
}

TEST_CASE("layer_norm with gamma=1, beta=0 gives mean 0 and variance 1", "[block][layer_norm]") {
  std::mt19937 rng(11);
  for (std::size_t C : test_lengths()) {
    if (C < 2) continue;
    const Tensor x = random_tensor(rng, {3, C}, -4.0f, 4.0f);
    const Tensor y = attnscope::layer_norm(x, Tensor(), Tensor(), 1e-5f);
    REQUIRE(y.shape == x.shape);
    for (std::size_t r = 0; r < 3; ++r) {
      double mean = 0.0, var = 0.0, x_mean = 0.0, x_var = 0.0;
      for (std::size_t c = 0; c < C; ++c) {
        mean += y.data[r * C + c];
        x_mean += x.data[r * C + c];
      }
      mean /= C;
      x_mean /= C;
      for (std::size_t c = 0; c < C; ++c) {
        var += (y.data[r * C + c] - mean) * (y.data[r * C + c] - mean);
        x_var += (x.data[r * C + c] - x_mean) * (x.data[r * C + c] - x_mean);
      }
      var /= C;
      x_var /= C;
      INFO("C = " << C << ", row " << r);
      CHECK(mean == Approx(0.0).margin(1e-6));
      // eps shrinks the variance slightly: var = σ² / (σ² + eps).
      CHECK(var == Approx(x_var / (x_var + 1e-5)).epsilon(1e-5));
    }
  }
}

TEST_CASE("layer_norm of a single feature is beta", "[block][layer_norm]") {
  const Tensor x({2, 1}, {3.0f, -7.0f});
  const Tensor beta({1}, {0.25f});
  const Tensor y = attnscope::layer_norm(x, Tensor({1}, {2.0f}), beta);
  CHECK(y.data[0] == 0.25f);
  CHECK(y.data[1] == 0.25f);
}

TEST_CASE("layer_norm with gamma, beta and eps matches the reference, any rank",
          "[block][layer_norm]") {
  std::mt19937 rng(13);
  for (std::size_t C : {1u, 3u, 4u, 5u, 8u, 17u, 64u, 67u}) {
    for (float eps : {1e-5f, 1e-2f, 1.0f}) {
      const Tensor x = random_tensor(rng, {2, 3, C}, kLo, kHi);
      const Tensor gamma = random_tensor(rng, {C}, kLo, kHi);
      const Tensor beta = random_tensor(rng, {C}, kLo, kHi);
      INFO("C = " << C << ", eps = " << eps);
      check_close(attnscope::layer_norm(x, gamma, beta, eps),
                  layer_norm_ref(to_double(x), C, gamma, beta, eps), 3e-5);
    }
  }
  // rank 1: a single vector.
  const Tensor v({4}, {1.0f, 2.0f, 3.0f, 4.0f});
  check_close(attnscope::layer_norm(v, Tensor(), Tensor(), 0.0001f),
              layer_norm_ref(to_double(v), 4, Tensor(), Tensor(), 0.0001), 1e-6);
}

TEST_CASE("positional_encoding: sin on even, cos on odd columns, base 10000",
          "[block][positional]") {
  SECTION("known values") {
    const Tensor pe = attnscope::positional_encoding(3, 4);
    REQUIRE(pe.shape == Shape{3, 4});
    // t = 0: sin(0) = 0, cos(0) = 1.
    CHECK(pe.data[0] == 0.0f);
    CHECK(pe.data[1] == 1.0f);
    CHECK(pe.data[2] == 0.0f);
    CHECK(pe.data[3] == 1.0f);
    // t = 1: column pair 0 has frequency 1, pair 1 has 1/10000^(2/4) = 1/100.
    CHECK(pe.data[4] == Approx(std::sin(1.0)).margin(1e-7));
    CHECK(pe.data[5] == Approx(std::cos(1.0)).margin(1e-7));
    CHECK(pe.data[6] == Approx(std::sin(0.01)).margin(1e-7));
    CHECK(pe.data[7] == Approx(std::cos(0.01)).margin(1e-7));
    CHECK(pe.data[8] == Approx(std::sin(2.0)).margin(1e-7));
    CHECK(pe.data[11] == Approx(std::cos(0.02)).margin(1e-7));
  }
  SECTION("every position against the formula, odd and even widths") {
    for (std::size_t C : {1u, 2u, 3u, 5u, 8u, 33u, 64u, 512u}) {
      for (double base : {10000.0, 100.0}) {
        const std::size_t T = 300;
        const Tensor pe = attnscope::positional_encoding(T, C, static_cast<float>(base));
        REQUIRE(pe.shape == Shape{T, C});
        for (std::size_t t = 0; t < T; ++t) {
          for (std::size_t c = 0; c < C; ++c) {
            const double angle = t / std::pow(base, static_cast<double>(c - c % 2) / C);
            const double want = c % 2 == 0 ? std::sin(angle) : std::cos(angle);
            INFO("C = " << C << ", t = " << t << ", c = " << c);
            REQUIRE(pe.data[t * C + c] == Approx(want).margin(1e-6));
          }
        }
      }
    }
  }
  SECTION("far positions stay accurate") {
    const Tensor pe = attnscope::positional_encoding(4097, 2);
    CHECK(pe.data[4096 * 2] == Approx(std::sin(4096.0)).margin(1e-6));
    CHECK(pe.data[4096 * 2 + 1] == Approx(std::cos(4096.0)).margin(1e-6));
  }
}

TEST_CASE("add_positional_encoding adds the same encoding to every sequence",
          "[block][positional]") {
  std::mt19937 rng(17);
  const Tensor pe = attnscope::positional_encoding(5, 6);
  const Tensor x2 = random_tensor(rng, {5, 6}, kLo, kHi);
  const Tensor y2 = attnscope::add_positional_encoding(x2);
  REQUIRE(y2.shape == x2.shape);
  for (std::size_t i = 0; i < 30; ++i) CHECK(y2.data[i] == x2.data[i] + pe.data[i]);

  const Tensor x3 = random_tensor(rng, {3, 5, 6}, kLo, kHi);
  const Tensor y3 = attnscope::add_positional_encoding(x3);
  REQUIRE(y3.shape == x3.shape);
  for (std::size_t i = 0; i < 90; ++i) CHECK(y3.data[i] == x3.data[i] + pe.data[i % 30]);
}

TEST_CASE("residual_add is element-wise a + b", "[block][residual]") {
  std::mt19937 rng(19);
  for (std::size_t n : test_lengths()) {
    const Tensor a = random_tensor(rng, {2, n}, kLo, kHi);
    const Tensor b = random_tensor(rng, {2, n}, kLo, kHi);
    const Tensor y = attnscope::residual_add(a, b);
    REQUIRE(y.shape == a.shape);
    for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(y.data[i] == a.data[i] + b.data[i]);
  }
}

TEST_CASE("linear() matches the double reference", "[block][linear]") {
  std::mt19937 rng(23);
  for (std::size_t in : {1u, 2u, 3u, 4u, 5u, 7u, 16u, 33u, 67u}) {
    for (std::size_t out : {1u, 3u, 4u, 5u, 8u, 9u, 31u, 64u, 67u}) {
      const Tensor w = random_tensor(rng, {in, out}, kLo, kHi);
      const Tensor b = random_tensor(rng, {out}, kLo, kHi);
      // 7 rows: one 4-row tile of the matmul and a remainder of 3.
      const Tensor x = random_tensor(rng, {7, 1, in}, kLo, kHi);
      INFO("in = " << in << ", out = " << out);
      const double tol = 1e-5 * (1.0 + in);
      check_close(attnscope::linear(x, Linear{w, b}), linear_ref(to_double(x), 7, in, w, b), tol);
      check_close(attnscope::linear(x, Linear{w, Tensor()}),
                  linear_ref(to_double(x), 7, in, w, Tensor()), tol);
    }
  }
  // rank 1 input gives rank 1 output.
  const Tensor y = attnscope::linear(
      Tensor({2}, {1.0f, 2.0f}),
      Linear{Tensor({2, 3}, {1, 2, 3, 4, 5, 6}), Tensor({3}, {0.5f, 0.0f, -1.0f})});
  CHECK(y.shape == Shape{3});
  CHECK(y.data == std::vector<float>{9.5f, 12.0f, 14.0f});
}

TEST_CASE("GELU is exact (erf), ReLU clamps at zero", "[block][activation]") {
  // Φ(1) = 0.841344746068543, Φ(-1) = 0.158655253931457, Φ(3) = 0.998650101968370.
  std::vector<float> v{0.0f, 1.0f, -1.0f, 3.0f, -3.0f};
  attnscope::kernels::gelu<Arch>(v.data(), v.size());
  CHECK(v[0] == 0.0f);
  CHECK(v[1] == Approx(0.841344746068543).margin(1e-6));
  CHECK(v[2] == Approx(-0.158655253931457).margin(1e-6));
  CHECK(v[3] == Approx(3 * 0.998650101968370).margin(1e-6));
  CHECK(v[4] == Approx(-3 * (1 - 0.998650101968370)).margin(1e-6));
  // Not the tanh approximation, which gives 0.841191990607 at x = 1.
  CHECK(std::abs(v[1] - 0.841191990607) > 1e-4);

  std::mt19937 rng(29);
  for (std::size_t n : test_lengths()) {
    const std::vector<float> x = random_floats(rng, n, -6.0f, 6.0f);
    std::vector<float> gelu = x, relu = x;
    attnscope::kernels::gelu<Arch>(gelu.data(), n);
    attnscope::kernels::relu<Arch>(relu.data(), n);
    INFO("n = " << n);
    for (std::size_t i = 0; i < n; ++i) {
      CHECK(gelu[i] == Approx(attnscope::kernels::gelu_reference(x[i])).margin(2e-6));
      CHECK(relu[i] == attnscope::kernels::relu_reference(x[i]));
    }
  }
}

TEST_CASE("feed_forward is Linear → activation → Linear", "[block][feed_forward]") {
  std::mt19937 rng(31);
  for (Activation act : {Activation::ReLU, Activation::GELU}) {
    for (std::size_t C : {1u, 4u, 6u, 17u}) {
      for (std::size_t hidden : {1u, 5u, 8u, 67u}) {
        const Tensor x = random_tensor(rng, {2, 3, C}, kLo, kHi);
        const Linear first{random_tensor(rng, {C, hidden}, kLo, kHi),
                           random_tensor(rng, {hidden}, kLo, kHi)};
        const Linear second{random_tensor(rng, {hidden, C}, kLo, kHi),
                            random_tensor(rng, {C}, kLo, kHi)};
        std::vector<double> h = linear_ref(to_double(x), 6, C, first.weight, first.bias);
        for (double& v : h) {
          v = act == Activation::ReLU ? attnscope::kernels::relu_reference(v)
                                      : attnscope::kernels::gelu_reference(v);
        }
        INFO("C = " << C << ", hidden = " << hidden);
        check_close(attnscope::feed_forward(x, first, second, act),
                    linear_ref(h, 6, hidden, second.weight, second.bias), 2e-5 * (C + hidden));
      }
    }
  }
}

namespace {

// Multi-head self-attention with W_O in double, as described in attention.hpp.
std::vector<double> self_attention_ref(const std::vector<double>& x, std::size_t B, std::size_t T,
                                       std::size_t C, const attnscope::SelfAttentionWeights& w) {
  const std::size_t H = w.heads;
  const std::size_t dk = w.wq.shape[1] / H, dv = w.wv.shape[1] / H;
  const std::vector<double> q = linear_ref(x, B * T, C, w.wq, w.bq);
  const std::vector<double> k = linear_ref(x, B * T, C, w.wk, w.bk);
  const std::vector<double> v = linear_ref(x, B * T, C, w.wv, w.bv);
  std::vector<double> concat(B * T * H * dv, 0.0);
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t h = 0; h < H; ++h) {
      for (std::size_t i = 0; i < T; ++i) {
        std::vector<double> s(T);
        double mx = -1e300, sum = 0.0;
        for (std::size_t j = 0; j < T; ++j) {
          double dot = 0.0;
          for (std::size_t e = 0; e < dk; ++e) {
            dot += q[(b * T + i) * H * dk + h * dk + e] * k[(b * T + j) * H * dk + h * dk + e];
          }
          s[j] = dot / std::sqrt(static_cast<double>(dk));
          mx = std::max(mx, s[j]);
        }
        for (double& sj : s) sum += (sj = std::exp(sj - mx));
        for (std::size_t j = 0; j < T; ++j) {
          for (std::size_t e = 0; e < dv; ++e) {
            concat[(b * T + i) * H * dv + h * dv + e] +=
                s[j] / sum * v[(b * T + j) * H * dv + h * dv + e];
          }
        }
      }
    }
  }
  return linear_ref(concat, B * T, H * dv, w.wo, w.bo);
}

std::vector<double> add(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> y(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) y[i] = a[i] + b[i];
  return y;
}

attnscope::BlockWeights random_block(std::size_t C, std::size_t H, std::size_t hidden,
                                     std::mt19937& rng) {
  attnscope::BlockWeights w;
  const std::size_t d = 4;
  w.attention.wq = random_tensor(rng, {C, H * d}, -0.5f, 0.5f);
  w.attention.wk = random_tensor(rng, {C, H * d}, -0.5f, 0.5f);
  w.attention.wv = random_tensor(rng, {C, H * d}, -0.5f, 0.5f);
  w.attention.bq = random_tensor(rng, {H * d}, -0.5f, 0.5f);
  w.attention.wo = random_tensor(rng, {H * d, C}, -0.5f, 0.5f);
  w.attention.bo = random_tensor(rng, {C}, -0.5f, 0.5f);
  w.attention.heads = H;
  w.norm1_gamma = random_tensor(rng, {C}, 0.5f, 1.5f);
  w.norm1_beta = random_tensor(rng, {C}, -0.5f, 0.5f);
  w.norm2_gamma = random_tensor(rng, {C}, 0.5f, 1.5f);
  w.norm2_beta = random_tensor(rng, {C}, -0.5f, 0.5f);
  w.ff1 =
      Linear{random_tensor(rng, {C, hidden}, -0.5f, 0.5f), random_tensor(rng, {hidden}, kLo, kHi)};
  w.ff2 = Linear{random_tensor(rng, {hidden, C}, -0.5f, 0.5f), random_tensor(rng, {C}, kLo, kHi)};
  return w;
}

}  // namespace

TEST_CASE("transformer_block composes the parts, pre-norm and post-norm",
          "[block][transformer_block]") {
  std::mt19937 rng(37);
  const std::size_t B = 2, T = 5, C = 8, H = 2, hidden = 16;
  const Tensor x = random_tensor(rng, {B, T, C}, kLo, kHi);
  attnscope::BlockWeights w = random_block(C, H, hidden, rng);
  const std::vector<double> xd = to_double(x);
  const double eps = w.eps;

  for (Activation act : {Activation::ReLU, Activation::GELU}) {
    w.activation = act;
    auto ff = [&](const std::vector<double>& in) {
      std::vector<double> h = linear_ref(in, B * T, C, w.ff1.weight, w.ff1.bias);
      for (double& v : h) {
        v = act == Activation::ReLU ? attnscope::kernels::relu_reference(v)
                                    : attnscope::kernels::gelu_reference(v);
      }
      return linear_ref(h, B * T, hidden, w.ff2.weight, w.ff2.bias);
    };

    SECTION("pre-norm: x + Attn(LN(x)), then h + FF(LN(h))") {
      w.norm_first = true;
      const auto n1 = layer_norm_ref(xd, C, w.norm1_gamma, w.norm1_beta, eps);
      const auto h = add(xd, self_attention_ref(n1, B, T, C, w.attention));
      const auto n2 = layer_norm_ref(h, C, w.norm2_gamma, w.norm2_beta, eps);
      const auto want = add(h, ff(n2));
      const attnscope::BlockResult r = attnscope::transformer_block(x, w);
      REQUIRE(r.output.shape == x.shape);
      check_close(r.output, want, 2e-4);
      check_close(r.trace.norm1, n1, 2e-4);
      check_close(r.trace.attention_residual, h, 2e-4);
      check_close(r.trace.norm2, n2, 2e-4);
      check_close(r.trace.ff_residual, want, 2e-4);
      CHECK(r.trace.ff_hidden.shape == Shape{B, T, hidden});
      CHECK(r.trace.ff_output.shape == Shape{B, T, C});
      CHECK(r.trace.attention.trace.has_value());
    }
    SECTION("post-norm: LN(x + Attn(x)), then LN(h + FF(h))") {
      w.norm_first = false;
      const auto r1 = add(xd, self_attention_ref(xd, B, T, C, w.attention));
      const auto h = layer_norm_ref(r1, C, w.norm1_gamma, w.norm1_beta, eps);
      const auto r2 = add(h, ff(h));
      const auto want = layer_norm_ref(r2, C, w.norm2_gamma, w.norm2_beta, eps);
      const attnscope::BlockResult r = attnscope::transformer_block(x, w);
      REQUIRE(r.output.shape == x.shape);
      check_close(r.output, want, 2e-4);
      check_close(r.trace.attention_residual, r1, 2e-4);
      check_close(r.trace.norm1, h, 2e-4);
      check_close(r.trace.ff_residual, r2, 2e-4);
      check_close(r.trace.norm2, want, 2e-4);
    }
  }
}

TEST_CASE("transformer_block: trace fields agree, fast path equals traced path",
          "[block][transformer_block]") {
  std::mt19937 rng(41);
  const std::size_t T = 7, C = 12, H = 3, hidden = 20;
  const Tensor x = random_tensor(rng, {T, C}, kLo, kHi);  // one sequence, rank 2
  attnscope::BlockWeights w = random_block(C, H, hidden, rng);
  for (bool norm_first : {false, true}) {
    w.norm_first = norm_first;
    attnscope::AttentionOptions traced;
    traced.mask.causal = true;
    attnscope::AttentionOptions fast = traced;
    fast.trace = false;
    const attnscope::BlockResult a = attnscope::transformer_block(x, w, traced);
    const attnscope::BlockResult b = attnscope::transformer_block(x, w, fast);
    INFO("norm_first = " << norm_first);
    REQUIRE(a.output.shape == Shape{T, C});
    CHECK(a.trace.attention.trace.has_value());
    CHECK_FALSE(b.trace.attention.trace.has_value());
    check_close(b.output, to_double(a.output), 1e-5);
    // The recorded intermediates are the ones the output was built from.
    const Tensor res = attnscope::residual_add(x, a.trace.attention.output);
    check_close(a.trace.attention_residual, to_double(res), 0.0);
    const Tensor ff = attnscope::feed_forward(norm_first ? a.trace.norm2 : a.trace.norm1, w.ff1,
                                              w.ff2, w.activation);
    check_close(a.trace.ff_output, to_double(ff), 0.0);
    check_close(a.output, to_double(norm_first ? a.trace.ff_residual : a.trace.norm2), 0.0);
  }
  // Pre-norm and post-norm are different functions of the same weights.
  w.norm_first = false;
  const Tensor post = attnscope::transformer_block(x, w).output;
  w.norm_first = true;
  const Tensor pre = attnscope::transformer_block(x, w).output;
  double diff = 0.0;
  for (std::size_t i = 0; i < pre.size(); ++i) diff += std::abs(pre.data[i] - post.data[i]);
  CHECK(diff > 1e-2);
}

TEST_CASE("transformer_block: a fully padded sequence stays finite and is flagged",
          "[block][transformer_block]") {
  std::mt19937 rng(43);
  const std::size_t B = 2, T = 4, C = 8, H = 2, hidden = 8;
  const Tensor x = random_tensor(rng, {B, T, C}, kLo, kHi);
  attnscope::BlockWeights w = random_block(C, H, hidden, rng);
  for (bool trace : {true, false}) {
    attnscope::AttentionOptions options;
    options.mask.lengths = {0, T};  // sequence 0 has no keys at all
    options.trace = trace;
    const attnscope::BlockResult r = attnscope::transformer_block(x, w, options);
    INFO("trace = " << trace);
    CHECK(r.trace.attention.fully_masked_count == T * H);
    // No key: zero weights, zero head outputs, so the attention output is bo.
    for (std::size_t i = 0; i < T; ++i) {
      for (std::size_t c = 0; c < C; ++c) {
        CHECK(r.trace.attention.output.data[i * C + c] ==
              Approx(w.attention.bo.data[c]).margin(1e-6));
      }
    }
    for (float v : r.output.data) REQUIRE(std::isfinite(v));
  }
}
