// C = A·B (or C += A·B) for row-major float matrices with leading
// dimensions, and its double-precision reference.
//
// One micro-kernel serves every product in attention: X·W projections,
// Q·Kᵀ (keys packed as transposed tiles, see pack_keys.hpp) and P·V. It
// keeps a kMatmulRows × (kMatmulCols batches) tile of C in registers and
// streams one row of B per step of the shared dimension, so each loaded B
// batch is used kMatmulRows times and each broadcast A value kMatmulCols
// times. 4 × 2 measured fastest both natively (sse2) and in wasm, against
// 6 × 2, 4 × 3 and 8 × 1, which spill registers under V8.
#pragma once

#include <cstddef>

#include <xsimd/xsimd.hpp>

namespace attnscope::kernels {

/// Register tile: kMatmulRows rows of C × kMatmulCols batches of columns.
inline constexpr std::size_t kMatmulRows = 4;
inline constexpr std::size_t kMatmulCols = 2;

namespace detail {

template <class Arch, std::size_t Rows, std::size_t Cols>
inline void matmul_tile(const float* a, std::size_t lda, const float* b, std::size_t ldb,
                        float* c, std::size_t ldc, std::size_t k, bool accumulate) {
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = batch::size;
  batch acc[Rows][Cols];
  for (std::size_t r = 0; r < Rows; ++r) {
    for (std::size_t j = 0; j < Cols; ++j) {
      acc[r][j] = accumulate ? batch::load_unaligned(c + r * ldc + j * W) : batch(0.0f);
    }
  }
  for (std::size_t p = 0; p < k; ++p) {
    batch bv[Cols];
    for (std::size_t j = 0; j < Cols; ++j) bv[j] = batch::load_unaligned(b + p * ldb + j * W);
    for (std::size_t r = 0; r < Rows; ++r) {
      const batch av(a[r * lda + p]);
      for (std::size_t j = 0; j < Cols; ++j) acc[r][j] = xsimd::fma(av, bv[j], acc[r][j]);
    }
  }
  for (std::size_t r = 0; r < Rows; ++r) {
    for (std::size_t j = 0; j < Cols; ++j) acc[r][j].store_unaligned(c + r * ldc + j * W);
  }
}

// All columns of `Rows` rows: wide tiles, then single batches, then scalars.
template <class Arch, std::size_t Rows>
inline void matmul_rows(const float* a, std::size_t lda, const float* b, std::size_t ldb,
                        float* c, std::size_t ldc, std::size_t k, std::size_t n,
                        bool accumulate) {
  constexpr std::size_t W = xsimd::batch<float, Arch>::size;
  std::size_t j = 0;
  for (; j + kMatmulCols * W <= n; j += kMatmulCols * W) {
    matmul_tile<Arch, Rows, kMatmulCols>(a, lda, b + j, ldb, c + j, ldc, k, accumulate);
  }
  for (; j + W <= n; j += W) {
    matmul_tile<Arch, Rows, 1>(a, lda, b + j, ldb, c + j, ldc, k, accumulate);
  }
  // Scalar tail. Gathering it into padded batches, or accumulating it with
  // the shared dimension outermost, both measured slower under V8.
  for (; j < n; ++j) {
    for (std::size_t r = 0; r < Rows; ++r) {
      float sum = accumulate ? c[r * ldc + j] : 0.0f;
      for (std::size_t p = 0; p < k; ++p) sum += a[r * lda + p] * b[p * ldb + j];
      c[r * ldc + j] = sum;
    }
  }
}

}  // namespace detail

/// c (m×n, row stride ldc) = a (m×k, lda) · b (k×n, ldb); with `accumulate`
/// the product is added to c instead.
template <class Arch = xsimd::default_arch>
void matmul(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c,
            std::size_t ldc, std::size_t m, std::size_t k, std::size_t n,
            bool accumulate = false) {
  std::size_t i = 0;
  for (; i + kMatmulRows <= m; i += kMatmulRows) {
    detail::matmul_rows<Arch, kMatmulRows>(a + i * lda, lda, b, ldb, c + i * ldc, ldc, k, n,
                                           accumulate);
  }
  // Leftover rows in blocks of 2 then 1, so a short tail still reuses each
  // loaded B batch.
  for (; i + 2 <= m; i += 2) {
    detail::matmul_rows<Arch, 2>(a + i * lda, lda, b, ldb, c + i * ldc, ldc, k, n, accumulate);
  }
  for (; i < m; ++i) {
    detail::matmul_rows<Arch, 1>(a + i * lda, lda, b, ldb, c + i * ldc, ldc, k, n, accumulate);
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

}  // namespace attnscope::kernels
