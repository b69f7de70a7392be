#include "parallel_kernels.hpp"

#include <algorithm>

#include <xsimd/xsimd.hpp>

#include "kernels/dispatch.hpp"
#include "kernels/matmul_panels.hpp"
#include "kernels/vector_matrix.hpp"
#include "thread_pool.hpp"

namespace attnscope::detail {

namespace {

// Column blocks start at multiples of this: a multiple of every batch width
// and register tile (16 floats × 2 batches with AVX-512), so of every panel
// width too.
constexpr std::size_t kColumnAlign = 64;

// Below this many multiply-adds a product stays on the calling thread: waking
// the pool would cost about as much as the work.
constexpr std::size_t kMinParallelWork = std::size_t{1} << 16;

// Tasks per thread: a few, so that a thread slowed by another process does
// not hold the rest up.
constexpr std::size_t kTasksPerThread = 4;

// Rows per block in parallel_row_blocks, at least: matmul_best packs B for
// products this tall.
constexpr std::size_t kMinBlockRows = 16;

std::size_t round_up(std::size_t x, std::size_t to) { return (x + to - 1) / to * to; }

/// Pieces of [0, count) for `slots` threads: at least `grain`, a multiple of it.
std::size_t piece(std::size_t count, std::size_t grain, std::size_t slots) {
  return std::max(
      grain, round_up((count + slots * kTasksPerThread - 1) / (slots * kTasksPerThread), grain));
}

/// Runs block(i0, i1, j0, j1) over the blocks of an m × n product c:
/// blocks of columns (multiples of kColumnAlign) or, for a narrow c, blocks
/// of rows. Each element of c is the same sum whichever block computes it.
void split_product(
    std::size_t m, std::size_t n, std::size_t work,
    const std::function<void(std::size_t, std::size_t, std::size_t, std::size_t)>& block) {
  if (n >= 2 * kColumnAlign) {
    parallel_ranges(n, kColumnAlign, work,
                    [&](std::size_t j0, std::size_t j1) { block(0, m, j0, j1); });
    return;
  }
  parallel_ranges(m, 1, work, [&](std::size_t i0, std::size_t i1) { block(i0, i1, 0, n); });
}

/// Rows [i0, i1) of c, columns [j0, j1), set to bias[j0, j1) (nothing without a bias), by
/// the task that computes the block: the filling is shared among the threads, and the
/// block's cache lines are first written on the core that sums onto them.
void fill_rows(const float* bias, float* c, std::size_t ldc, std::size_t i0, std::size_t i1,
               std::size_t j0, std::size_t j1) {
  if (!bias) return;
  for (std::size_t i = i0; i < i1; ++i) std::copy(bias + j0, bias + j1, c + i * ldc + j0);
}

}  // namespace

void parallel_ranges(std::size_t count, std::size_t grain, std::size_t work,
                     const std::function<void(std::size_t, std::size_t)>& block) {
  const std::size_t slots = parallel_slots();
  if (slots <= 1 || work < kMinParallelWork || count <= grain) {
    if (count > 0) block(0, count);
    return;
  }
  // As many tasks as pieces of the rounded-up size, but the grains shared among them as evenly
  // as whole grains allow: in pieces of that size the last would be short (a 2 304-column
  // product in 320-column pieces gives one thread 1 280 columns and the other 1 024). More
  // tasks than that would make narrower ones, and a narrower block reads its rows of A for fewer
  // columns.
  const std::size_t grains = (count + grain - 1) / grain;
  const std::size_t size = piece(count, grain, slots);
  const std::size_t tasks = (count + size - 1) / size;
  parallel_for(tasks, slots, [&](std::size_t task, std::size_t) {
    const std::size_t begin = task * grains / tasks * grain;
    block(begin, std::min(count, (task + 1) * grains / tasks * grain));
  });
}

void parallel_row_blocks(std::size_t items, std::size_t rows, std::size_t work,
                         const std::function<void(std::size_t, std::size_t, std::size_t)>& block) {
  const std::size_t slots = parallel_slots();
  if (slots <= 1 || work < kMinParallelWork || items * rows <= 1) {
    for (std::size_t item = 0; item < items; ++item) {
      if (rows > 0) block(item, 0, rows);
    }
    return;
  }
  // Enough blocks for kTasksPerThread tasks per thread, counting every item's.
  const std::size_t per_item = (slots * kTasksPerThread + items - 1) / items;
  const std::size_t size =
      std::max<std::size_t>(kMinBlockRows, round_up((rows + per_item - 1) / per_item, 4));
  const std::size_t blocks = (rows + size - 1) / size;
  parallel_for(items * blocks, slots, [&](std::size_t task, std::size_t) {
    const std::size_t begin = task % blocks * size;
    block(task / blocks, begin, std::min(rows, begin + size));
  });
}

void parallel_matmul(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c,
                     std::size_t ldc, std::size_t m, std::size_t k, std::size_t n, bool accumulate,
                     const float* bias) {
  split_product(m, n, m * k * n,
                [&](std::size_t i0, std::size_t i1, std::size_t j0, std::size_t j1) {
                  fill_rows(bias, c, ldc, i0, i1, j0, j1);
                  kernels::matmul_best(a + i0 * lda, lda, b + j0, ldb, c + i0 * ldc + j0, ldc,
                                       i1 - i0, k, j1 - j0, accumulate || bias != nullptr);
                });
}

void parallel_matmul_panels(const float* a, std::size_t lda, const kernels::PanelMatrix& b,
                            float* c, std::size_t ldc, std::size_t m, bool accumulate,
                            const float* bias) {
  split_product(m, b.cols, m * b.rows * b.cols,
                [&](std::size_t i0, std::size_t i1, std::size_t j0, std::size_t j1) {
                  fill_rows(bias, c, ldc, i0, i1, j0, j1);
                  kernels::matmul_panels_best(a + i0 * lda, lda, b, j0, j1, c + i0 * ldc, ldc,
                                              i1 - i0, accumulate || bias != nullptr);
                });
}

void parallel_vector_matrix(const float* x, const float* w, std::size_t k, std::size_t n,
                            float* y) {
  parallel_ranges(n, kColumnAlign, k * n, [&](std::size_t j0, std::size_t j1) {
    // Row p of the block starts at w + p·n + j0: the kernel's row stride is n.
    kernels::vector_matrix_strided<xsimd::default_arch>(x, w + j0, k, j1 - j0, n, y + j0);
  });
}

void parallel_vector_matrix_panels(const float* x, const kernels::PanelMatrix& w, float* y) {
  parallel_ranges(w.cols, kColumnAlign, w.rows * w.cols, [&](std::size_t j0, std::size_t j1) {
    kernels::vector_matrix_panels<xsimd::default_arch>(x, w, 0, w.rows, j0, j1, y);
  });
}

}  // namespace attnscope::detail
