// C = A·B (or C += A·B) for row-major float matrices with leading
// dimensions, and its double-precision reference.
//
// One micro-kernel serves every product in attention: X·W projections,
// Q·Kᵀ (keys packed as transposed tiles, see pack_keys.hpp) and P·V. It
// keeps a kMatmulRows × (kMatmulCols batches) tile of C in registers and
// streams one row of B per step of the shared dimension, so each loaded B
// batch is used kMatmulRows times and each broadcast A value kMatmulCols
// times. 4 × 2 measured fastest both natively (sse2) and in Node's V8: the
// wider tiles tried spill registers there, in the relaxed-SIMD build too,
// although an FMA's latency would want more than 8 accumulators, because V8
// holds a step's loads live all at once (docs/performance/journal.md,
// "Wider tiles"). Current Chromium's V8 keeps a 6 × 2 tile in registers, so
// the products that read B in panels (matmul_panel) and the flash path's
// tile products take the height the engine measured
// (attnscope/matmul_tile.hpp).
//
// B is read through a layout: RowsB (row by row, ldb apart) or PanelsB
// (column panels whose rows follow each other in memory). Walking down B
// rows 512 bytes apart, as in a 128-key tile, puts every row of a tile's
// columns in the same 8 of the L1 cache's 64 sets; panels keep the walk in
// consecutive lines (docs/performance/journal.md, "B panels").
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "attnscope/matmul_tile.hpp"
#include "kernels/isa_namespace.hpp"
#include "kernels/multiply_add.hpp"
#include "kernels/outlined.hpp"
#include "kernels/transpose.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {

/// Register tile: kMatmulRows rows of C × kMatmulCols batches of columns.
inline constexpr std::size_t kMatmulRows = 4;
inline constexpr std::size_t kMatmulCols = 2;

/// kLda value meaning A comes as packed row panels (pack_row_panels).
inline constexpr std::size_t kPackedA = ~std::size_t{0};

// How the micro-kernel walks A and B. In wasm, V8 cannot fold an index
// times a stride into an address, so indexed loads cost a multiply and an
// add per row and step, and advancing pointers instead made the flash kernel
// faster. Natively GCC does better with the indexed form, so it keeps it
// where A's layout is only known at run time (both measured:
// docs/performance/journal.md, "Figures formerly in code comments").
#if defined(__wasm__)
inline constexpr bool kBumpPointers = true;
#else
inline constexpr bool kBumpPointers = false;
#endif

/// B stored row by row: B(p, j) at b[p·ldb + j].
struct RowsB {
  const float* b;
  std::size_t ldb;
  const float* column(std::size_t j) const { return b + j; }
  std::size_t row_step() const { return ldb; }
  /// Distance from one batch of a Cols-batch tile to the next.
  template <std::size_t W, std::size_t Cols>
  static constexpr std::size_t batch_step() {
    return W;
  }
  float at(std::size_t p, std::size_t j) const { return b[p * ldb + j]; }
};

/// B stored as panels of kWidth columns, `stride` floats apart, each panel
/// row after row: B(p, j) at b[(j / kWidth)·stride + p·kWidth + j % kWidth].
/// A tile of whole batches starting at a multiple of its width lies in one
/// panel when it is at most kWidth wide; wider tiles (AVX-512 with 16-column
/// panels) take one panel per batch.
template <std::size_t kWidth>
struct PanelsB {
  const float* b;
  std::size_t stride;
  const float* column(std::size_t j) const { return b + (j / kWidth) * stride + j % kWidth; }
  static constexpr std::size_t row_step() { return kWidth; }
  template <std::size_t W, std::size_t Cols>
  std::size_t batch_step() const {
    static_assert(W * Cols <= kWidth ? kWidth % (W * Cols) == 0 : W == kWidth,
                  "a tile's batches must each lie within one panel");
    return W * Cols <= kWidth ? W : stride;
  }
  float at(std::size_t p, std::size_t j) const { return column(j)[p * kWidth]; }
};

namespace detail {

/// One register tile: Rows rows of C from column j0, Cols batches wide.
template <class Arch, std::size_t Rows, std::size_t Cols, std::size_t kLda, class BLayout>
inline void matmul_tile(const float* a, std::size_t lda_runtime, const BLayout& bl, std::size_t j0,
                        float* c, std::size_t ldc, std::size_t k, bool accumulate) {
  // A(r, p) is a_col[r * lda] with a_col advancing by a_step per p.
  const std::size_t lda = kLda == kPackedA ? 1 : kLda ? kLda : lda_runtime;
  constexpr std::size_t a_step = kLda == kPackedA ? Rows : 1;
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = batch::size;
  const float* b = bl.column(j0);
  const std::size_t ldb = bl.row_step();
  const std::size_t b_step = bl.template batch_step<W, Cols>();
  batch acc[Rows][Cols];
  for (std::size_t r = 0; r < Rows; ++r) {
    for (std::size_t j = 0; j < Cols; ++j) {
      acc[r][j] = accumulate ? batch::load_unaligned(c + r * ldc + j * W) : batch(0.0f);
    }
  }
  // Steps of the shared dimension: A(r, p) at a_col[r * lda], one batch row
  // of B at b_row. Advanced pointers put A's values at fixed offsets from
  // a_col when its layout is known at compile time; the loop then ends on
  // a_col, with no step counter: two integer instructions fewer per step,
  // which counts on a core whose dispatch width, not its arithmetic, bounds
  // the step (a Zen 3 core in wasm; docs/performance/journal.md).
  constexpr bool advance = kBumpPointers || kLda != 0;
  const auto step = [&](const float* a_col, const float* b_row) {
    batch bv[Cols];
    for (std::size_t j = 0; j < Cols; ++j) bv[j] = batch::load_unaligned(b_row + j * b_step);
    for (std::size_t r = 0; r < Rows; ++r) {
      const batch av(a_col[r * lda]);
      for (std::size_t j = 0; j < Cols; ++j) acc[r][j] = multiply_add(av, bv[j], acc[r][j]);
    }
  };
  if constexpr (advance) {
    const float* const a_end = a + k * a_step;
    for (const float *a_col = a, *b_row = b; a_col != a_end; a_col += a_step, b_row += ldb) {
      step(a_col, b_row);
    }
  } else {
    for (std::size_t p = 0; p < k; ++p) step(a + p, b + p * ldb);
  }
  for (std::size_t r = 0; r < Rows; ++r) {
    for (std::size_t j = 0; j < Cols; ++j) acc[r][j].store_unaligned(c + r * ldc + j * W);
  }
}

// All columns of `Rows` rows: wide tiles, then single batches, then scalars.
template <class Arch, std::size_t Rows, std::size_t kLda, class BLayout>
inline void matmul_rows(const float* a, std::size_t lda, const BLayout& b, float* c,
                        std::size_t ldc, std::size_t k, std::size_t n, bool accumulate) {
  constexpr std::size_t W = xsimd::batch<float, Arch>::size;
  std::size_t j = 0;
  for (; j + kMatmulCols * W <= n; j += kMatmulCols * W) {
    matmul_tile<Arch, Rows, kMatmulCols, kLda>(a, lda, b, j, c + j, ldc, k, accumulate);
  }
  for (; j + W <= n; j += W) {
    matmul_tile<Arch, Rows, 1, kLda>(a, lda, b, j, c + j, ldc, k, accumulate);
  }
  // Scalar tail. Gathering it into padded batches, or accumulating it with
  // the shared dimension outermost, both measured slower under V8.
  for (; j < n; ++j) {
    for (std::size_t r = 0; r < Rows; ++r) {
      float sum = accumulate ? c[r * ldc + j] : 0.0f;
      for (std::size_t p = 0; p < k; ++p) {
        sum += (kLda == kPackedA ? a[p * Rows + r] : a[r * lda + p]) * b.at(p, j);
      }
      c[r * ldc + j] = sum;
    }
  }
}

}  // namespace detail

/// c (m×n, row stride ldc) = a (m×k, lda) · b (k×n, read through a layout:
/// RowsB or PanelsB); with `accumulate` the product is added to c instead.
/// kLda, when not 0, is A's row stride known at compile time (equal to lda),
/// or kPackedA for A packed by pack_row_panels. kRows: the register tile's
/// height, kMatmulRows or kMatmulTallRows; every element's sum is the same.
template <class Arch = xsimd::default_arch, std::size_t kLda = 0, class BLayout,
          std::size_t kRows = kMatmulRows>
void matmul_with(const float* a, std::size_t lda, const BLayout& b, float* c, std::size_t ldc,
                 std::size_t m, std::size_t k, std::size_t n, bool accumulate = false) {
  static_assert(kRows == kMatmulRows || (kRows == kMatmulTallRows && kLda != kPackedA),
                "rows packed by pack_row_panels come in groups of kMatmulRows");
  // Packed panels of rows i.. start at a + i·k.
  const std::size_t row_step = kLda == kPackedA ? k : lda;
  std::size_t i = 0;
  for (; i + kRows <= m; i += kRows) {
    detail::matmul_rows<Arch, kRows, kLda>(a + i * row_step, lda, b, c + i * ldc, ldc, k, n,
                                           accumulate);
  }
  if constexpr (kRows > kMatmulRows) {
    for (; i + kMatmulRows <= m; i += kMatmulRows) {
      detail::matmul_rows<Arch, kMatmulRows, kLda>(a + i * row_step, lda, b, c + i * ldc, ldc, k, n,
                                                   accumulate);
    }
  }
  // Leftover rows in blocks of 2 then 1, so a short tail still reuses each
  // loaded B batch.
  for (; i + 2 <= m; i += 2) {
    detail::matmul_rows<Arch, 2, kLda>(a + i * row_step, lda, b, c + i * ldc, ldc, k, n,
                                       accumulate);
  }
  for (; i < m; ++i) {
    detail::matmul_rows<Arch, 1, kLda>(a + i * row_step, lda, b, c + i * ldc, ldc, k, n,
                                       accumulate);
  }
}

/// matmul_with on b (k×n) stored row by row, ldb apart.
template <class Arch = xsimd::default_arch, std::size_t kLda = 0>
void matmul(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c,
            std::size_t ldc, std::size_t m, std::size_t k, std::size_t n, bool accumulate = false) {
  matmul_with<Arch, kLda>(a, lda, RowsB{b, ldb}, c, ldc, m, k, n, accumulate);
}

/// Copies the m × k matrix a (row stride lda) into out (m·k floats) as the
/// row panels matmul<Arch, kPackedA> reads: rows grouped as matmul groups
/// them (kMatmulRows, then 2, then 1), each group of R rows stored k columns
/// of R values, so a micro-kernel finds its A values at fixed offsets.
/// A template on Arch for the reason transpose_4x4 is.
template <class Arch = xsimd::default_arch>
void pack_row_panels(const float* a, std::size_t lda, std::size_t m, std::size_t k, float* out) {
  static_assert(kMatmulRows == 4, "groups of 4 rows are transposed in 4 × 4 blocks");
  std::size_t i = 0;
  const auto group = [&](std::size_t rows) {
    std::size_t p = 0;
    if (rows == 4) {
      for (; p + 4 <= k; p += 4) transpose_4x4<Arch>(a + i * lda + p, lda, out + i * k + p * 4, 4);
    }
    for (; p < k; ++p) {
      for (std::size_t r = 0; r < rows; ++r) out[i * k + p * rows + r] = a[(i + r) * lda + p];
    }
    i += rows;
  };
  while (i + kMatmulRows <= m) group(kMatmulRows);
  while (i + 2 <= m) group(2);
  while (i < m) group(1);
}

/// Columns of B per packed panel: one register tile's width.
template <class Arch>
constexpr std::size_t matmul_panel_width() {
  return kMatmulCols * xsimd::batch<float, Arch>::size;
}

/// Widest panel of any instruction set (AVX-512: 2 batches of 16 floats).
inline constexpr std::size_t kMatmulMaxPanelWidth = 32;

/// Calls f with std::integral_constant<std::size_t, L>: L = lda for the row
/// strides of transformer widths (GPT-2 small's and medium's C and 4C), so
/// that matmul_with<Arch, L> finds A's values at fixed offsets from one
/// pointer; L = 0 (stride read at run time) for any other. In wasm a
/// run-time stride costs an address add per row of the register tile and
/// step (docs/performance/journal.md, "A's row stride at compile time").
template <class F>
void with_row_stride(std::size_t lda, F&& f) {
  switch (lda) {
    case 768:
      return f(std::integral_constant<std::size_t, 768>{});
    case 1024:
      return f(std::integral_constant<std::size_t, 1024>{});
    case 3072:
      return f(std::integral_constant<std::size_t, 3072>{});
    case 4096:
      return f(std::integral_constant<std::size_t, 4096>{});
    default:
      return f(std::integral_constant<std::size_t, 0>{});
  }
}

/// c (m × P) = a (m × k) · one panel of B (or c += with `accumulate`), A's
/// row stride read at compile time for transformer widths (with_row_stride),
/// the register tile matmul_tile_rows() rows tall, the product kept out of
/// line: inlined into a caller, its accumulators were spilled on every step
/// in wasm. The products of matmul_packed, matmul_panels and
/// matmul_transposed_b go through it.
template <class Arch, std::size_t P>
void matmul_panel(const float* a, std::size_t lda, const PanelsB<P>& panel, float* c,
                  std::size_t ldc, std::size_t m, std::size_t k, bool accumulate) {
  const bool tall = matmul_tile_rows() == kMatmulTallRows;
  with_row_stride(lda, [&](auto stride) {
    constexpr std::size_t L = decltype(stride)::value;
    if (tall) {
      call_outlined<&matmul_with<Arch, L, PanelsB<P>, kMatmulTallRows>>(a, lda, panel, c, ldc, m, k,
                                                                        P, accumulate);
    } else {
      call_outlined<&matmul_with<Arch, L, PanelsB<P>>>(a, lda, panel, c, ldc, m, k, P, accumulate);
    }
  });
}

/// Columns of B that matmul_packed copies per pass over its rows: 256 bytes
/// of each row, four cache lines, so that the page and the lines one row's
/// read brings in serve several panels, not one (in wasm a panel is 32
/// bytes of a row that sits several KiB from the next).
inline constexpr std::size_t kMatmulPackWidth = 64;
static_assert(kMatmulPackWidth % kMatmulMaxPanelWidth == 0, "a pass holds whole panels");

/// Steps of the shared dimension per block in matmul_packed: a block of the
/// pass's panels (256 × 64 floats, 64 KiB) is copied and then used by every
/// row block of A while it is still in the cache.
inline constexpr std::size_t kMatmulDepthBlock = 256;

/// Floats matmul_packed needs as scratch for a k × n B (any Arch): one block
/// of up to kMatmulPackWidth columns by kMatmulDepthBlock rows.
inline std::size_t matmul_packed_scratch(std::size_t k, std::size_t n) {
  return k == 0 ? 0 : kMatmulDepthBlock * std::min(n, kMatmulPackWidth);
}

/// matmul for a large B reused by many rows (projections). Read in place, a
/// tile walks B's rows ldb floats apart; for ldb a multiple of 512 bytes
/// those rows share a few cache sets and evict each other, so every row
/// block would fetch B again from L2. So B's full panels of
/// matmul_panel_width columns are copied into `scratch`, kMatmulPackWidth
/// columns by kMatmulDepthBlock rows at a time, each panel's rows
/// contiguous; then every row block of A runs over each panel of that block
/// before the next block is copied into the same buffer. B is thus read from
/// memory once per product, not once per row block (a weight matrix of
/// several MiB does not fit in L2), and what was copied is used while it is
/// still in the cache. Each tile adds its steps in the same order as an
/// unblocked product (partial sums pass through c exactly), so the result is
/// the same, bit for bit. Leftover columns are read in place. scratch holds
/// matmul_packed_scratch.
template <class Arch = xsimd::default_arch>
void matmul_packed(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c,
                   std::size_t ldc, std::size_t m, std::size_t k, std::size_t n, float* scratch,
                   bool accumulate = false) {
  if (k == 0) {  // no step to block: c is cleared (or kept) as matmul does
    matmul_with<Arch>(a, lda, RowsB{b, ldb}, c, ldc, m, k, n, accumulate);
    return;
  }
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t P = matmul_panel_width<Arch>();
  static_assert(P <= kMatmulMaxPanelWidth && kMatmulPackWidth % P == 0,
                "a pass holds whole panels");
  const std::size_t full = n - n % P;
  for (std::size_t g0 = 0; g0 < full; g0 += kMatmulPackWidth) {
    const std::size_t panels = std::min(kMatmulPackWidth, full - g0) / P;
    for (std::size_t p0 = 0; p0 < k; p0 += kMatmulDepthBlock) {
      const std::size_t depth = std::min(kMatmulDepthBlock, k - p0);
      // In batches: std::copy of a panel's row is a call to memcpy in wasm.
      // Panels sit kMatmulDepthBlock rows apart even in a shorter last block:
      // with a stride known at run time the copy ran slower in wasm
      // (docs/performance/journal.md, "Packing B by blocks of 64 columns").
      for (std::size_t p = 0; p < depth; ++p) {
        const float* row = b + (p0 + p) * ldb + g0;
        for (std::size_t q = 0; q < panels; ++q) {
          for (std::size_t j = 0; j < P; j += batch::size) {
            batch::load_unaligned(row + q * P + j)
                .store_unaligned(scratch + (q * kMatmulDepthBlock + p) * P + j);
          }
        }
      }
      for (std::size_t q = 0; q < panels; ++q) {
        const PanelsB<P> panel{scratch + q * kMatmulDepthBlock * P, kMatmulDepthBlock * P};
        matmul_panel<Arch>(a + p0, lda, panel, c + g0 + q * P, ldc, m, depth, accumulate || p0 > 0);
      }
    }
  }
  if (full < n) {
    matmul_with<Arch>(a, lda, RowsB{b + full, ldb}, c + full, ldc, m, k, n - full, accumulate);
  }
}

/// Reference: double accumulation, same layout and semantics.
inline void matmul_reference(const float* a, std::size_t lda, const float* b, std::size_t ldb,
                             double* c, std::size_t ldc, std::size_t m, std::size_t k,
                             std::size_t n, bool accumulate = false) {
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double sum = accumulate ? c[i * ldc + j] : 0.0;
      for (std::size_t p = 0; p < k; ++p) {
        sum += static_cast<double>(a[i * lda + p]) * b[p * ldb + j];
      }
      c[i * ldc + j] = sum;
    }
  }
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
