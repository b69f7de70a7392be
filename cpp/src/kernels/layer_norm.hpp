// LayerNorm of one row: y = (x - mean) / sqrt(var + eps) * gamma + beta,
// with the biased variance (divide by n, as PyTorch does).
//
// Every finite row normalises: a row whose float sum or sum of squared
// deviations overflows (|x - mean| beyond ~1.8e19 already does) is computed
// by the double-precision reference instead, which cannot overflow for float
// inputs. Without that, the variance would be inf, 1/std 0, and the output a
// silent row of beta.
#pragma once

#include <cmath>
#include <cstddef>

#include <xsimd/xsimd.hpp>

#include "kernels/isa_namespace.hpp"
#include "kernels/multiply_add.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {

/// Scalar reference with double accumulation: what the kernel must match.
inline void layer_norm_row_reference(const float* x, const float* gamma, const float* beta,
                                     float eps, float* y, std::size_t n) {
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) sum += x[i];
  const double mean = sum / static_cast<double>(n);
  double sq_sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = x[i] - mean;
    sq_sum += d * d;
  }
  const double inv_std = 1.0 / std::sqrt(sq_sum / static_cast<double>(n) + eps);
  for (std::size_t i = 0; i < n; ++i) {
    y[i] = static_cast<float>((x[i] - mean) * inv_std * gamma[i] + beta[i]);
  }
}

/// x, gamma, beta, y: n floats each (n >= 1); y must not alias gamma/beta.
template <class Arch = xsimd::default_arch>
void layer_norm_row(const float* x, const float* gamma, const float* beta, float eps, float* y,
                    std::size_t n) {
  using batch = xsimd::batch<float, Arch>;
  const std::size_t vec_end = n - n % batch::size;

  batch sum_acc(0.0f);
  for (std::size_t i = 0; i < vec_end; i += batch::size) {
    sum_acc += batch::load_unaligned(x + i);
  }
  float sum = xsimd::hadd(sum_acc);
  for (std::size_t i = vec_end; i < n; ++i) sum += x[i];
  const float mean = sum / static_cast<float>(n);

  // A second pass over the deviations instead of E[x²] − E[x]²: the latter
  // cancels catastrophically when |mean| is large against the spread.
  const batch mean_b(mean);
  batch sq_acc(0.0f);
  for (std::size_t i = 0; i < vec_end; i += batch::size) {
    const batch d = batch::load_unaligned(x + i) - mean_b;
    sq_acc = multiply_add(d, d, sq_acc);
  }
  float sq_sum = xsimd::hadd(sq_acc);
  for (std::size_t i = vec_end; i < n; ++i) {
    const float d = x[i] - mean;
    sq_sum += d * d;
  }
  if (!std::isfinite(sum) || !std::isfinite(sq_sum)) {
    layer_norm_row_reference(x, gamma, beta, eps, y, n);
    return;
  }
  const float inv_std = 1.0f / std::sqrt(sq_sum / static_cast<float>(n) + eps);

  const batch inv_std_b(inv_std);
  for (std::size_t i = 0; i < vec_end; i += batch::size) {
    const batch normed = (batch::load_unaligned(x + i) - mean_b) * inv_std_b;
    multiply_add(normed, batch::load_unaligned(gamma + i), batch::load_unaligned(beta + i))
        .store_unaligned(y + i);
  }
  for (std::size_t i = vec_end; i < n; ++i) {
    y[i] = (x[i] - mean) * inv_std * gamma[i] + beta[i];
  }
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
