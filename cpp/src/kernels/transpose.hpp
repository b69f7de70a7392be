// Out-of-place matrix transpose, so Q·Kᵀ can run on the matmul micro-kernel
// with keys contiguous along the vector lanes.
#pragma once

#include <cstddef>

namespace attnscope::kernels {

/// dst (cols × rows) = srcᵀ for src (rows × cols), both dense row-major.
inline void transpose(const float* src, std::size_t rows, std::size_t cols, float* dst) {
  // Blocks keep both the read and the write side within a few cache lines.
  constexpr std::size_t kBlock = 16;
  for (std::size_t i0 = 0; i0 < rows; i0 += kBlock) {
    const std::size_t i1 = i0 + kBlock < rows ? i0 + kBlock : rows;
    for (std::size_t j0 = 0; j0 < cols; j0 += kBlock) {
      const std::size_t j1 = j0 + kBlock < cols ? j0 + kBlock : cols;
      for (std::size_t i = i0; i < i1; ++i) {
        for (std::size_t j = j0; j < j1; ++j) dst[j * rows + i] = src[i * cols + j];
      }
    }
  }
}

}  // namespace attnscope::kernels
