// Element-wise activations of the feed-forward layer, in place.
#pragma once

#include <cmath>
#include <cstddef>

#include <xsimd/xsimd.hpp>

#include "kernels/isa_namespace.hpp"
#include "kernels/vec_exp.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {

inline constexpr float kInvSqrt2 = 0.70710678118654752440f;
inline constexpr float kSqrt2OverPi = 0.79788456080286535588f;
inline constexpr float kGeluTanhCubic = 0.044715f;

/// x = max(x, 0).
template <class Arch = xsimd::default_arch>
void relu(float* x, std::size_t n) {
  using batch = xsimd::batch<float, Arch>;
  const std::size_t vec_end = n - n % batch::size;
  const batch zero(0.0f);
  for (std::size_t i = 0; i < vec_end; i += batch::size) {
    xsimd::max(batch::load_unaligned(x + i), zero).store_unaligned(x + i);
  }
  for (std::size_t i = vec_end; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

/// Exact GELU: x = x·Φ(x) = x/2 · (1 + erf(x/√2)) (not the tanh approximation).
template <class Arch = xsimd::default_arch>
void gelu(float* x, std::size_t n) {
  using batch = xsimd::batch<float, Arch>;
  const std::size_t vec_end = n - n % batch::size;
  const batch half(0.5f), one(1.0f), inv_sqrt2(kInvSqrt2);
  for (std::size_t i = 0; i < vec_end; i += batch::size) {
    const batch v = batch::load_unaligned(x + i);
    (half * v * (one + xsimd::erf(v * inv_sqrt2))).store_unaligned(x + i);
  }
  for (std::size_t i = vec_end; i < n; ++i) {
    x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * kInvSqrt2));
  }
}

/// GPT-2's GELU, the tanh approximation:
/// x = x/2 · (1 + tanh(√(2/π)·(x + 0.044715·x³))), computed as x·σ(2u)
/// (the same function: 1 + tanh(u) = 2σ(2u)) so that one exp on the batch
/// does it. For |x| so large that u overflows, σ is exactly 0 or 1.
template <class Arch = xsimd::default_arch>
void gelu_tanh(float* x, std::size_t n) {
  using batch = xsimd::batch<float, Arch>;
  const batch one(1.0f), c(kGeluTanhCubic), minus_two_k(-2.0f * kSqrt2OverPi);
  detail::map_batches<Arch>(x, x, n, [&](batch v) {
    const batch u = v + c * v * v * v;
    return v / (one + vec_exp<Arch>(minus_two_k * u));
  });
}

/// Scalar references in double: what the kernels must match.
inline double relu_reference(double x) { return x > 0.0 ? x : 0.0; }
inline double gelu_reference(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
inline double gelu_tanh_reference(double x) {
  const double k = std::sqrt(2.0 / 3.14159265358979323846);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
