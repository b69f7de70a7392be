// y += x·W for one row x: the product of a decode step, where the matmul
// kernel's register tiles would walk W column strip by column strip. Here W
// streams row after row, as it is stored, and y stays in cache.
#pragma once

#include <cstddef>

#include <xsimd/xsimd.hpp>

#include "kernels/isa_namespace.hpp"
#include "kernels/multiply_add.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {

/// y (n) += x (k) · w (k × n, row stride n).
template <class Arch = xsimd::default_arch>
void vector_matrix(const float* x, const float* w, std::size_t k, std::size_t n, float* y) {
  using batch = xsimd::batch<float, Arch>;
  const std::size_t vec_end = n - n % batch::size;
  std::size_t p = 0;
  // Four rows of W per pass over y: a quarter of the loads and stores of y.
  for (; p + 4 <= k; p += 4) {
    const float* w0 = w + p * n;
    const batch x0(x[p]), x1(x[p + 1]), x2(x[p + 2]), x3(x[p + 3]);
    for (std::size_t j = 0; j < vec_end; j += batch::size) {
      batch acc = batch::load_unaligned(y + j);
      acc = multiply_add(x0, batch::load_unaligned(w0 + j), acc);
      acc = multiply_add(x1, batch::load_unaligned(w0 + n + j), acc);
      acc = multiply_add(x2, batch::load_unaligned(w0 + 2 * n + j), acc);
      acc = multiply_add(x3, batch::load_unaligned(w0 + 3 * n + j), acc);
      acc.store_unaligned(y + j);
    }
    for (std::size_t j = vec_end; j < n; ++j) {
      y[j] +=
          x[p] * w0[j] + x[p + 1] * w0[n + j] + x[p + 2] * w0[2 * n + j] + x[p + 3] * w0[3 * n + j];
    }
  }
  for (; p < k; ++p) {
    const batch xp(x[p]);
    for (std::size_t j = 0; j < vec_end; j += batch::size) {
      multiply_add(xp, batch::load_unaligned(w + p * n + j), batch::load_unaligned(y + j))
          .store_unaligned(y + j);
    }
    for (std::size_t j = vec_end; j < n; ++j) y[j] += x[p] * w[p * n + j];
  }
}

/// Scalar reference with double accumulation: y[j] + Σ_p x[p]·w[p, j].
inline void vector_matrix_reference(const float* x, const float* w, std::size_t k, std::size_t n,
                                    const float* y, double* out) {
  for (std::size_t j = 0; j < n; ++j) {
    double s = y[j];
    for (std::size_t p = 0; p < k; ++p) s += static_cast<double>(x[p]) * w[p * n + j];
    out[j] = s;
  }
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
