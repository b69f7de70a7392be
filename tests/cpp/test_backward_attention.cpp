// attention_backward against the double-precision analytic backward and
// against central finite differences of the double forward, on both paths
// (traced and flash), at sizes around the SIMD width and the key tile, with
// causal, padding, window and fully masked queries, grouped heads and a
// key/value cache; the flash path also from a saved forward (the same
// bits); and its errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

#include "attnscope/backward.hpp"
#include "test_backward_reference.hpp"
#include "test_kernels_support.hpp"

using attnscope::AttentionOptions;
using attnscope::Tensor;
using attnscope::testing::AttentionCase;
using attnscope::testing::central_difference;
using attnscope::testing::random_doubles;
using attnscope::testing::require_close_all;
using attnscope::testing::same_bits;

namespace {

Tensor to_tensor(attnscope::Shape shape, const std::vector<double>& x) {
  return Tensor(std::move(shape), std::vector<float>(x.begin(), x.end()));
}

AttentionOptions options_for(const AttentionCase& c, bool trace) {
  AttentionOptions o;
  o.scale = attnscope::Scale::custom(static_cast<float>(c.scale));
  o.mask.causal = c.causal;
  o.mask.lengths = c.lengths;
  if (c.window) o.mask.window = static_cast<std::int64_t>(c.window);
  if (c.rope_base > 0) {
    o.rope.enabled = true;
    o.rope.base = c.rope_base;
  }
  o.trace = trace;
  return o;
}

/// Checks both paths against the analytic reference, and the reference
/// against finite differences of L = Σ dO ∘ O at `probes` entries of each input.
void check_case(const AttentionCase& c, std::uint32_t seed, std::size_t probes = 6) {
  std::mt19937 rng(seed);
  std::vector<double> q = random_doubles(rng, c.B * c.H * c.Tq * c.dk, -1.5, 1.5);
  std::vector<double> k = random_doubles(rng, c.B * c.Hkv * c.Tk * c.dk, -1.5, 1.5);
  std::vector<double> v = random_doubles(rng, c.B * c.Hkv * c.Tk * c.dv);
  const std::vector<double> d_out = random_doubles(rng, c.B * c.H * c.Tq * c.dv);
  const auto want = attnscope::testing::attention_backward_double(c, q, k, v, d_out);

  const Tensor tq = to_tensor({c.B, c.H, c.Tq, c.dk}, q);
  const Tensor tk = to_tensor({c.B, c.Hkv, c.Tk, c.dk}, k);
  const Tensor tv = to_tensor({c.B, c.Hkv, c.Tk, c.dv}, v);
  const Tensor tdo = to_tensor({c.B, c.H, c.Tq, c.dv}, d_out);
  for (bool trace : {true, false}) {
    INFO((trace ? "traced" : "flash") << " path");
    const auto got = attnscope::attention_backward(tq, tk, tv, tdo, options_for(c, trace));
    REQUIRE(got.dq.shape == tq.shape);
    REQUIRE(got.dk.shape == tk.shape);
    REQUIRE(got.dv.shape == tv.shape);
    require_close_all(got.dq.data, want.dq, 2e-5, "dq");
    require_close_all(got.dk.data, want.dk, 2e-5, "dk");
    require_close_all(got.dv.data, want.dv, 2e-5, "dv");
  }
  {
    // From the forward's saved output and log-sum-exp: the flash path's bits.
    const AttentionOptions fast = options_for(c, false);
    const auto forward = attnscope::attention_with_log_sum_exp(tq, tk, tv, fast);
    const auto flash = attnscope::attention_backward(tq, tk, tv, tdo, fast);
    const auto saved =
        attnscope::attention_backward(tq, tk, tv, tdo, {forward.output, forward.log_sum_exp}, fast);
    REQUIRE(same_bits(saved.dq.data, flash.dq.data));
    REQUIRE(same_bits(saved.dk.data, flash.dk.data));
    REQUIRE(same_bits(saved.dv.data, flash.dv.data));
  }

  auto loss = [&] {
    const std::vector<double> o = attnscope::testing::attention_forward_double(c, q, k, v);
    double s = 0;
    for (std::size_t i = 0; i < o.size(); ++i) s += o[i] * d_out[i];
    return s;
  };
  struct Input {
    std::vector<double>* x;
    const std::vector<double>* grad;
    const char* name;
  };
  for (const Input& in :
       {Input{&q, &want.dq, "dq"}, Input{&k, &want.dk, "dk"}, Input{&v, &want.dv, "dv"}}) {
    std::uniform_int_distribution<std::size_t> pick(0, in.x->size() - 1);
    for (std::size_t p = 0; p < probes; ++p) {
      const std::size_t i = pick(rng);
      INFO(in.name << "[" << i << "] against a central difference");
      REQUIRE(std::fabs(central_difference(loss, *in.x, i) - (*in.grad)[i]) <= 1e-7);
    }
  }
}

}  // namespace

TEST_CASE("attention_backward matches the double reference and finite differences",
          "[backward][attention]") {
  std::uint32_t seed = 1;
  for (std::size_t T : {1, 7, 8, 9, 16, 17, 33, 65}) {
    for (std::size_t d : {1, 4, 8, 16}) {
      AttentionCase c;
      c.B = 2;
      c.H = 2;
      c.Hkv = 2;
      c.Tq = c.Tk = T;
      c.dk = c.dv = d;
      c.scale = 1.0 / std::sqrt(double(d));
      SECTION("T=" + std::to_string(T) + " d=" + std::to_string(d)) {
        check_case(c, seed);
        c.causal = true;
        check_case(c, seed + 1);
        // Padding; the second sequence has no keys at all: its queries are fully masked.
        c.lengths = {(T + 1) / 2, 0};
        check_case(c, seed + 2);
      }
      seed += 3;
    }
  }
}

TEST_CASE("attention_backward: grouped heads, a key/value cache, a window",
          "[backward][attention]") {
  AttentionCase c;
  c.B = 2;
  c.H = 4;
  c.Hkv = 2;
  c.Tq = 9;
  c.Tk = 70;  // past one key tile
  c.dk = 8;
  c.dv = 5;
  c.scale = 0.7;
  c.causal = true;
  check_case(c, 100);
  c.Hkv = 1;  // MQA
  c.window = 6;
  c.lengths = {66, 70};
  check_case(c, 101);
}

TEST_CASE("attention_backward through rope: the gradient rotated back", "[backward][attention]") {
  std::uint32_t seed = 300;
  // Around the SIMD width and the flash tiles (32 queries × 64 keys); a small
  // base turns even the last pairs by whole radians over these lengths.
  for (std::size_t T : {1, 4, 7, 9, 33, 65}) {
    for (std::size_t d : {2, 4, 8, 10, 16}) {
      AttentionCase c;
      c.B = 2;
      c.H = 2;
      c.Hkv = 2;
      c.Tq = c.Tk = T;
      c.dk = d;
      c.dv = d + 1;
      c.scale = 1.0 / std::sqrt(double(d));
      c.rope_base = 100.0;
      SECTION("T=" + std::to_string(T) + " d=" + std::to_string(d)) {
        check_case(c, seed);
        c.causal = true;
        check_case(c, seed + 1);
        c.lengths = {(T + 1) / 2, 0};
        check_case(c, seed + 2);
      }
      seed += 3;
    }
  }
  SECTION("grouped heads, a key/value cache (queries at Tk − Tq + i), a window") {
    AttentionCase c;
    c.B = 2;
    c.H = 4;
    c.Hkv = 2;
    c.Tq = 9;
    c.Tk = 70;
    c.dk = 8;
    c.dv = 5;
    c.scale = 0.7;
    c.causal = true;
    c.rope_base = 10000.0;
    check_case(c, 400);
    c.Hkv = 1;
    c.window = 6;
    c.lengths = {66, 70};
    check_case(c, 401);
  }
}

TEST_CASE("attention_backward: large scores stay finite", "[backward][attention]") {
  AttentionCase c;
  c.Tq = c.Tk = 17;
  c.dk = c.dv = 4;
  c.scale = 40.0;  // scores up to ~360: exp would overflow without the max
  c.causal = true;
  check_case(c, 7, 0);
}

TEST_CASE("attention_backward rejects bad input by name", "[backward][attention]") {
  const Tensor q({1, 4, 2}, std::vector<float>(8, 0.5f));
  const Tensor k({1, 4, 2}, std::vector<float>(8, 0.5f));
  const Tensor v({1, 4, 3}, std::vector<float>(12, 0.5f));
  const Tensor good({1, 4, 3}, std::vector<float>(12, 1.0f));
  CHECK_NOTHROW(attnscope::attention_backward(q, k, v, good));
  const Tensor wrong({1, 4, 2}, std::vector<float>(8, 1.0f));
  CHECK_THROWS_WITH(attnscope::attention_backward(q, k, v, wrong),
                    Catch::Contains("d_output has shape (1, 4, 2), expected (1, 4, 3)"));
  Tensor nan_grad = good;
  nan_grad.data[5] = NAN;
  CHECK_THROWS_WITH(attnscope::attention_backward(q, k, v, nan_grad), Catch::Contains("d_output"));
  const Tensor bad_k({1, 4, 3}, std::vector<float>(12, 0.5f));
  CHECK_THROWS_WITH(attnscope::attention_backward(q, bad_k, v, good),
                    Catch::Contains("attention_backward: k has shape"));
  AttentionOptions rope;
  rope.rope.enabled = true;
  CHECK_NOTHROW(attnscope::attention_backward(q, k, v, good, rope));
  const Tensor odd_q({1, 4, 3}, std::vector<float>(12, 0.5f));
  CHECK_THROWS_WITH(attnscope::attention_backward(odd_q, odd_q, v, good, rope),
                    Catch::Contains("attention_backward: rope needs an even d_k, got d_k=3"));
  rope.rope.base = -1.0;
  CHECK_THROWS_WITH(attnscope::attention_backward(q, k, v, good, rope),
                    Catch::Contains("attention_backward: rope.base is -1"));
}
