// C = A·Bᵀ for B stored row by row (n rows of k floats), such as GPT-2's
// logits = hidden · wteᵀ, on matmul.hpp's micro-kernel.
//
// B's rows are transposed, one panel width at a time, into a k × width
// panel that every row block of A then passes over, a block of the shared
// dimension at a time (as matmul_packed does with a panel of B's columns).
// B is thus read from memory once, in order, and the panel stays in the L1
// cache. Computing Cᵀ = B·Aᵀ instead, with B as the kernel's A operand,
// reads each block of B once per panel of A's rows: for the LM head's
// wte (154 MB) and 128 rows, 16 times over (docs/performance/journal.md,
// "The LM head").
#pragma once

#include <algorithm>
#include <cstddef>

#include <xsimd/xsimd.hpp>

#include "kernels/isa_namespace.hpp"
#include "kernels/matmul.hpp"
#include "kernels/transpose.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {

/// Floats matmul_transposed_b needs as scratch (any Arch).
inline std::size_t matmul_transposed_b_scratch(std::size_t m, std::size_t k) {
  return (k + m) * kMatmulMaxPanelWidth;
}

namespace detail {

/// panel (k × P) = the first `count` rows of b, transposed; the columns past them are zero.
template <class Arch, std::size_t P>
void transpose_rows_into_panel(const float* b, std::size_t ldb, std::size_t k, std::size_t count,
                               float* panel) {
  std::size_t j = 0;
  for (; j + 4 <= count; j += 4) {
    std::size_t p = 0;
    for (; p + 4 <= k; p += 4) transpose_4x4<Arch>(b + j * ldb + p, ldb, panel + p * P + j, P);
    for (; p < k; ++p) {
      for (std::size_t r = 0; r < 4; ++r) panel[p * P + j + r] = b[(j + r) * ldb + p];
    }
  }
  for (std::size_t p = 0; p < k; ++p) {
    for (std::size_t r = j; r < P; ++r) panel[p * P + r] = r < count ? b[r * ldb + p] : 0.0f;
  }
}

}  // namespace detail

/// c (m × n, row stride ldc) = a (m × k, lda) · bᵀ, b (n × k, row stride
/// ldb). Every element of c is the sum matmul would give for a Bᵀ of whole
/// batches: its terms in order of the shared dimension through multiply_add,
/// whatever the split of the columns (the last n % width columns go through
/// a zero-padded panel). scratch holds matmul_transposed_b_scratch(m, k).
template <class Arch = xsimd::default_arch>
void matmul_transposed_b(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c,
                         std::size_t ldc, std::size_t m, std::size_t k, std::size_t n,
                         float* scratch) {
  constexpr std::size_t P = matmul_panel_width<Arch>();
  static_assert(P <= kMatmulMaxPanelWidth, "kMatmulMaxPanelWidth is below a panel's width");
  if (k == 0) {  // no step: the product is zero, and b is not read
    for (std::size_t i = 0; i < m; ++i) std::fill_n(c + i * ldc, n, 0.0f);
    return;
  }
  float* const panel = scratch;
  float* const tail = scratch + k * P;  // m × P: the last, partial panel's product
  for (std::size_t j0 = 0; j0 < n; j0 += P) {
    const std::size_t count = std::min(P, n - j0);
    detail::transpose_rows_into_panel<Arch, P>(b + j0 * ldb, ldb, k, count, panel);
    float* const out = count == P ? c + j0 : tail;
    const std::size_t ld_out = count == P ? ldc : P;
    for (std::size_t p0 = 0; p0 < k; p0 += kMatmulDepthBlock) {
      const std::size_t depth = std::min(kMatmulDepthBlock, k - p0);
      matmul_panel<Arch>(a + p0, lda, PanelsB<P>{panel + p0 * P, k * P}, out, ld_out, m, depth,
                         p0 > 0);
    }
    if (count < P) {
      for (std::size_t i = 0; i < m; ++i) std::copy_n(tail + i * P, count, c + i * ldc + j0);
    }
  }
}

/// Reference: double accumulation, same layout and semantics.
inline void matmul_transposed_b_reference(const float* a, std::size_t lda, const float* b,
                                          std::size_t ldb, double* c, std::size_t ldc,
                                          std::size_t m, std::size_t k, std::size_t n) {
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (std::size_t p = 0; p < k; ++p) {
        sum += static_cast<double>(a[i * lda + p]) * b[j * ldb + p];
      }
      c[i * ldc + j] = sum;
    }
  }
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
