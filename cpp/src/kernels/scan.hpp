// Whole-array scans behind the argument checks: every input is scanned for
// NaN and inf, and the fast path bounds its scores and sums, on every call.
// Scalar loops with an early exit do not vectorise, and at T = 256 they cost
// more than a tenth of a call in wasm; these keep the common case (all
// values fine) in SIMD and leave finding the culprit to the caller's scalar
// loop.
#pragma once

#include <cmath>
#include <cstddef>

#include <xsimd/xsimd.hpp>

#include "kernels/fast_max.hpp"
#include "kernels/isa_namespace.hpp"
#include "kernels/multiply_add.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {

/// True when x[0..n) holds no NaN and no ±inf.
template <class Arch = xsimd::default_arch>
bool all_finite(const float* x, std::size_t n) {
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = batch::size;
  // x·0 is 0 for finite x and NaN for NaN or ±inf; NaN survives the sums.
  // Four sums, so that the adds' latency does not bound the loop.
  batch acc0(0.0f), acc1(0.0f), acc2(0.0f), acc3(0.0f);
  const batch zero(0.0f);
  std::size_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    acc0 += batch::load_unaligned(x + i) * zero;
    acc1 += batch::load_unaligned(x + i + W) * zero;
    acc2 += batch::load_unaligned(x + i + 2 * W) * zero;
    acc3 += batch::load_unaligned(x + i + 3 * W) * zero;
  }
  float tail = 0.0f;
  for (; i < n; ++i) tail += x[i] * 0.0f;
  return !std::isnan(xsimd::hadd((acc0 + acc1) + (acc2 + acc3)) + tail);
}

/// max |x[i]| over x[0..n) (0 for n = 0); x holds no NaN.
template <class Arch = xsimd::default_arch>
float max_abs(const float* x, std::size_t n) {
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = batch::size;
  batch acc0(0.0f), acc1(0.0f);
  std::size_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    acc0 = max_no_nan(acc0, xsimd::abs(batch::load_unaligned(x + i)));
    acc1 = max_no_nan(acc1, xsimd::abs(batch::load_unaligned(x + i + W)));
  }
  alignas(64) float lanes[W];
  max_no_nan(acc0, acc1).store_aligned(lanes);
  float result = 0.0f;
  for (float lane : lanes) result = result < lane ? lane : result;
  for (; i < n; ++i) result = result < std::abs(x[i]) ? std::abs(x[i]) : result;
  return result;
}

/// The instruction set of the sum_of_squares behind the score bound
/// (attention_checks.cpp): the baseline one, which the decode kernel also
/// uses for its key norms when it is compiled for a wider set, so that both
/// give the same float to the bit (the kernels are compiled with
/// -ffp-contract=off, so the same instructions round alike).
#if defined(ATTN_DISPATCH)
using KeyNormArch = xsimd::sse2;
#else
using KeyNormArch = xsimd::default_arch;
#endif

/// Sum of squares of x[0..n) in float: +inf when it overflows, in which
/// case the caller recomputes in double.
template <class Arch = xsimd::default_arch>
float sum_of_squares(const float* x, std::size_t n) {
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = batch::size;
  batch acc(0.0f);
  std::size_t i = 0;
  for (; i + W <= n; i += W) {
    const batch v = batch::load_unaligned(x + i);
    acc = multiply_add(v, v, acc);
  }
  float result = xsimd::hadd(acc);
  for (; i < n; ++i) result += x[i] * x[i];
  return result;
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
