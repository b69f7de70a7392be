// Products with a weight matrix stored in panels (panel_matrix.hpp). Each
// adds every element's k steps in the order matmul and vector_matrix add them
// on the row-major matrix, so the results are the same bit for bit.
#pragma once

#include <algorithm>
#include <cstddef>

#include <xsimd/xsimd.hpp>

#include "kernels/isa_namespace.hpp"
#include "kernels/matmul.hpp"
#include "kernels/multiply_add.hpp"
#include "kernels/panel_matrix.hpp"
#include "kernels/vector_matrix.hpp"

namespace attnscope::kernels {

inline namespace ATTN_KERNEL_ISA {

/// Columns of b held in panels.
inline std::size_t panel_columns(const PanelMatrix& b) { return b.cols - b.cols % b.width; }

/// b's panel starting at column j (a multiple of b.width).
inline const float* panel_at(const PanelMatrix& b, std::size_t j) { return b.data + j * b.rows; }

/// b's columns after panel_columns(b), row by row (the rest of each row).
inline const float* rest_of(const PanelMatrix& b) { return b.data + panel_columns(b) * b.rows; }

/// Columns [j0, j1) of c (m × n, ldc) = a (m × k, lda) · b, or += with
/// `accumulate`; j0 a multiple of b.width, which is matmul_panel_width<Arch>.
/// Walks the panels as matmul_packed walks the ones it copies (blocks of
/// kMatmulPackWidth columns × kMatmulDepthBlock rows, each used by every
/// row of A while in the cache), reading them in place.
template <class Arch = xsimd::default_arch>
void matmul_panels(const float* a, std::size_t lda, const PanelMatrix& b, std::size_t j0,
                   std::size_t j1, float* c, std::size_t ldc, std::size_t m, bool accumulate) {
  constexpr std::size_t P = matmul_panel_width<Arch>();
  const std::size_t k = b.rows, full = panel_columns(b);
  if (k == 0) {  // no step: c is cleared (or kept) as matmul does
    matmul_with<Arch>(a, lda, RowsB{b.data, 0}, c + j0, ldc, m, 0, j1 - j0, accumulate);
    return;
  }
  const std::size_t panels_end = std::min(j1, full);
  for (std::size_t g0 = j0; g0 < panels_end; g0 += kMatmulPackWidth) {
    const std::size_t g1 = std::min(panels_end, g0 + kMatmulPackWidth);
    for (std::size_t p0 = 0; p0 < k; p0 += kMatmulDepthBlock) {
      const std::size_t depth = std::min(kMatmulDepthBlock, k - p0);
      for (std::size_t j = g0; j < g1; j += P) {
        const PanelsB<P> panel{panel_at(b, j) + p0 * P, k * P};
        matmul_panel<Arch>(a + p0, lda, panel, c + j, ldc, m, depth, accumulate || p0 > 0);
      }
    }
  }
  if (j1 > full) {
    const std::size_t from = std::max(j0, full), rest = b.cols - full;
    matmul_with<Arch>(a, lda, RowsB{rest_of(b) + (from - full), rest}, c + from, ldc, m, k,
                      j1 - from, accumulate);
  }
}

/// y[j0 .. j1) += x (`rows`) · rows [row0, row0 + rows) of b, for columns
/// j0 .. j1 (j0 a multiple of b.width). Each y[j] adds its products one after
/// the other in the order of the rows, as vector_matrix_strided does.
template <class Arch = xsimd::default_arch>
void vector_matrix_panels(const float* x, const PanelMatrix& b, std::size_t row0, std::size_t rows,
                          std::size_t j0, std::size_t j1, float* y) {
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = batch::size;
  // Eight accumulators a pass, over as many panels as they cover: several
  // streams of the weights read side by side, and eight independent chains
  // of multiply-adds (docs/performance/journal.md, "four streams for a
  // decode step's LM head").
  constexpr std::size_t kChains = 8;
  const std::size_t per_panel = b.width / W;
  const std::size_t group = std::max<std::size_t>(1, kChains / per_panel);
  const std::size_t full = panel_columns(b), panels_end = std::min(j1, full);
  std::size_t j = j0;
  if (per_panel * group == kChains) {
    for (; j + group * b.width <= panels_end; j += group * b.width) {
      const float* w[kChains];
      float* out[kChains];
      batch acc[kChains];
      for (std::size_t i = 0; i < kChains; ++i) {
        // Chain i: batch i % per_panel of panel i / per_panel.
        const std::size_t panel = j + i / per_panel * b.width, lane = i % per_panel * W;
        w[i] = panel_at(b, panel) + row0 * b.width + lane;
        out[i] = y + panel + lane;
        acc[i] = batch::load_unaligned(out[i]);
      }
      for (std::size_t p = 0; p < rows; ++p) {
        const batch xp(x[p]);
        for (std::size_t i = 0; i < kChains; ++i) {
          acc[i] = multiply_add(xp, batch::load_unaligned(w[i] + p * b.width), acc[i]);
        }
      }
      for (std::size_t i = 0; i < kChains; ++i) acc[i].store_unaligned(out[i]);
    }
  }
  // Panels left over (fewer than a group), one batch at a time.
  for (; j < panels_end; j += W) {
    const float* w = panel_at(b, j - j % b.width) + row0 * b.width + j % b.width;
    batch acc = batch::load_unaligned(y + j);
    for (std::size_t p = 0; p < rows; ++p) {
      acc = multiply_add(batch(x[p]), batch::load_unaligned(w + p * b.width), acc);
    }
    acc.store_unaligned(y + j);
  }
  if (j1 > full) {
    const std::size_t from = std::max(j0, full), rest = b.cols - full;
    vector_matrix_strided<Arch>(x, rest_of(b) + row0 * rest + (from - full), rows, j1 - from, rest,
                                y + from);
  }
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
