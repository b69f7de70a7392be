// One row of a linear layer: y = x·W + b for x (in), W (in, out) row-major.
#pragma once

#include <cstddef>

#include <xsimd/xsimd.hpp>

namespace attnscope::kernels {

struct linear_row {
  /// bias may be null (no bias). y (out) must not alias x, weight or bias.
  template <class Arch>
  void operator()(Arch, const float* x, const float* weight, const float* bias,
                  float* y, std::size_t in, std::size_t out) const;
};

// Accumulates x[i]·W[i, :] into y row by row of W: every load is contiguous
// and y stays in cache, whatever the layout of W's columns.
template <class Arch>
void linear_row::operator()(Arch, const float* x, const float* weight,
                            const float* bias, float* y, std::size_t in,
                            std::size_t out) const {
  using batch = xsimd::batch<float, Arch>;
  const std::size_t vec_end = out - out % batch::size;
  for (std::size_t j = 0; j < out; ++j) y[j] = bias ? bias[j] : 0.0f;
  for (std::size_t i = 0; i < in; ++i) {
    const float xi = x[i];
    if (xi == 0.0f) continue;  // one-hot and ReLU-sparse inputs are common
    const float* w_row = weight + i * out;
    const batch xi_b(xi);
    for (std::size_t j = 0; j < vec_end; j += batch::size) {
      xsimd::fma(xi_b, batch::load_unaligned(w_row + j),
                 batch::load_unaligned(y + j))
          .store_unaligned(y + j);
    }
    for (std::size_t j = vec_end; j < out; ++j) y[j] += xi * w_row[j];
  }
}

/// Scalar reference with double accumulation.
inline void linear_row_reference(const float* x, const float* weight,
                                 const float* bias, float* y, std::size_t in,
                                 std::size_t out) {
  for (std::size_t j = 0; j < out; ++j) {
    double acc = bias ? bias[j] : 0.0;
    for (std::size_t i = 0; i < in; ++i) {
      acc += static_cast<double>(x[i]) * weight[i * out + j];
    }
    y[j] = static_cast<float>(acc);
  }
}

}  // namespace attnscope::kernels
