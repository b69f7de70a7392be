// Scaled dot-product attention: the meaning of each step and each mask.
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
using attnscope::testing::to_double;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

AttentionOptions traced(Mask mask = {}) {
  AttentionOptions o;
  o.mask = std::move(mask);
  o.trace = true;
  return o;
}

}  // namespace

TEST_CASE("version and simd_arch name the build", "[attention]") {
  // The library's version (CMake's project version) is the npm package's.
  CHECK(std::string(version()) == ATTN_PACKAGE_JSON_VERSION);
  CHECK_FALSE(std::string(simd_arch()).empty());
}

TEST_CASE("attention matches the double reference at ranks 2, 3 and 4", "[attention]") {
  std::mt19937 rng(31);
  const std::size_t B = 2, H = 3, T = 11, d_k = 6, d_v = 5;
  for (std::size_t rank : {2u, 3u, 4u}) {
    const std::size_t b = rank == 4 ? B : 1, h = rank >= 3 ? H : 1;
    Shape qs = {T, d_k}, vs = {T, d_v};
    if (rank >= 3) {
      qs.insert(qs.begin(), H);
      vs.insert(vs.begin(), H);
    }
    if (rank == 4) {
      qs.insert(qs.begin(), B);
      vs.insert(vs.begin(), B);
    }
    const Tensor q = random_tensor(rng, qs), k = random_tensor(rng, qs), v = random_tensor(rng, vs);
    for (bool trace : {true, false}) {
      AttentionOptions o;
      o.trace = trace;
      const AttentionResult r = attention(q, k, v, o);
      const auto ref = reference_attention(to_double(q.data), to_double(k.data), to_double(v.data),
                                           b, h, T, d_k, d_v, 1.0 / std::sqrt(double(d_k)), {});
      INFO("rank = " << rank << ", trace = " << trace);
      CHECK(r.output.shape == vs);
      CHECK(max_scaled_error(r.output.data, ref.output, 1.0) <= 1e-5);
      CHECK(r.fully_masked.size() == b * h * T);
      CHECK(r.fully_masked_count == 0);
      CHECK(r.trace.has_value() == trace);
      if (trace) {
        Shape square = qs;
        square.back() = T;
        CHECK(r.trace->weights.shape == square);
        CHECK(max_scaled_error(r.trace->weights.data, ref.weights, 1e-6) <= 1e-5);
      }
    }
  }
}

TEST_CASE("attention on TensorViews equals attention on Tensors bit for bit", "[attention]") {
  // q, k and v side by side in one caller-owned buffer, as views of it.
  std::mt19937 rng(47);
  const std::size_t H = 2, T = 9, d = 5, n = H * T * d;
  const Tensor q = random_tensor(rng, {H, T, d}), k = random_tensor(rng, {H, T, d}),
               v = random_tensor(rng, {H, T, d});
  std::vector<float> buffer;
  for (const Tensor* t : {&q, &k, &v}) buffer.insert(buffer.end(), t->data.begin(), t->data.end());
  const TensorView qv({H, T, d}, buffer.data(), n), kv({H, T, d}, buffer.data() + n, n),
      vv({H, T, d}, buffer.data() + 2 * n, n);
  for (bool trace : {false, true}) {
    AttentionOptions o;
    o.trace = trace;
    o.mask.causal = true;
    const AttentionResult from_tensors = attention(q, k, v, o);
    const AttentionResult from_views = attention(qv, kv, vv, o);
    INFO("trace = " << trace);
    CHECK(from_views.output.shape == from_tensors.output.shape);
    CHECK(from_views.output.data == from_tensors.output.data);
    CHECK(from_views.fully_masked == from_tensors.fully_masked);
    if (trace) CHECK(from_views.trace->weights.data == from_tensors.trace->weights.data);
  }
}

TEST_CASE("the trace holds scores, scaled, masked and weights step by step", "[attention]") {
  std::mt19937 rng(32);
  const std::size_t T = 9, d = 4;
  const Tensor q = random_tensor(rng, {T, d}), k = random_tensor(rng, {T, d}),
               v = random_tensor(rng, {T, d});
  Mask mask;
  mask.additive = random_tensor(rng, {T, T});
  AttentionOptions o = traced(mask);
  o.scale = Scale::custom(0.25f);
  const AttentionResult r = attention(q, k, v, o);
  const AttentionTrace& t = *r.trace;
  for (std::size_t i = 0; i < T; ++i) {
    for (std::size_t j = 0; j < T; ++j) {
      double s = 0.0;
      for (std::size_t p = 0; p < d; ++p) s += double(q.data[i * d + p]) * k.data[j * d + p];
      const std::size_t at = i * T + j;
      CHECK(t.scores.data[at] == Approx(s).margin(1e-6));
      CHECK(t.scaled.data[at] == t.scores.data[at] * 0.25f);
      CHECK(t.masked.data[at] == t.scaled.data[at] + mask.additive.data[at]);
    }
  }
  const AttentionResult none = attention(q, k, v, [&] {
    AttentionOptions n = traced();
    n.scale = Scale::none();
    return n;
  }());
  CHECK(none.trace->scaled.data == none.trace->scores.data);
  CHECK(Scale::inv_sqrt_dk().factor_for(16) == 0.25f);
}

TEST_CASE("causal mask: weights above the diagonal are exactly zero", "[attention][mask]") {
  std::mt19937 rng(33);
  const std::size_t H = 2, T = 13, d = 4;
  const Tensor q = random_tensor(rng, {H, T, d}), k = random_tensor(rng, {H, T, d}),
               v = random_tensor(rng, {H, T, d});
  Mask mask;
  mask.causal = true;
  const AttentionResult r = attention(q, k, v, traced(mask));
  for (std::size_t h = 0; h < H; ++h) {
    for (std::size_t i = 0; i < T; ++i) {
      double sum = 0.0;
      for (std::size_t j = 0; j < T; ++j) {
        const std::size_t at = (h * T + i) * T + j;
        sum += r.trace->weights.data[at];
        if (j > i) {
          CHECK(r.trace->weights.data[at] == 0.0f);
          CHECK(r.trace->masked.data[at] == -kInf);
        } else {
          CHECK(r.trace->weights.data[at] > 0.0f);
          CHECK(r.trace->masked.data[at] == r.trace->scaled.data[at]);
        }
      }
      CHECK(sum == Approx(1.0).epsilon(1e-6));
    }
  }
  // The first query sees only itself, so its output is the first value row.
  for (std::size_t c = 0; c < d; ++c) CHECK(r.output.data[c] == Approx(v.data[c]).epsilon(1e-6));
}

TEST_CASE("padding mask: keys past each sequence's length get exactly zero weight",
          "[attention][mask]") {
  std::mt19937 rng(34);
  const std::size_t B = 3, H = 2, T = 10, d = 3;
  const Tensor q = random_tensor(rng, {B, H, T, d}), k = random_tensor(rng, {B, H, T, d}),
               v = random_tensor(rng, {B, H, T, d});
  Mask mask;
  mask.lengths = {10, 4, 1};
  for (bool trace : {true, false}) {
    AttentionOptions o = traced(mask);
    o.trace = trace;
    const AttentionResult r = attention(q, k, v, o);
    const auto ref = reference_attention(to_double(q.data), to_double(k.data), to_double(v.data), B,
                                         H, T, d, d, 1.0 / std::sqrt(3.0), mask);
    CHECK(max_scaled_error(r.output.data, ref.output, 1.0) <= 1e-5);
    CHECK(r.fully_masked_count == 0);
    if (!trace) continue;
    for (std::size_t b = 0; b < B; ++b) {
      for (std::size_t h = 0; h < H; ++h) {
        for (std::size_t i = 0; i < T; ++i) {
          for (std::size_t j = mask.lengths[b]; j < T; ++j) {
            CHECK(r.trace->weights.data[((b * H + h) * T + i) * T + j] == 0.0f);
          }
        }
      }
    }
  }
  // Padded keys' values must not leak: changing them leaves the output alone.
  Tensor k2 = k, v2 = v;
  for (std::size_t h = 0; h < H; ++h) {
    for (std::size_t j = 4; j < T; ++j) {
      for (std::size_t c = 0; c < d; ++c) {
        k2.data[((1 * H + h) * T + j) * d + c] = 50.0f;
        v2.data[((1 * H + h) * T + j) * d + c] = 1e6f;
      }
    }
  }
  AttentionOptions o = traced(mask);
  const AttentionResult a = attention(q, k, v, o), b = attention(q, k2, v2, o);
  for (std::size_t i = 0; i < H * T * d; ++i) {
    CHECK(a.output.data[H * T * d + i] == b.output.data[H * T * d + i]);
  }
}

TEST_CASE("additive and boolean masks, alone and combined", "[attention][mask]") {
  std::mt19937 rng(35);
  const std::size_t B = 2, H = 2, T = 7, d = 4;
  const Tensor q = random_tensor(rng, {B, H, T, d}), k = random_tensor(rng, {B, H, T, d}),
               v = random_tensor(rng, {B, H, T, d});
  for (std::size_t rank : {2u, 3u, 4u}) {
    Shape shape = {T, T};
    if (rank >= 3) shape.insert(shape.begin(), rank == 4 ? H : B);
    if (rank == 4) shape.insert(shape.begin(), B);
    Mask mask;
    mask.additive = random_tensor(rng, shape, -2.0f, 2.0f);
    mask.additive.data[3] = -kInf;
    mask.allowed.shape = shape;
    mask.allowed.data.resize(mask.additive.size());
    for (std::size_t i = 0; i < mask.allowed.data.size(); ++i) mask.allowed.data[i] = (i % 5) != 2;
    const AttentionResult r = attention(q, k, v, traced(mask));
    const auto ref = reference_attention(to_double(q.data), to_double(k.data), to_double(v.data), B,
                                         H, T, d, d, 0.5, mask);
    INFO("mask rank = " << rank);
    CHECK(max_scaled_error(r.output.data, ref.output, 1.0) <= 1e-5);
    CHECK(max_scaled_error(r.trace->weights.data, ref.weights, 1e-6) <= 1e-5);
    for (std::size_t i = 0; i < ref.weights.size(); ++i) {
      if (ref.weights[i] == 0.0) {
        CHECK(r.trace->weights.data[i] == 0.0f);
        CHECK(r.trace->masked.data[i] == -kInf);
      }
    }
  }
}

TEST_CASE("softmax is invariant to a constant added to every score", "[attention]") {
  std::mt19937 rng(36);
  const std::size_t T = 12, d = 5;
  const Tensor q = random_tensor(rng, {T, d}), k = random_tensor(rng, {T, d}),
               v = random_tensor(rng, {T, d});
  const AttentionResult plain = attention(q, k, v, traced());
  for (float shift : {-70.0f, -3.0f, 5.0f, 90.0f, 1e4f}) {
    Mask mask;
    mask.additive = Tensor({T, T}, std::vector<float>(T * T, shift));
    const AttentionResult shifted = attention(q, k, v, traced(mask));
    INFO("shift = " << shift);
    // At 1e4 the float grid spacing (1e-3) perturbs the logits themselves.
    const double tol = std::abs(shift) > 100 ? 5e-3 : 1e-5;
    CHECK(max_scaled_error(shifted.trace->weights.data, plain.trace->weights.data, 1e-3) <= tol);
    CHECK(max_scaled_error(shifted.output.data, plain.output.data, 1.0) <= tol);
  }
}

TEST_CASE("attention is exact for scores of 90..100 and ±1e4", "[attention]") {
  const std::size_t T = 9;
  // d_k = 1, no scaling: the scores are q_i·k_j directly.
  std::vector<float> kd(T), vd(T);
  for (std::size_t j = 0; j < T; ++j) {
    kd[j] = 90.0f + float(j) * 1.25f;
    vd[j] = float(j);
  }
  const Tensor q({T, 1}, std::vector<float>(T, 1.0f)), k({T, 1}, kd), v({T, 1}, vd);
  AttentionOptions o = traced();
  o.scale = Scale::none();
  for (bool trace : {true, false}) {
    o.trace = trace;
    const AttentionResult r = attention(q, k, v, o);
    const auto ref = reference_attention(to_double(q.data), to_double(k.data), to_double(v.data), 1,
                                         1, T, 1, 1, 1.0, {});
    CHECK(max_scaled_error(r.output.data, ref.output, 1.0) <= 1e-5);
    if (trace) CHECK(max_scaled_error(r.trace->weights.data, ref.weights, 1e-30) <= 2e-6);
  }
  std::vector<float> ke(T);
  for (std::size_t j = 0; j < T; ++j) ke[j] = (j == 4) ? 1e4f : -1e4f;
  const Tensor k_extreme({T, 1}, ke);
  for (bool trace : {true, false}) {
    o.trace = trace;
    const AttentionResult r = attention(q, k_extreme, v, o);
    for (std::size_t i = 0; i < T; ++i) CHECK(r.output.data[i] == 4.0f);
    if (trace) {
      for (std::size_t j = 0; j < T; ++j) CHECK(r.trace->weights.data[j] == (j == 4 ? 1.0f : 0.0f));
    }
  }
}
