// Row softmax in XNNPACK's three steps: row max → exp(x − max) stored with
// its sum → scale by 1/sum. The steps are exposed on their own because the
// flash-attention kernel reuses them on tiles.
//
// A row whose entries are all -inf (every key masked) gets all-zero weights
// and is reported, never NaN. Masked (-inf) entries get exactly 0.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include <xsimd/xsimd.hpp>

#include "kernels/fast_max.hpp"
#include "kernels/isa_namespace.hpp"
#include "kernels/vec_exp.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {

inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();

/// The largest lane (xsimd 8.1 has no reduce_max).
template <class Arch>
float lane_max(xsimd::batch<float, Arch> v) {
  alignas(64) float lanes[xsimd::batch<float, Arch>::size];
  v.store_aligned(lanes);
  float result = lanes[0];
  for (float lane : lanes) result = std::max(result, lane);
  return result;
}

/// max of x[0..n)·scale (each product rounded to float, as a separate
/// multiply would); -inf for an all -inf row. x holds no NaN (scores never
/// do).
template <class Arch = xsimd::default_arch>
float row_max(const float* x, std::size_t n, float scale = 1.0f) {
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = batch::size;
  const std::size_t vec_end = n - n % W;
  float result = kNegInf;
  if (vec_end > 0) {
    // Two chains, so that consecutive maxima do not wait on each other.
    const batch f(scale);
    batch acc0(kNegInf), acc1(kNegInf);
    std::size_t i = 0;
    for (; i + 2 * W <= vec_end; i += 2 * W) {
      acc0 = max_no_nan(acc0, batch::load_unaligned(x + i) * f);
      acc1 = max_no_nan(acc1, batch::load_unaligned(x + i + W) * f);
    }
    if (i < vec_end) acc0 = max_no_nan(acc0, batch::load_unaligned(x + i) * f);
    result = lane_max(max_no_nan(acc0, acc1));
  }
  for (std::size_t i = vec_end; i < n; ++i) result = std::max(result, x[i] * scale);
  return result;
}

/// y[i] = exp(x[i] − max) and returns the sum; x and y may alias.
/// `max` must be finite.
template <class Arch = xsimd::default_arch>
float exp_sum_row(const float* x, float* y, std::size_t n, float max) {
  using batch = xsimd::batch<float, Arch>;
  const std::size_t vec_end = n - n % batch::size;
  const batch shift(max);
  batch acc(0.0f);
  for (std::size_t i = 0; i < vec_end; i += batch::size) {
    const batch e = vec_exp<Arch>(batch::load_unaligned(x + i) - shift);
    e.store_unaligned(y + i);
    acc += e;
  }
  float sum = vec_end > 0 ? xsimd::hadd(acc) : 0.0f;
  if (vec_end < n) {
    alignas(64) float tail[batch::size];
    std::fill(tail, tail + batch::size, kNegInf);
    std::copy(x + vec_end, x + n, tail);
    const batch e = vec_exp<Arch>(batch::load_unaligned(tail) - shift);
    e.store_unaligned(tail);
    for (std::size_t i = vec_end; i < n; ++i) {
      y[i] = tail[i - vec_end];
      sum += y[i];
    }
  }
  return sum;
}

namespace detail {

/// The flash kernel's exp loops run in two passes over chunks of a row: the
/// first reduces each exponent to exp2_parts, storing the fraction t in y
/// and 2^n in a scratch chunk; the second, exp2_finish_chunk, evaluates the
/// polynomial. Each pass's chain of dependent operations is short enough for
/// the CPU to overlap many batches, where one pass doing both left it
/// waiting on latency (docs/performance/journal.md). A multiple of 2·W, so that the
/// sum's pairs never straddle chunks.
inline constexpr std::size_t kExpChunk = 128;

/// The second pass over one chunk of m floats: y[i] = exp2_fraction(y[i]) ·
/// pow2n[i], added to sum two batches at a time, then a lone last batch.
template <class Arch>
xsimd::batch<float, Arch> exp2_finish_chunk(float* y, const float* pow2n, std::size_t m,
                                            xsimd::batch<float, Arch> sum) {
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = batch::size;
  static_assert(kExpChunk % (2 * W) == 0, "a chunk must hold whole pairs of batches");
  std::size_t i = 0;
  for (; i + 2 * W <= m; i += 2 * W) {
    const batch e0 =
        exp2_fraction<Arch>(batch::load_unaligned(y + i)) * batch::load_aligned(pow2n + i);
    const batch e1 =
        exp2_fraction<Arch>(batch::load_unaligned(y + i + W)) * batch::load_aligned(pow2n + i + W);
    e0.store_unaligned(y + i);
    e1.store_unaligned(y + i + W);
    sum += e0 + e1;
  }
  if (i < m) {
    const batch e0 =
        exp2_fraction<Arch>(batch::load_unaligned(y + i)) * batch::load_aligned(pow2n + i);
    e0.store_unaligned(y + i);
    sum += e0;
  }
  return sum;
}

/// y[i] = 2^e[i] in those two passes, where `exponent` maps each loaded batch
/// of x, in order, to its batch of e (within [-127, 127]); returns the sum of
/// y. n is a multiple of the batch size; x and y may alias.
template <class Arch, class Exponent>
float exp2_sum_in_chunks(const float* x, float* y, std::size_t n, Exponent exponent) {
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = batch::size;
  alignas(64) float pow2n[kExpChunk];
  batch sum(0.0f);
  for (std::size_t c0 = 0; c0 < n; c0 += kExpChunk) {
    const std::size_t m = std::min(kExpChunk, n - c0);
    for (std::size_t i = 0; i < m; i += W) {
      const Exp2Parts<Arch> parts = exp2_parts<Arch>(exponent(batch::load_unaligned(x + c0 + i)));
      parts.fraction.store_unaligned(y + c0 + i);
      parts.pow2n.store_aligned(pow2n + i);
    }
    sum = exp2_finish_chunk<Arch>(y + c0, pow2n, m, sum);
  }
  return xsimd::hadd(sum);
}

}  // namespace detail

/// The flash kernel's softmax step: with z[i] = x[i]·scale (rounded to float,
/// exactly as the traced path's separate scaling), y[i] = exp(z[i] − shift);
/// returns the sum of y, with max(z) (−inf for an all −inf row) found in the
/// same pass. n is a multiple of the batch size; x and y may alias. The
/// caller keeps z[i] − shift <= 88. exp(t) is computed as 2^(t·log2 e) with
/// vec_exp2's formula: the rounding of t·log2 e costs relative |t|·6e-8,
/// which only matters where the weight e^t is already negligible (|t| > 20),
/// and saves the ln 2 range reduction of vec_exp.
template <class Arch = xsimd::default_arch>
float exp_sum_max_row(const float* x, float* y, std::size_t n, float scale, float shift,
                      float* z_max) {
  using batch = xsimd::batch<float, Arch>;
  const batch f(scale), s(shift), log2e(kLog2e);
  batch max(kNegInf);
  const float sum = detail::exp2_sum_in_chunks<Arch>(x, y, n, [&](batch scores) {
    const batch z = scores * f;
    max = max_no_nan(max, z);
    return clamp_exp2_argument<Arch>((z - s) * log2e);
  });
  *z_max = lane_max(max);
  return sum;
}

/// exp_sum_max_row's weights where the exponents are known to be in range:
/// y[i] = 2^((x[i] − shift)·factor), returning the sum of y, with no clamp
/// and no max: a subtraction, a multiply and the exponential per score. The
/// caller guarantees |(x[i] − shift)·factor| <= 126 for every i. For a
/// power-of-two scale, factor = scale·log2 e and shift = max/scale, every
/// weight equals exp_sum_max_row(x, …, scale, max)'s bit for bit, and so
/// does the sum (same order): x[i]·scale, max/scale and (x[i] − shift)·scale
/// are then exact, and (x[i] − shift)·factor = (x[i]·scale − max)·log2 e.
/// n is a multiple of the batch size; x and y may alias.
template <class Arch = xsimd::default_arch>
float exp_sum_row_in_range(const float* x, float* y, std::size_t n, float shift, float factor) {
  using batch = xsimd::batch<float, Arch>;
  const batch s(shift), f(factor);
  return detail::exp2_sum_in_chunks<Arch>(x, y, n, [&](batch scores) { return (scores - s) * f; });
}

/// y[i] *= factor.
template <class Arch = xsimd::default_arch>
void scale_row(float* y, std::size_t n, float factor) {
  using batch = xsimd::batch<float, Arch>;
  const std::size_t vec_end = n - n % batch::size;
  const batch f(factor);
  for (std::size_t i = 0; i < vec_end; i += batch::size) {
    (batch::load_unaligned(y + i) * f).store_unaligned(y + i);
  }
  for (std::size_t i = vec_end; i < n; ++i) y[i] *= factor;
}

/// Softmax of one row into y (x and y may alias). Returns false, with y all
/// zero, when every entry is -inf.
template <class Arch = xsimd::default_arch>
bool softmax_row(const float* x, float* y, std::size_t n) {
  const float max = row_max<Arch>(x, n);
  if (max == kNegInf) {
    std::fill(y, y + n, 0.0f);
    return false;
  }
  const float sum = exp_sum_row<Arch>(x, y, n, max);
  scale_row<Arch>(y, n, 1.0f / sum);
  return true;
}

/// Softmax of each of `rows` rows of length n; has_keys[r] = 0 for a row that
/// was entirely -inf (its weights are zero). has_keys may be null.
template <class Arch = xsimd::default_arch>
void softmax_rows(const float* x, float* y, std::size_t rows, std::size_t n,
                  unsigned char* has_keys) {
  for (std::size_t r = 0; r < rows; ++r) {
    const bool ok = softmax_row<Arch>(x + r * n, y + r * n, n);
    if (has_keys) has_keys[r] = ok ? 1 : 0;
  }
}

/// Reference: the same definition evaluated in double precision.
inline void softmax_rows_reference(const float* x, double* y, std::size_t rows, std::size_t n,
                                   unsigned char* has_keys) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    double* yr = y + r * n;
    double max = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i) max = std::max(max, static_cast<double>(xr[i]));
    const bool ok = max != -std::numeric_limits<double>::infinity();
    if (has_keys) has_keys[r] = ok ? 1 : 0;
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      yr[i] = ok ? std::exp(static_cast<double>(xr[i]) - max) : 0.0;
      sum += yr[i];
    }
    if (ok) {
      for (std::size_t i = 0; i < n; ++i) yr[i] /= sum;
    }
  }
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
