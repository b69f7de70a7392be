// exp and exp2 on xsimd batches, and their scalar references.
//
// xsimd::exp converts float to int with _mm_cvtps_epi32, which Emscripten
// emulates lane by lane; this version rounds with the "magic number" trick
// and builds 2^n with a bitwise cast, so it stays in SIMD registers.
//
// Range: exp(x) = 0 exactly for x < ln(FLT_MIN) ≈ -87.34 (including -inf),
// +inf for x > 88.376 (float exp overflows at 88.72; softmax only ever
// evaluates x <= 0). Relative error about 1e-7 in between; NaN stays NaN.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include <xsimd/xsimd.hpp>

#include "kernels/fast_max.hpp"
#include "kernels/isa_namespace.hpp"
#include "kernels/multiply_add.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {

inline constexpr float kExpMin = -87.3365402f;         // ln(FLT_MIN): below it, 0
inline constexpr float kExpMax = 88.3762589f;          // 127.5·ln 2: above it, +inf
inline constexpr float kLog2e = 1.44269504088896341f;  // e^t = 2^(t·log2 e)

template <class Arch>
xsimd::batch<float, Arch> vec_exp(xsimd::batch<float, Arch> x) {
  using batch = xsimd::batch<float, Arch>;
  using ibatch = xsimd::batch<std::int32_t, Arch>;
  // 1.5·2^23 + 127: adding it rounds x·log2(e) to an integer n held in the
  // low mantissa bits, already biased by the float exponent bias 127.
  const batch magic(12582912.0f + 127.0f);
  const batch log2e(kLog2e);
  const batch ln2_hi(0.693359375f);  // ln 2 split so n·ln2_hi is exact
  const batch ln2_lo(-2.12194440e-4f);

  // No clamping: outside [kExpMin, kExpMax] the lanes compute garbage that
  // the two selects at the end replace (cheaper than min/max, which wasm
  // emulates as compare + bitselect).
  const batch shifted = multiply_add(x, log2e, magic);
  const batch n = shifted - magic;
  batch r = xsimd::fnma(n, ln2_hi, x);  // x - n·ln2_hi
  r = xsimd::fnma(n, ln2_lo, r);

  // Cephes expf polynomial on |r| <= ln(2)/2.
  batch p(1.9875691500e-4f);
  p = multiply_add(p, r, batch(1.3981999507e-3f));
  p = multiply_add(p, r, batch(8.3334519073e-3f));
  p = multiply_add(p, r, batch(4.1665795894e-2f));
  p = multiply_add(p, r, batch(1.6666665459e-1f));
  p = multiply_add(p, r, batch(5.0000001201e-1f));
  p = multiply_add(p * r, r, r + batch(1.0f));

  // The biased exponent n+127 sits in the low 9 bits of `shifted`; moving
  // them to bit 23 gives the float 2^n.
  const ibatch bits = xsimd::bitwise_cast<ibatch>(shifted) << 23;
  const batch pow2n = xsimd::bitwise_cast<batch>(bits);
  batch y = p * pow2n;
  y = xsimd::select(x < batch(kExpMin), batch(0.0f), y);
  y = xsimd::select(x > batch(kExpMax), batch(INFINITY), y);
  return y;
}

namespace detail {

// y[i] = f(x[i]) batch by batch; the tail goes through one zero-padded batch
// so that every element gets the same formula. x and y may alias.
template <class Arch, class F>
void map_batches(const float* x, float* y, std::size_t n, F f) {
  using batch = xsimd::batch<float, Arch>;
  const std::size_t vec_end = n - n % batch::size;
  for (std::size_t i = 0; i < vec_end; i += batch::size) {
    f(batch::load_unaligned(x + i)).store_unaligned(y + i);
  }
  if (vec_end == n) return;
  alignas(64) float tail[batch::size] = {};
  for (std::size_t i = vec_end; i < n; ++i) tail[i - vec_end] = x[i];
  f(batch::load_unaligned(tail)).store_unaligned(tail);
  for (std::size_t i = vec_end; i < n; ++i) y[i] = tail[i - vec_end];
}

}  // namespace detail

/// y[i] = exp(x[i]); x and y may alias.
template <class Arch = xsimd::default_arch>
void vec_exp(const float* x, float* y, std::size_t n) {
  detail::map_batches<Arch>(x, y, n, [](auto b) { return vec_exp<Arch>(b); });
}

/// x = n + t for 2^x = 2^n · 2^t: n an integer, t in [-0.5, 0.5].
template <class Arch>
struct Exp2Parts {
  xsimd::batch<float, Arch> fraction;  // t, exact
  xsimd::batch<float, Arch> pow2n;     // the float 2^n (0 for n = -127)
};

/// Splits x in [-127, 127] as Exp2Parts: 2^x = exp2_fraction(t) · 2^n.
template <class Arch>
Exp2Parts<Arch> exp2_parts(xsimd::batch<float, Arch> x) {
  using batch = xsimd::batch<float, Arch>;
  using ibatch = xsimd::batch<std::int32_t, Arch>;
  const batch magic(12582912.0f + 127.0f);  // as in vec_exp: round, biased by 127
  const batch shifted = x + magic;
  const batch n = shifted - magic;
  // The biased exponent n + 127 sits in the low 9 bits of `shifted`; moving
  // them to bit 23 gives the float 2^n.
  return {x - n, xsimd::bitwise_cast<batch>(xsimd::bitwise_cast<ibatch>(shifted) << 23)};
}

/// 2^t for t in [-0.5, 0.5]: a degree-6 fit of relative error 1.9e-9. The
/// exp loops are bound by the latency of this chain rather than by their
/// adds, so the terms of degree 2 and up are paired (Estrin's scheme) and
/// the rest stays Horner's 1 + t·(c1 + t·r): 9 dependent operations against
/// Horner's 12, one multiply more, and Horner's rounding (pairing the low
/// terms too measured 1.3e-7 against 8.3e-8). Exactly 1 at t = 0.
template <class Arch>
xsimd::batch<float, Arch> exp2_fraction(xsimd::batch<float, Arch> t) {
  using batch = xsimd::batch<float, Arch>;
  const batch t2 = t * t;
  const batch c23 = multiply_add(t, batch(5.5503286421e-2f), batch(2.4022646248e-1f));
  const batch c45 = multiply_add(t, batch(1.3399930904e-3f), batch(9.6184890717e-3f));
  const batch c456 = multiply_add(t2, batch(1.5345806605e-4f), c45);
  const batch r = multiply_add(t2, c456, c23);
  const batch q = multiply_add(t, r, batch(6.9314718246e-1f));
  return multiply_add(t, q, batch(1.0f));
}

// 2^x without the clamp, for x in [-127, 127]: what vec_exp2 computes
// after clamping, and what the flash kernel's exp loops compute, calling
// the two parts in separate passes (exp2_sum_in_chunks). Relative error
// 1.05e-7 at most where 2^x is normal (measured in float arithmetic on every
// float in [-1, 1] and on steps of 1.3e-3 out to ±126).
template <class Arch>
xsimd::batch<float, Arch> vec_exp2_in_range(xsimd::batch<float, Arch> x) {
  const Exp2Parts<Arch> parts = exp2_parts<Arch>(x);
  return exp2_fraction<Arch>(parts.fraction) * parts.pow2n;
}

/// max(x, -127), which takes x <= 127 into vec_exp2_in_range's domain:
/// clamping at -127 makes 2^n's exponent field 0, so the result is 0
/// without a compare and select (-inf included).
template <class Arch>
xsimd::batch<float, Arch> clamp_exp2_argument(xsimd::batch<float, Arch> x) {
  return max_no_nan(x, xsimd::batch<float, Arch>(-127.0f));
}

// 2^x, the flash kernel's exponential (see exp_sum_max_row): with no range
// reduction by ln 2 to do, it costs about half of vec_exp. Domain x <= 127:
// 2^x for x >= -126, 0 below -127 (and for -inf), 0 or a subnormal in
// between. Relative error as vec_exp2_in_range's.
// Not for NaN, which callers never pass.
template <class Arch>
xsimd::batch<float, Arch> vec_exp2(xsimd::batch<float, Arch> x) {
  return vec_exp2_in_range<Arch>(clamp_exp2_argument<Arch>(x));
}

/// y[i] = 2^x[i] (x[i] <= 127); x and y may alias.
template <class Arch = xsimd::default_arch>
void vec_exp2(const float* x, float* y, std::size_t n) {
  detail::map_batches<Arch>(x, y, n, [](auto b) { return vec_exp2<Arch>(b); });
}

/// Scalar reference in double precision.
inline void vec_exp2_reference(const float* x, double* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = std::exp2(static_cast<double>(x[i]));
}

/// Scalar reference in double precision.
inline void vec_exp_reference(const float* x, double* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = std::exp(static_cast<double>(x[i]));
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
