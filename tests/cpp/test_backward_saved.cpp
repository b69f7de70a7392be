// attention_with_log_sum_exp (its log-sum-exp against a double reference,
// its output against attention()'s) and attention_backward from that saved
// forward: the same bits as the backward that runs its own forward, with
// every variant (ALiBi, a bias tensor, sinks, custom masks, GQA, rope, a
// key/value cache), and the errors of the saved output and log-sum-exp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "attnscope/backward.hpp"
#include "test_backward_reference.hpp"
#include "test_kernels_support.hpp"

using attnscope::AttentionOptions;
using attnscope::SavedForward;
using attnscope::Tensor;
using attnscope::testing::AttentionCase;
using attnscope::testing::random_doubles;
using attnscope::testing::same_bits;

namespace {

Tensor random_tensor(std::mt19937& rng, attnscope::Shape shape, double lo = -1.5, double hi = 1.5) {
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;
  const std::vector<double> x = random_doubles(rng, n, lo, hi);
  return Tensor(std::move(shape), std::vector<float>(x.begin(), x.end()));
}

/// log Σ_j exp(scale·q_i·k_j) over the visible keys, in double (rope not used).
std::vector<double> log_sum_exp_double(const AttentionCase& c, const Tensor& q, const Tensor& k) {
  std::vector<double> out(c.B * c.H * c.Tq, -std::numeric_limits<double>::infinity());
  for (std::size_t b = 0; b < c.B; ++b) {
    for (std::size_t h = 0; h < c.H; ++h) {
      const std::size_t kv = b * c.Hkv + h / (c.H / c.Hkv);
      for (std::size_t i = 0; i < c.Tq; ++i) {
        std::vector<double> s;
        for (std::size_t j = 0; j < c.Tk; ++j) {
          if (!c.visible(b, i, j)) continue;
          double dot = 0;
          for (std::size_t e = 0; e < c.dk; ++e) {
            dot += double(q.data[((b * c.H + h) * c.Tq + i) * c.dk + e]) *
                   double(k.data[(kv * c.Tk + j) * c.dk + e]);
          }
          s.push_back(c.scale * dot);
        }
        if (s.empty()) continue;
        double top = s[0], sum = 0;
        for (double x : s) top = std::max(top, x);
        for (double x : s) sum += std::exp(x - top);
        out[(b * c.H + h) * c.Tq + i] = top + std::log(sum);
      }
    }
  }
  return out;
}

/// The gradients from a saved forward are the recomputing call's, bit for bit.
void require_saved_matches(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& d_out,
                           const AttentionOptions& fast) {
  const auto forward = attnscope::attention_with_log_sum_exp(q, k, v, fast);
  const auto own = attnscope::attention_backward(q, k, v, d_out, fast);
  const auto saved =
      attnscope::attention_backward(q, k, v, d_out, {forward.output, forward.log_sum_exp}, fast);
  REQUIRE(same_bits(saved.dq.data, own.dq.data));
  REQUIRE(same_bits(saved.dk.data, own.dk.data));
  REQUIRE(same_bits(saved.dv.data, own.dv.data));
  // And close to the traced path, which shares none of the tiled code.
  AttentionOptions traced = fast;
  traced.trace = true;
  const auto reference = attnscope::attention_backward(q, k, v, d_out, traced);
  attnscope::testing::require_close_all(saved.dq.data, reference.dq.data, 2e-5, "dq");
  attnscope::testing::require_close_all(saved.dk.data, reference.dk.data, 2e-5, "dk");
  attnscope::testing::require_close_all(saved.dv.data, reference.dv.data, 2e-5, "dv");
}

}  // namespace

TEST_CASE("attention_with_log_sum_exp: each query's log-sum-exp, and attention()'s output",
          "[backward][attention]") {
  std::mt19937 rng(11);
  // Around the forward's and the backward's tiles, with large scores
  // (scale 40), a causal mask and padding that hides every key of sequence 2.
  for (std::size_t T : {1, 15, 16, 17, 63, 64, 65, 130}) {
    for (double scale : {0.25, 40.0}) {
      AttentionCase c;
      c.B = 2;
      c.H = 4;
      c.Hkv = 2;
      c.Tq = c.Tk = T;
      c.dk = c.dv = 8;
      c.scale = scale;
      c.causal = true;
      c.lengths = {T, 0};
      INFO("T=" << T << " scale=" << scale);
      const Tensor q = random_tensor(rng, {c.B, c.H, T, c.dk});
      const Tensor k = random_tensor(rng, {c.B, c.Hkv, T, c.dk});
      const Tensor v = random_tensor(rng, {c.B, c.Hkv, T, c.dv});
      AttentionOptions fast;
      fast.scale = attnscope::Scale::custom(static_cast<float>(scale));
      fast.mask.causal = true;
      fast.mask.lengths = c.lengths;
      fast.trace = false;
      const auto got = attnscope::attention_with_log_sum_exp(q, k, v, fast);
      REQUIRE(got.log_sum_exp.shape == attnscope::Shape{c.B, c.H, T});
      const std::vector<double> want = log_sum_exp_double(c, q, k);
      for (std::size_t i = 0; i < want.size(); ++i) {
        INFO("log_sum_exp[" << i << "] = " << got.log_sum_exp.data[i] << ", expected " << want[i]);
        if (std::isinf(want[i])) {
          REQUIRE(got.log_sum_exp.data[i] == -std::numeric_limits<float>::infinity());
        } else {
          REQUIRE(std::fabs(got.log_sum_exp.data[i] - want[i]) <= 2e-6 * (1 + std::fabs(want[i])));
        }
      }
      const auto plain = attnscope::attention(q, k, v, fast);
      REQUIRE(got.fully_masked == plain.fully_masked);
      // Beyond 16 rows per key/value head both run the tiled kernel.
      if (2 * T > 16) REQUIRE(same_bits(got.output.data, plain.output.data));
      attnscope::testing::require_close_all(got.output.data, plain.output.data, 1e-5, "output");
    }
  }
}

TEST_CASE("attention_backward from a saved forward: every variant, bit for bit",
          "[backward][attention]") {
  std::mt19937 rng(21);
  const std::size_t B = 2, H = 4, Hkv = 2, Tq = 67, Tk = 80, d = 8;
  const Tensor q = random_tensor(rng, {B, H, Tq, d});
  const Tensor k = random_tensor(rng, {B, Hkv, Tk, d});
  const Tensor v = random_tensor(rng, {B, Hkv, Tk, d + 2});
  const Tensor d_out = random_tensor(rng, {B, H, Tq, d + 2});
  AttentionOptions fast;
  fast.trace = false;
  SECTION("ALiBi, causal") {
    fast.bias.alibi = true;
    fast.mask.causal = true;
  }
  SECTION("a bias tensor and padding") {
    fast.bias.values = random_tensor(rng, {H, Tq, Tk}, -3, 3);
    fast.mask.lengths = {Tk, 41};
  }
  SECTION("a window with sinks, rope") {
    fast.mask.causal = true;
    fast.mask.window = 9;
    fast.mask.sinks = 3;
    fast.rope.enabled = true;
  }
  SECTION("additive and boolean masks, a row fully masked") {
    Tensor additive = random_tensor(rng, {Tq, Tk}, -2, 2);
    attnscope::BoolTensor allowed;
    allowed.shape = {B, Tq, Tk};
    allowed.data.assign(B * Tq * Tk, 1);
    for (std::size_t j = 0; j < Tk; ++j) {
      additive.data[5 * Tk + j] = -std::numeric_limits<float>::infinity();
      allowed.data[(Tq + 30) * Tk + j] = j % 3 != 0;
    }
    fast.mask.additive = additive;
    fast.mask.allowed = allowed;
  }
  require_saved_matches(q, k, v, d_out, fast);
}

TEST_CASE("attention_backward from a saved forward at ranks 2 and 3", "[backward][attention]") {
  std::mt19937 rng(31);
  AttentionOptions fast;
  fast.trace = false;
  fast.mask.causal = true;
  for (const attnscope::Shape& shape : {attnscope::Shape{70, 4}, attnscope::Shape{3, 70, 4}}) {
    const Tensor q = random_tensor(rng, shape), k = random_tensor(rng, shape),
                 v = random_tensor(rng, shape), d_out = random_tensor(rng, shape);
    require_saved_matches(q, k, v, d_out, fast);
  }
}

TEST_CASE("attention_backward rejects a bad saved forward by name", "[backward][attention]") {
  std::mt19937 rng(41);
  const Tensor q = random_tensor(rng, {2, 5, 4});
  const Tensor k = random_tensor(rng, {2, 5, 4});
  const Tensor v = random_tensor(rng, {2, 5, 3});
  const Tensor d_out = random_tensor(rng, {2, 5, 3});
  AttentionOptions fast;
  fast.trace = false;
  const auto forward = attnscope::attention_with_log_sum_exp(q, k, v, fast);
  const SavedForward good{forward.output, forward.log_sum_exp};
  CHECK_NOTHROW(attnscope::attention_backward(q, k, v, d_out, good, fast));

  AttentionOptions traced;
  CHECK_THROWS_WITH(attnscope::attention_with_log_sum_exp(q, k, v, traced),
                    Catch::Contains("attention: the log-sum-exp comes from the fast path"));
  CHECK_THROWS_WITH(attnscope::attention_backward(q, k, v, d_out, good, traced),
                    Catch::Contains("attention_backward: output and log_sum_exp are the fast "
                                    "path's, expected options.trace = false"));
  const Tensor wide({2, 5, 4}, std::vector<float>(40, 0.0f));
  CHECK_THROWS_WITH(
      attnscope::attention_backward(q, k, v, d_out, {wide, forward.log_sum_exp}, fast),
      Catch::Contains("attention_backward: output has shape (2, 5, 4), expected (2, 5, 3)"));
  const Tensor flat({10}, std::vector<float>(10, 0.0f));
  CHECK_THROWS_WITH(attnscope::attention_backward(q, k, v, d_out, {forward.output, flat}, fast),
                    Catch::Contains("attention_backward: log_sum_exp has shape (10,), expected "
                                    "(2, 5) (q's shape without d_k)"));
  Tensor nan_output = forward.output;
  nan_output.data[7] = NAN;
  CHECK_THROWS_WITH(
      attnscope::attention_backward(q, k, v, d_out, {nan_output, forward.log_sum_exp}, fast),
      Catch::Contains("attention_backward: output"));
  for (float bad : {NAN, INFINITY}) {
    Tensor lse = forward.log_sum_exp;
    lse.data[3] = bad;
    CHECK_THROWS_WITH(attnscope::attention_backward(q, k, v, d_out, {forward.output, lse}, fast),
                      Catch::Contains("attention_backward: log_sum_exp"));
  }
  // −inf is a fully masked query's: its gradients are zero.
  Tensor lse = forward.log_sum_exp;
  lse.data[3] = -INFINITY;
  const auto masked = attnscope::attention_backward(q, k, v, d_out, {forward.output, lse}, fast);
  for (std::size_t e = 0; e < 4; ++e) CHECK(masked.dq.data[3 * 4 + e] == 0.0f);
  // q, k and v are checked as the forward would check them.
  const Tensor bad_k({2, 5, 3}, std::vector<float>(30, 0.5f));
  CHECK_THROWS_WITH(attnscope::attention_backward(q, bad_k, v, d_out, good, fast),
                    Catch::Contains("attention_backward: k has shape"));
  Tensor nan_v = v;
  nan_v.data[2] = NAN;
  CHECK_THROWS_WITH(attnscope::attention_backward(q, k, nan_v, d_out, good, fast),
                    Catch::Contains("attention_backward: v"));
  AttentionOptions window = fast;
  window.mask.window = 0;
  CHECK_THROWS_WITH(attnscope::attention_backward(q, k, v, d_out, good, window),
                    Catch::Contains("attention_backward: "));
  const Tensor wrong_grad({2, 5, 4}, std::vector<float>(40, 1.0f));
  CHECK_THROWS_WITH(attnscope::attention_backward(q, k, v, wrong_grad, good, fast),
                    Catch::Contains("d_output has shape (2, 5, 4), expected (2, 5, 3)"));
}
