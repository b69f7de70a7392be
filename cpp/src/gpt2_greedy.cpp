// Greedy decoding through an 8-bit copy of the embedding (Gpt2GreedyHead).
//
// A decode step is bound by the bytes it reads, and the LM head reads the
// whole float32 embedding (V × C) for one row of logits. The copy holds each
// row w_j as integers q_ji in [−127, 127] times a scale s_j, a quarter of the
// bytes; the step's hidden row h is copied the same way, as integers p_i
// times s_h, in 16 bits. The approximate logit A_j = s_h·s_j·Σ p_i·q_ji has
// an exact integer sum, and with ĥ_i = s_h·p_i, ŵ_ji = s_j·q_ji,
//   h_i·w_ji − ĥ_i·ŵ_ji = h_i·(w_ji − ŵ_ji) + ŵ_ji·(h_i − ĥ_i),
// so A_j is within ‖h‖₁·e_j + e_h·Σ|ŵ_ji| of the exact h·w_j (e_j, e_h: the
// largest rounding errors of the row's and h's copies). The float32 step's
// logit L_j adds its own rounding, at most γ_n·Σ|h_i·w_ji| ≤ γ_n·‖h‖·‖w_j‖
// (γ_n = n·u / (1 − n·u), u = 2⁻²⁴, in any order of the sums, fused or not,
// and Cauchy–Schwarz), and an absolute term for underflowed products. With
// B_j the sum of these, the token with the largest L_j lies among those with
// A_j + B_j ≥ max_k (A_k − B_k); only those are computed in float32, by the
// same dot product as step()'s, and the largest (the lowest id among equal
// ones) is step()'s argmax bit for bit. Where a logit or the bound is not
// finite, nothing is decided and the caller computes every logit.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "attnscope/gpt2.hpp"
#include "gpt2_internal.hpp"
#include "kernels/dot.hpp"
#include "kernels/dot_i8.hpp"
#include "kernels/multiply_add.hpp"
#include "parallel_kernels.hpp"

namespace attnscope {

namespace {

using Arch = xsimd::default_arch;

/// Rows per task of the approximate pass: a multiple of 4 streams.
constexpr std::size_t kVocabGrain = 256;

/// The largest magnitude of a row's integers.
constexpr double kRowLevels = 127.0;

/// Relative room for the double-precision arithmetic of the copies' errors,
/// of A_j and of the bound.
const double kSlack = std::ldexp(1.0, -50);

/// γ_n of the float32 step's dot products of n terms (see the top of the file).
double step_rounding(std::size_t n) {
  const double u = std::ldexp(1.0, -24);
  const double products = static_cast<double>(n) + 2.0;  // the last adds of the lanes' sums
  return products * u / (1.0 - products * u);
}

/// The hidden row's copy: integers times a scale.
struct HiddenCopy {
  double scale;
  double error;  // ≥ max |x_i − q_i·scale|
};

/// Integers x_i / scale, rounded, for values whose largest magnitude is
/// `largest` (scale = largest / levels), written to `out`.
HiddenCopy copy_hidden(const float* x, std::size_t n, double largest, double levels,
                       std::int16_t* out) {
  if (largest == 0.0) {
    std::fill(out, out + n, std::int16_t{0});
    return {0.0, 0.0};
  }
  const double scale = largest / levels, inverse = levels / largest;
  // The error is measured, not assumed, so rounding x_i · inverse may be off by one.
  double error = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double q = std::clamp(std::nearbyint(x[i] * inverse), -levels, levels);
    out[i] = static_cast<std::int16_t>(q);
    error = std::max(error, std::fabs(x[i] - q * scale));
  }
  return {scale, error + kSlack * largest};
}

/// What the bound needs of one embedding row w (see RowTerms), all upper
/// bounds where they are not exact.
struct RowCopy {
  double scale = 0.0, error = 0.0, magnitude = 0.0, norm = 0.0;
};

/// The row's 8-bit copy into `out` and its terms, in float batches: making
/// the head is a pass over the whole embedding, on every long generation.
/// Where the row is not finite, every term is infinite.
RowCopy copy_row(const float* w, std::size_t n, std::int8_t* out) {
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = batch::size;
  const std::size_t vec_end = n - n % W;
  batch largest_lanes(0.0f), squares_lanes(0.0f);
  for (std::size_t i = 0; i < vec_end; i += W) {
    const batch x = batch::load_unaligned(w + i);
    largest_lanes = xsimd::max(largest_lanes, xsimd::abs(x));
    squares_lanes = kernels::multiply_add(x, x, squares_lanes);
  }
  alignas(64) float lanes[W];
  largest_lanes.store_aligned(lanes);
  float largest = 0.0f;
  for (std::size_t l = 0; l < W; ++l) largest = std::max(largest, lanes[l]);
  float squares = xsimd::hadd(squares_lanes);
  for (std::size_t i = vec_end; i < n; ++i) {
    largest = std::max(largest, std::fabs(w[i]));
    squares += w[i] * w[i];
  }
  RowCopy copy;
  // A NaN or infinity makes the sum of squares NaN or infinite.
  if (!std::isfinite(squares)) {
    const double inf = std::numeric_limits<double>::infinity();
    return {inf, inf, inf, inf};
  }
  // The float32 sum is within γ_n of its exact value, and each square loses
  // at most 2⁻¹⁵⁰ below float32's normal range.
  copy.norm = std::sqrt(double{squares} * (1.0 + 2.0 * step_rounding(n)) +
                        static_cast<double>(n) * std::ldexp(1.0, -149));
  if (largest == 0.0f) {
    std::fill(out, out + n, std::int8_t{0});
    return copy;
  }
  const float top = static_cast<float>(kRowLevels);
  const float scale = largest / top, inverse = top / largest;
  const batch levels(top);
  // Adding 1.5·2²³ rounds a value within ±2²² to an integer, held in the low
  // bits of the sum's mantissa: its low byte is the integer as an int8, with
  // no conversion from float (which wasm does with range checks, value by value).
  const batch magic(12582912.0f);
  using ubatch = xsimd::batch<std::uint32_t, Arch>;
  alignas(64) std::uint32_t bits[W];
  batch error_lanes(0.0f), magnitude_lanes(0.0f);
  for (std::size_t i = 0; i < vec_end; i += W) {
    const batch x = batch::load_unaligned(w + i);
    // Off by one from x / scale at worst: the error is measured, not assumed.
    const batch shifted = xsimd::min(xsimd::max(x * batch(inverse), -levels), levels) + magic;
    const batch q = shifted - magic;
    error_lanes = xsimd::max(error_lanes, xsimd::abs(x - q * batch(scale)));
    magnitude_lanes += xsimd::abs(q);  // sums of integers below 2²⁴: exact
    xsimd::bitwise_cast<ubatch>(shifted).store_aligned(bits);
    for (std::size_t l = 0; l < W; ++l) {
      out[i + l] = static_cast<std::int8_t>(static_cast<std::uint8_t>(bits[l]));
    }
  }
  error_lanes.store_aligned(lanes);
  float error = 0.0f;
  for (std::size_t l = 0; l < W; ++l) error = std::max(error, lanes[l]);
  double magnitude = xsimd::hadd(magnitude_lanes);
  for (std::size_t i = vec_end; i < n; ++i) {
    const float q = std::clamp(std::nearbyint(w[i] * inverse), -top, top);
    out[i] = static_cast<std::int8_t>(q);
    error = std::max(error, std::fabs(w[i] - q * scale));
    magnitude += std::fabs(q);
  }
  copy.scale = scale;
  // The float32 error above rounds q·scale (by at most 2⁻²⁴·largest, or
  // 2⁻¹⁵⁰ below the normal range) and the difference (by 2⁻²⁴ of itself).
  copy.error = double{error} * (1.0 + std::ldexp(1.0, -22)) +
               double{largest} * std::ldexp(1.0, -23) + std::ldexp(1.0, -148);
  copy.magnitude = magnitude * scale;
  return copy;
}

}  // namespace

Gpt2GreedyHead::Gpt2GreedyHead(const Gpt2Model& model)
    : model_(&model),
      weights_version_(model.weights_version_),
      vocab_(model.config().vocab_size),
      channels_(model.config().d_model),
      stride_((model.config().d_model + kernels::kInt8Block - 1) / kernels::kInt8Block *
              kernels::kInt8Block) {
  // Every partial sum of a dot product stays within stride_ · 127 · levels < 2³¹.
  const double levels = std::floor(2147483647.0 / (kRowLevels * static_cast<double>(stride_)));
  hidden_levels_ = static_cast<std::int32_t>(std::min(levels, 32767.0));
  if (hidden_levels_ < 1) {
    throw Error("Gpt2GreedyHead: d_model " + std::to_string(channels_) +
                " is too wide for exact 32-bit sums");
  }
  try {
    rows_.assign(vocab_ * stride_, 0);
    terms_.assign(vocab_, RowTerms{});
  } catch (const std::bad_alloc&) {
    throw ResourceError("Gpt2GreedyHead: no memory for an 8-bit copy of the " +
                        std::to_string(vocab_) + " × " + std::to_string(channels_) + " embedding");
  }
  const float* wte = model.storage_.data();
  detail::parallel_ranges(vocab_, 64, vocab_ * channels_ * 4, [&](std::size_t v0, std::size_t v1) {
    for (std::size_t v = v0; v < v1; ++v) {
      // Weights are finite once a model is finished; should one not be, its
      // row's terms are infinite, and argmax() decides nothing.
      const RowCopy c = copy_row(wte + v * channels_, channels_, rows_.data() + v * stride_);
      terms_[v] = {c.scale, c.error, c.magnitude, c.norm};
    }
  });
}

std::optional<std::int64_t> Gpt2GreedyHead::argmax(const float* hidden, const float* wte) const {
  const std::size_t V = vocab_, C = channels_;
  double hidden_l1 = 0.0, hidden_norm2 = 0.0, hidden_largest = 0.0;
  for (std::size_t i = 0; i < C; ++i) {
    const double x = hidden[i];
    hidden_l1 += std::fabs(x);
    hidden_norm2 += x * x;
    hidden_largest = std::max(hidden_largest, std::fabs(x));
  }
  const double hidden_norm = std::sqrt(hidden_norm2);
  if (!std::isfinite(hidden_norm) || !std::isfinite(hidden_l1)) return std::nullopt;
  std::vector<std::int16_t> hidden_copy(stride_, 0);
  const HiddenCopy hidden_q = copy_hidden(hidden, C, hidden_largest,
                                          static_cast<double>(hidden_levels_), hidden_copy.data());

  std::vector<std::int32_t> sums;
  std::vector<double> upper;  // A_j + B_j
  try {
    sums.resize(V);
    upper.resize(V);
  } catch (const std::bad_alloc&) {
    throw ResourceError("Gpt2Model::step_greedy: no memory for " + std::to_string(V) +
                        " approximate logits");
  }
  const std::int8_t* rows = rows_.data();
  const std::int16_t* h = hidden_copy.data();
  detail::parallel_ranges(V, kVocabGrain, V * C, [&](std::size_t v0, std::size_t v1) {
    detail::in_four_streams(
        v0, v1,
        [&](std::size_t v, std::size_t quarter) {
          const std::int8_t* const rows4[4] = {rows + v * stride_, rows + (v + quarter) * stride_,
                                               rows + (v + 2 * quarter) * stride_,
                                               rows + (v + 3 * quarter) * stride_};
          std::int32_t dots[4];
          kernels::dot4_i8(h, rows4, stride_, dots);
          for (std::size_t j = 0; j < 4; ++j) sums[v + j * quarter] = dots[j];
        },
        [&](std::size_t v) { sums[v] = kernels::dot_i8(h, rows + v * stride_, stride_); });
  });

  const double rounding = step_rounding(C) * hidden_norm;
  // Products below float32's normal range lose up to 2⁻¹⁵⁰ each.
  const double underflow = static_cast<double>(C) * std::ldexp(1.0, -149);
  // Far below float32's largest value, so that no float32 logit within the
  // bound of a finite approximation can overflow.
  const double kLargest = 1e37;
  double floor = -std::numeric_limits<double>::infinity();
  for (std::size_t v = 0; v < V; ++v) {
    const RowTerms& t = terms_[v];
    const double a = hidden_q.scale * t.scale * static_cast<double>(sums[v]);
    const double bound = (hidden_l1 * t.error + hidden_q.error * t.magnitude + rounding * t.norm +
                          underflow + kSlack * std::fabs(a)) *
                         (1.0 + 1e-6);
    if (!(std::fabs(a) + bound < kLargest)) return std::nullopt;
    floor = std::max(floor, a - bound);
    upper[v] = a + bound;
  }
  std::int64_t best = -1;
  float best_logit = 0.0f;
  for (std::size_t v = 0; v < V; ++v) {
    if (upper[v] < floor) continue;
    const float logit = kernels::dot<Arch>(hidden, wte + v * C, C);
    if (best < 0 || logit > best_logit) {
      best = static_cast<std::int64_t>(v);
      best_logit = logit;
    }
  }
  return best;
}

}  // namespace attnscope
