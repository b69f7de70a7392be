// The model's and the trainer's kernels spread over the thread pool
// (thread_pool.hpp). Each splits its output into blocks that one task
// computes whole, by the same code and in the same order as an unsplit call,
// so the results are bit for bit those of one thread at any thread count.
#pragma once

#include <cstddef>
#include <functional>

#include "kernels/panel_matrix.hpp"

namespace attnscope::detail {

/// kernels::matmul_best (c = a·b, or c += a·b), split into blocks of columns
/// (multiples of 64, so every column keeps the register tile or scalar tail
/// it has in the whole product) or, for a narrow c, blocks of rows.
/// With `bias` (n floats), c = bias + a·b: each block's task sets its rows to
/// the bias and adds the product onto them (`accumulate` is then ignored).
void parallel_matmul(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c,
                     std::size_t ldc, std::size_t m, std::size_t k, std::size_t n,
                     bool accumulate = false, const float* bias = nullptr);

/// kernels::vector_matrix (y (n) += x (k) · w (k × n)), split into blocks of
/// columns.
void parallel_vector_matrix(const float* x, const float* w, std::size_t k, std::size_t n, float* y);

/// parallel_matmul for b stored in panels (kernels/panel_matrix.hpp, its
/// width matmul_panel_width_best()): the same blocks, the same bits, the
/// same `bias`.
void parallel_matmul_panels(const float* a, std::size_t lda, const kernels::PanelMatrix& b,
                            float* c, std::size_t ldc, std::size_t m, bool accumulate,
                            const float* bias = nullptr);

/// parallel_vector_matrix for w stored in panels.
void parallel_vector_matrix_panels(const float* x, const kernels::PanelMatrix& w, float* y);

/// Runs block(begin, end) over [0, count) on the pool, in pieces of whole
/// grains (the last grain may be shorter) as even as whole grains allow.
/// For per-element kernels with a SIMD body and a scalar tail, a grain that
/// is a multiple of 64 leaves every element on the path it takes in one
/// call over [0, count). `work` is the cost of the
/// whole range in multiply-adds or so: below a threshold it runs on the
/// calling thread in one piece.
void parallel_ranges(std::size_t count, std::size_t grain, std::size_t work,
                     const std::function<void(std::size_t begin, std::size_t end)>& block);

/// Runs block(item, begin, end) over rows [0, rows) of each of `items`
/// independent pieces of work (a batch's heads, say) on the pool, in blocks
/// of rows that start at multiples of 4 (the matmul register tile's height)
/// and hold at least 16 rows where there are as many, so a product over a
/// block packs B as the whole one does. `work` is as for parallel_ranges.
void parallel_row_blocks(
    std::size_t items, std::size_t rows, std::size_t work,
    const std::function<void(std::size_t item, std::size_t begin, std::size_t end)>& block);

}  // namespace attnscope::detail
