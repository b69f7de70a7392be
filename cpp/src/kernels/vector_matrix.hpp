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

/// Rows of W per pass over y.
inline constexpr std::size_t kVectorMatrixRows = 8;

/// y (n) += x (k) · w (k × n, row stride ldw). Each y[j] adds its k
/// products one after the other in the order of p, whichever columns a
/// caller asks for: a product split into column blocks (at multiples of the
/// batch size) gives the same bits.
template <class Arch = xsimd::default_arch>
void vector_matrix_strided(const float* x, const float* w, std::size_t k, std::size_t n,
                           std::size_t ldw, float* y) {
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t R = kVectorMatrixRows;
  const std::size_t vec_end = n - n % batch::size;
  std::size_t p = 0;
  // Eight rows of W per pass over y: y is loaded and stored once for eight
  // multiply-adds instead of four, which is what bounded the 4-row loop in
  // wasm (docs/performance/journal.md, "Decode step").
  for (; p + R <= k; p += R) {
    const float* w0 = w + p * ldw;
    batch xs[R];
    for (std::size_t r = 0; r < R; ++r) xs[r] = batch(x[p + r]);
    for (std::size_t j = 0; j < vec_end; j += batch::size) {
      batch acc = batch::load_unaligned(y + j);
      for (std::size_t r = 0; r < R; ++r) {
        acc = multiply_add(xs[r], batch::load_unaligned(w0 + r * ldw + j), acc);
      }
      acc.store_unaligned(y + j);
    }
    for (std::size_t j = vec_end; j < n; ++j) {
      float acc = y[j];
      for (std::size_t r = 0; r < R; ++r) acc += x[p + r] * w0[r * ldw + j];
      y[j] = acc;
    }
  }
  for (; p < k; ++p) {
    const batch xp(x[p]);
    for (std::size_t j = 0; j < vec_end; j += batch::size) {
      multiply_add(xp, batch::load_unaligned(w + p * ldw + j), batch::load_unaligned(y + j))
          .store_unaligned(y + j);
    }
    for (std::size_t j = vec_end; j < n; ++j) y[j] += x[p] * w[p * ldw + j];
  }
}

/// y (n) += x (k) · w (k × n, row stride n).
template <class Arch = xsimd::default_arch>
void vector_matrix(const float* x, const float* w, std::size_t k, std::size_t n, float* y) {
  vector_matrix_strided<Arch>(x, w, k, n, n, y);
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
