// Modern attention variants (GQA/MQA, KV cache, RoPE, ALiBi, per-head bias,
// sliding window, sinks) on both paths against the double reference, with
// every existing mask, at lengths around the SIMD width and the tile sizes.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "attnscope/attnscope.hpp"
#include "test_attention_reference.hpp"
#include "test_kernels_support.hpp"

using namespace attnscope;
using attnscope::testing::max_scaled_error;
using attnscope::testing::random_tensor;
using attnscope::testing::reference_attention;
using attnscope::testing::ReferenceDims;
using attnscope::testing::to_double;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

enum class Variant { Gqa, Mqa, KvCache, Decode, Rope, Alibi, Bias, Window, WindowSinks, All };
enum class MaskKind { None, Causal, Lengths, Additive, Allowed };

const char* name(Variant v) {
  static const char* const kNames[] = {"gqa",   "mqa",  "kv-cache", "decode",       "rope",
                                       "alibi", "bias", "window",   "window+sinks", "all"};
  return kNames[static_cast<int>(v)];
}

struct Case {
  ReferenceDims dims;
  Tensor q, k, v;
  AttentionOptions options;
};

Shape shape4(std::size_t b, std::size_t h, std::size_t t, std::size_t d) { return {b, h, t, d}; }

Case make_case(Variant variant, MaskKind mask_kind, std::size_t Tk, std::mt19937& rng) {
  Case c;
  ReferenceDims& d = c.dims;
  d.B = 2;
  d.H = 4;
  d.Hkv = variant == Variant::Mqa ? 1 : 2;
  d.Tk = Tk;
  d.Tq = Tk;
  if (variant == Variant::KvCache || variant == Variant::All) d.Tq = (Tk + 2) / 3;
  if (variant == Variant::Decode) d.Tq = 1;
  d.d_k = 8;
  d.d_v = 6;
  c.q = random_tensor(rng, shape4(d.B, d.H, d.Tq, d.d_k));
  c.k = random_tensor(rng, shape4(d.B, d.Hkv, d.Tk, d.d_k));
  c.v = random_tensor(rng, shape4(d.B, d.Hkv, d.Tk, d.d_v));
  AttentionOptions& o = c.options;
  const std::size_t window = std::max<std::size_t>(1, Tk / 4);
  switch (variant) {
    case Variant::Rope:
      o.rope.enabled = true;
      o.rope.base = 500.0;
      break;
    case Variant::Alibi:
      o.bias.alibi = true;
      break;
    case Variant::Bias:
      o.bias.values = random_tensor(rng, {d.H, d.Tq, d.Tk}, -2.0f, 2.0f);
      break;
    case Variant::Window:
      o.mask.window = static_cast<std::int64_t>(window);
      break;
    case Variant::WindowSinks:
      o.mask.window = static_cast<std::int64_t>(window);
      o.mask.sinks = std::min<std::size_t>(Tk, 3);
      break;
    case Variant::All:
      o.rope.enabled = true;
      o.bias.alibi = true;
      o.bias.values = random_tensor(rng, {d.B, d.H, d.Tq, d.Tk}, -1.0f, 1.0f);
      o.mask.window = static_cast<std::int64_t>(window);
      o.mask.sinks = std::min<std::size_t>(Tk, 2);
      break;
    default:
      break;
  }
  switch (mask_kind) {
    case MaskKind::None:
      break;
    case MaskKind::Causal:
      o.mask.causal = true;
      break;
    case MaskKind::Lengths:
      o.mask.lengths = {Tk, (Tk * 2 + 2) / 3};
      break;
    case MaskKind::Additive: {
      o.mask.additive = random_tensor(rng, shape4(d.B, d.H, d.Tq, d.Tk), -2.0f, 2.0f);
      for (std::size_t i = 0; i < o.mask.additive.data.size(); i += 7)
        o.mask.additive.data[i] = -kInf;
      break;
    }
    case MaskKind::Allowed: {
      o.mask.allowed.shape = {d.Tq, d.Tk};
      o.mask.allowed.data.resize(d.Tq * d.Tk);
      std::bernoulli_distribution keep(0.8);
      for (auto& a : o.mask.allowed.data) a = keep(rng) ? 1 : 0;
      break;
    }
  }
  return c;
}

attnscope::testing::ReferenceResult reference_for(const Case& c) {
  return reference_attention(to_double(c.q.data), to_double(c.k.data), to_double(c.v.data), c.dims,
                             1.0 / std::sqrt(double(c.dims.d_k)), c.options);
}

bool all_finite(const std::vector<float>& x) {
  for (float f : x) {
    if (!std::isfinite(f)) return false;
  }
  return true;
}

void check_against_reference(const Case& c, const attnscope::testing::ReferenceResult& ref,
                             bool trace) {
  AttentionOptions o = c.options;
  o.trace = trace;
  const AttentionResult r = attention(c.q, c.k, c.v, o);
  CHECK(r.output.shape == shape4(c.dims.B, c.dims.H, c.dims.Tq, c.dims.d_v));
  CHECK(all_finite(r.output.data));
  CHECK(max_scaled_error(r.output.data, ref.output, 1.0) <= 2e-5);
  CHECK(r.fully_masked == ref.fully_masked);
  if (trace) {
    REQUIRE(r.trace);
    CHECK(r.trace->weights.shape == shape4(c.dims.B, c.dims.H, c.dims.Tq, c.dims.Tk));
    CHECK(max_scaled_error(r.trace->weights.data, ref.weights, 1e-3) <= 1e-4);
    CHECK(r.trace->q_rotated.empty() == !o.rope.enabled);
    CHECK(r.trace->bias.empty() == !o.bias.any());
  }
}

}  // namespace

TEST_CASE("each variant matches the double reference on both paths with every mask",
          "[attention][variants]") {
  std::mt19937 rng(2121);
  const std::vector<std::size_t> lengths = {1, 3, 4, 15, 16, 17, 31, 33, 63, 65, 129, 257};
  for (int vi = 0; vi <= static_cast<int>(Variant::All); ++vi) {
    for (int mi = 0; mi <= static_cast<int>(MaskKind::Allowed); ++mi) {
      for (std::size_t Tk : lengths) {
        const Variant variant = static_cast<Variant>(vi);
        const Case c = make_case(variant, static_cast<MaskKind>(mi), Tk, rng);
        const auto ref = reference_for(c);
        for (bool trace : {true, false}) {
          INFO("variant = " << name(variant) << ", mask = " << mi << ", Tq = " << c.dims.Tq
                            << ", Tk = " << Tk << ", trace = " << trace);
          check_against_reference(c, ref, trace);
        }
      }
    }
  }
}

TEST_CASE("windows and sinks hide exactly the keys they should, tile by tile",
          "[attention][variants][window]") {
  // Windows narrower and wider than a key tile (128), causal or not, with
  // sinks reaching into a skipped tile, so that whole tiles are skipped.
  std::mt19937 rng(77);
  for (std::size_t Tk : {200u, 300u, 520u}) {
    for (std::int64_t window : {1, 5, 100, 128, 129, 300}) {
      for (std::size_t sinks : {0u, 1u, 130u}) {
        for (bool causal : {true, false}) {
          Case c = make_case(Variant::Gqa, MaskKind::None, Tk, rng);
          if (causal) c.options.mask.causal = true;
          c.options.mask.window = window;
          c.options.mask.sinks = sinks;
          const auto ref = reference_for(c);
          for (bool trace : {true, false}) {
            INFO("Tk = " << Tk << ", window = " << window << ", sinks = " << sinks
                         << ", causal = " << causal << ", trace = " << trace);
            check_against_reference(c, ref, trace);
          }
        }
      }
    }
  }
}

TEST_CASE("queries that a window and padding hide entirely are flagged, zero, never NaN",
          "[attention][variants][window]") {
  std::mt19937 rng(5);
  for (std::size_t Tk : {17u, 40u, 150u}) {
    Case c = make_case(Variant::KvCache, MaskKind::Causal, Tk, rng);
    c.options.mask.window = 3;
    c.options.mask.lengths = {5, Tk};
    c.options.bias.alibi = true;
    const auto ref = reference_for(c);
    std::size_t expected = 0;
    for (auto f : ref.fully_masked) expected += f;
    REQUIRE(expected > 0);
    for (bool trace : {true, false}) {
      AttentionOptions o = c.options;
      o.trace = trace;
      const AttentionResult r = attention(c.q, c.k, c.v, o);
      INFO("Tk = " << Tk << ", trace = " << trace);
      CHECK(r.fully_masked == ref.fully_masked);
      CHECK(r.fully_masked_count == expected);
      CHECK(all_finite(r.output.data));
      const std::size_t d_v = c.dims.d_v;
      for (std::size_t row = 0; row < r.fully_masked.size(); ++row) {
        if (!r.fully_masked[row]) continue;
        for (std::size_t c2 = 0; c2 < d_v; ++c2) CHECK(r.output.data[row * d_v + c2] == 0.0f);
      }
      if (trace) CHECK(all_finite(r.trace->weights.data));
    }
  }
}

TEST_CASE("variants stay exact for large logits", "[attention][variants]") {
  std::mt19937 rng(91);
  for (Variant variant : {Variant::Rope, Variant::Alibi, Variant::WindowSinks, Variant::All}) {
    for (std::size_t Tk : {16u, 65u, 257u}) {
      Case c = make_case(variant, MaskKind::Causal, Tk, rng);
      for (float& x : c.q.data) x *= 60.0f;
      for (float& x : c.k.data) x *= 60.0f;
      const auto ref = reference_for(c);
      for (bool trace : {true, false}) {
        INFO("variant = " << name(variant) << ", Tk = " << Tk << ", trace = " << trace);
        AttentionOptions o = c.options;
        o.trace = trace;
        const AttentionResult r = attention(c.q, c.k, c.v, o);
        CHECK(all_finite(r.output.data));
        // Scores near 3e3 are rounded to 2e-4 in float; weights follow.
        CHECK(max_scaled_error(r.output.data, ref.output, 1.0) <= 2e-3);
      }
    }
  }
}

TEST_CASE("GQA equals MHA with the key/value heads repeated", "[attention][variants][gqa]") {
  std::mt19937 rng(13);
  for (std::size_t Hkv : {1u, 2u, 4u}) {
    for (std::size_t T : {1u, 17u, 130u}) {
      const std::size_t B = 2, H = 4, d = 8, group = H / Hkv;
      const Tensor q = random_tensor(rng, shape4(B, H, T, d));
      const Tensor k = random_tensor(rng, shape4(B, Hkv, T, d));
      const Tensor v = random_tensor(rng, shape4(B, Hkv, T, d));
      Tensor k_rep = Tensor::zeros(shape4(B, H, T, d)), v_rep = Tensor::zeros(shape4(B, H, T, d));
      for (std::size_t b = 0; b < B; ++b) {
        for (std::size_t h = 0; h < H; ++h) {
          const std::size_t src = (b * Hkv + h / group) * T * d, dst = (b * H + h) * T * d;
          std::copy(k.data.begin() + src, k.data.begin() + src + T * d, k_rep.data.begin() + dst);
          std::copy(v.data.begin() + src, v.data.begin() + src + T * d, v_rep.data.begin() + dst);
        }
      }
      for (bool trace : {true, false}) {
        AttentionOptions o;
        o.trace = trace;
        o.mask.causal = true;
        o.rope.enabled = true;
        o.bias.alibi = true;
        const AttentionResult grouped = attention(q, k, v, o);
        const AttentionResult repeated = attention(q, k_rep, v_rep, o);
        INFO("Hkv = " << Hkv << ", T = " << T << ", trace = " << trace);
        CHECK(max_scaled_error(grouped.output.data, repeated.output.data, 1.0) <= 1e-6);
        CHECK(grouped.fully_masked == repeated.fully_masked);
      }
    }
  }
}

TEST_CASE("Hkv = H is plain multi-head attention", "[attention][variants][gqa]") {
  std::mt19937 rng(17);
  const Tensor q = random_tensor(rng, shape4(2, 3, 33, 8)),
               k = random_tensor(rng, shape4(2, 3, 33, 8)),
               v = random_tensor(rng, shape4(2, 3, 33, 5));
  for (bool trace : {true, false}) {
    AttentionOptions o;
    o.trace = trace;
    o.mask.causal = true;
    const AttentionResult r = attention(q, k, v, o);
    const auto ref = reference_attention(to_double(q.data), to_double(k.data), to_double(v.data), 2,
                                         3, 33, 8, 5, 1.0 / std::sqrt(8.0), o.mask);
    CHECK(max_scaled_error(r.output.data, ref.output, 1.0) <= 1e-5);
  }
}

TEST_CASE("a window at least as long as the keys changes nothing",
          "[attention][variants][window]") {
  std::mt19937 rng(23);
  for (std::size_t T : {1u, 16u, 129u, 300u}) {
    Case c = make_case(Variant::Gqa, MaskKind::Causal, T, rng);
    for (bool trace : {true, false}) {
      AttentionOptions o = c.options;
      o.trace = trace;
      const AttentionResult plain = attention(c.q, c.k, c.v, o);
      for (std::int64_t window : {std::int64_t(T), std::int64_t(T) + 7}) {
        o.mask.window = window;
        const AttentionResult windowed = attention(c.q, c.k, c.v, o);
        INFO("T = " << T << ", window = " << window << ", trace = " << trace);
        CHECK(windowed.output.data == plain.output.data);
      }
      o.mask.window.reset();
    }
  }
}

TEST_CASE("rope shifts no relative score: q and k moved by the same offset score the same",
          "[attention][variants][rope]") {
  std::mt19937 rng(29);
  const std::size_t H = 2, T = 20, d = 16;
  const Tensor q = random_tensor(rng, {H, T, d}), k = random_tensor(rng, {H, T, d}),
               v = random_tensor(rng, {H, T, d});
  AttentionOptions o;
  o.rope.enabled = true;
  const AttentionResult base = attention(q, k, v, o);
  for (std::size_t offset : {1u, 7u, 300u}) {
    // offset keys in front move every key to j + offset and, with
    // pos(i) = Tk − Tq + i, every query to i + offset.
    Tensor k_shifted = Tensor::zeros({H, T + offset, d});
    Tensor v_shifted = Tensor::zeros({H, T + offset, d});
    for (std::size_t h = 0; h < H; ++h) {
      std::copy(k.data.begin() + h * T * d, k.data.begin() + (h + 1) * T * d,
                k_shifted.data.begin() + (h * (T + offset) + offset) * d);
    }
    const AttentionResult shifted = attention(q, k_shifted, v_shifted, o);
    double worst = 0.0;
    for (std::size_t h = 0; h < H; ++h) {
      for (std::size_t i = 0; i < T; ++i) {
        for (std::size_t j = 0; j < T; ++j) {
          const float a = base.trace->scores.data[(h * T + i) * T + j];
          const float b = shifted.trace->scores.data[(h * T + i) * (T + offset) + offset + j];
          worst = std::max(worst, double(std::abs(a - b)));
        }
      }
    }
    INFO("offset = " << offset);
    // |q|·|k| is about 16/3 here; float rotations round to ~1e-6 of that.
    CHECK(worst <= 2e-5);
  }
}

TEST_CASE("a decode step (Tq = 1) equals the last row of full causal attention",
          "[attention][variants][decode]") {
  std::mt19937 rng(31);
  for (std::size_t T : {1u, 16u, 17u, 129u, 300u}) {
    const std::size_t B = 1, H = 8, Hkv = 2, d = 16;
    const Tensor q = random_tensor(rng, shape4(B, H, T, d)),
                 k = random_tensor(rng, shape4(B, Hkv, T, d)),
                 v = random_tensor(rng, shape4(B, Hkv, T, d));
    Tensor last = Tensor::zeros(shape4(B, H, 1, d));
    for (std::size_t h = 0; h < H; ++h) {
      std::copy(q.data.begin() + (h * T + T - 1) * d, q.data.begin() + (h * T + T) * d,
                last.data.begin() + h * d);
    }
    for (bool trace : {true, false}) {
      AttentionOptions o;
      o.trace = trace;
      o.mask.causal = true;
      o.mask.window = 50;
      o.mask.sinks = std::min<std::size_t>(T, 4);
      o.rope.enabled = true;
      o.bias.alibi = true;
      const AttentionResult full = attention(q, k, v, o);
      const AttentionResult step = attention(last, k, v, o);
      double worst = 0.0;
      for (std::size_t h = 0; h < H; ++h) {
        for (std::size_t c = 0; c < d; ++c) {
          worst = std::max(worst, double(std::abs(full.output.data[(h * T + T - 1) * d + c] -
                                                  step.output.data[h * d + c])));
        }
      }
      INFO("T = " << T << ", trace = " << trace);
      CHECK(worst <= 1e-6);
    }
  }
}

TEST_CASE("the trace holds the rotated q and k and the bias", "[attention][variants][trace]") {
  std::mt19937 rng(37);
  const std::size_t H = 3, Hkv = 1, Tq = 5, Tk = 9, d = 6;
  const Tensor q = random_tensor(rng, {H, Tq, d}), k = random_tensor(rng, {Hkv, Tk, d}),
               v = random_tensor(rng, {Hkv, Tk, d});
  AttentionOptions o;
  o.rope.enabled = true;
  o.bias.alibi = true;
  o.mask.causal = true;
  const AttentionResult r = attention(q, k, v, o);
  REQUIRE(r.trace);
  const AttentionTrace& t = *r.trace;
  CHECK(t.q_rotated.shape == q.shape);
  CHECK(t.k_rotated.shape == k.shape);
  const auto q_ref = attnscope::testing::reference_rope(to_double(q.data), H, Tq, Tk - Tq, d, 1e4);
  const auto k_ref = attnscope::testing::reference_rope(to_double(k.data), Hkv, Tk, 0, d, 1e4);
  CHECK(max_scaled_error(t.q_rotated.data, q_ref, 1.0) <= 1e-6);
  CHECK(max_scaled_error(t.k_rotated.data, k_ref, 1.0) <= 1e-6);
  // H = 3 is not a power of two: slopes of 2 heads, then the first of 4's.
  const std::vector<double> slopes = {std::pow(2.0, -4.0), std::pow(2.0, -8.0),
                                      std::pow(2.0, -2.0)};
  REQUIRE(t.bias.shape == Shape({H, Tq, Tk}));
  for (std::size_t h = 0; h < H; ++h) {
    for (std::size_t i = 0; i < Tq; ++i) {
      for (std::size_t j = 0; j < Tk; ++j) {
        const double pos = double(Tk - Tq + i);
        const std::size_t at = (h * Tq + i) * Tk + j;
        CHECK(t.bias.data[at] == Approx(-slopes[h] * std::abs(pos - double(j))).margin(1e-6));
        if (double(j) <= pos) {
          CHECK(t.masked.data[at] == Approx(t.scaled.data[at] + t.bias.data[at]).margin(1e-6));
        } else {
          CHECK(t.masked.data[at] == -kInf);
        }
      }
    }
  }
}

TEST_CASE("attention names the argument of each bad variant", "[attention][variants][errors]") {
  using Catch::Matchers::Contains;
  std::mt19937 rng(41);
  const Tensor q = random_tensor(rng, shape4(2, 4, 3, 6)),
               k = random_tensor(rng, shape4(2, 2, 5, 6)),
               v = random_tensor(rng, shape4(2, 2, 5, 4));
  CHECK_NOTHROW(attention(q, k, v));
  CHECK_THROWS_WITH(
      attention(q, random_tensor(rng, shape4(2, 3, 5, 6)), random_tensor(rng, shape4(2, 3, 5, 4))),
      Contains("q has H=4 heads and k has Hkv=3, expected H to be a multiple of Hkv"));
  CHECK_THROWS_WITH(
      attention(q, random_tensor(rng, shape4(1, 2, 5, 6)), random_tensor(rng, shape4(1, 2, 5, 4))),
      Contains("k has shape (1, 2, 5, 6), expected (B=2, Hkv, Tk, d_k=6) with B and d_k from q"));
  CHECK_THROWS_WITH(attention(random_tensor(rng, shape4(2, 4, 6, 6)), k, v),
                    Contains("q has Tq=6 queries and k has Tk=5 keys, expected Tq <= Tk"));
  CHECK_THROWS_WITH(
      attention(q, k, random_tensor(rng, shape4(2, 2, 4, 4))),
      Contains("v has shape (2, 2, 4, 4), expected (B=2, Hkv=2, Tk=5, d_v) to match k"));
  AttentionOptions o;
  o.rope.enabled = true;
  CHECK_THROWS_WITH(attention(random_tensor(rng, {3, 5}), random_tensor(rng, {3, 5}),
                              random_tensor(rng, {3, 2}), o),
                    Contains("rope needs an even d_k, got d_k=5"));
  for (double base : {0.0, -2.0, double(kInf), std::nan("")}) {
    o.rope.base = base;
    CHECK_THROWS_WITH(attention(q, k, v, o), Contains("rope.base is"));
  }
  o = {};
  for (std::int64_t window : {0, -3}) {
    o.mask.window = window;
    CHECK_THROWS_WITH(attention(q, k, v, o), Contains("mask.window is " + std::to_string(window) +
                                                      ", expected at least 1"));
  }
  o = {};
  o.mask.sinks = 6;
  CHECK_THROWS_WITH(attention(q, k, v, o), Contains("mask.sinks is 6, expected at most Tk=5"));
  o.mask.sinks = 5;
  CHECK_NOTHROW(attention(q, k, v, o));
  o = {};
  o.bias.values = random_tensor(rng, {4, 5, 3});
  CHECK_THROWS_WITH(attention(q, k, v, o),
                    Contains("bias.values has shape (4, 5, 3), expected (H, Tq, Tk) = (4, 3, 5) or "
                             "(B, H, Tq, Tk) = (2, 4, 3, 5)"));
  o.bias.values = random_tensor(rng, {4, 3, 5});
  o.bias.values.data[2] = std::nanf("");
  CHECK_THROWS_WITH(attention(q, k, v, o), Contains("bias.values has a non-finite value"));
  o = {};
  o.mask.additive = random_tensor(rng, {5, 5});
  CHECK_THROWS_WITH(attention(q, k, v, o),
                    Contains("mask.additive has shape (5, 5), expected (Tq, Tk) = (3, 5)"));
}

TEST_CASE(
    "decode steps match the reference at value widths and group sizes around the kernel's blocks",
    "[attention][variants][decode]") {
  // The decode kernel takes 4 rows and 4 batches of columns at a time and
  // 64 values per block: widths and row counts below, at and past those.
  std::mt19937 rng(43);
  for (std::size_t H : {1u, 3u, 4u, 6u, 16u}) {
    for (std::size_t d_v : {1u, 15u, 16u, 17u, 37u, 64u, 130u}) {
      for (std::size_t Tk : {1u, 63u, 64u, 65u, 200u}) {
        ReferenceDims d{1, H, 1, 1, Tk, 8, d_v};
        const Tensor q = random_tensor(rng, shape4(1, H, 1, 8));
        const Tensor k = random_tensor(rng, shape4(1, 1, Tk, 8));
        const Tensor v = random_tensor(rng, shape4(1, 1, Tk, d_v));
        AttentionOptions o;
        o.trace = false;
        o.mask.causal = true;
        o.mask.window = 50;
        o.mask.sinks = std::min<std::size_t>(Tk, 3);
        const AttentionResult r = attention(q, k, v, o);
        const auto ref = reference_attention(to_double(q.data), to_double(k.data),
                                             to_double(v.data), d, 1.0 / std::sqrt(8.0), o);
        INFO("H = " << H << ", d_v = " << d_v << ", Tk = " << Tk);
        CHECK(max_scaled_error(r.output.data, ref.output, 1.0) <= 2e-5);
      }
    }
  }
}
