// A weight matrix stored once in the panels the matmul kernel reads, so that
// its products need not copy B into panels on every call (matmul_packed
// does: its copy reads B's rows several KiB apart, a page and a few cache
// lines each, which at a few dozen rows costs about a tenth of the product;
// docs/performance/journal.md, "Weights stored in panels").
//
// Layout of a k × n matrix with panel width P: its first n − n % P columns
// as panels of P columns, each panel k rows of P floats one after the other
// (panel q at q·k·P); then the other n % P columns row by row (k rows of
// n % P floats).
#pragma once

#include <algorithm>
#include <cstddef>

namespace attnscope::kernels {

/// A k × n matrix in the layout above. Only data: the kernels' accessors
/// (matmul_panels.hpp) live in each instruction set's namespace, so that no
/// kernel object defines a function another one defines too.
struct PanelMatrix {
  const float* data;
  std::size_t rows, cols, width;
};

/// Writes the row-major k × n matrix `from` into `to` (k·n floats) in panels.
inline void pack_panels(const float* from, std::size_t k, std::size_t n, std::size_t width,
                        float* to) {
  const std::size_t full = n - n % width, rest = n - full;
  for (std::size_t j = 0; j < full; j += width) {
    for (std::size_t p = 0; p < k; ++p)
      std::copy_n(from + p * n + j, width, to + j * k + p * width);
  }
  for (std::size_t p = 0; p < k; ++p)
    std::copy_n(from + p * n + full, rest, to + full * k + p * rest);
}

/// The inverse of pack_panels: `from` in panels, `to` row-major.
inline void unpack_panels(const float* from, std::size_t k, std::size_t n, std::size_t width,
                          float* to) {
  const std::size_t full = n - n % width, rest = n - full;
  for (std::size_t j = 0; j < full; j += width) {
    for (std::size_t p = 0; p < k; ++p)
      std::copy_n(from + j * k + p * width, width, to + p * n + j);
  }
  for (std::size_t p = 0; p < k; ++p)
    std::copy_n(from + full * k + p * rest, rest, to + p * n + full);
}

}  // namespace attnscope::kernels
