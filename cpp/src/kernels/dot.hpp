// Dot product of two float vectors, and its double-precision reference.
#pragma once

#include <cstddef>

#include <xsimd/xsimd.hpp>

#include "kernels/isa_namespace.hpp"
#include "kernels/multiply_add.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {

template <class Arch = xsimd::default_arch>
float dot(const float* a, const float* b, std::size_t n) {
  using batch = xsimd::batch<float, Arch>;
  // Two accumulators hide the latency of dependent adds.
  batch acc0(0.0f), acc1(0.0f);
  const std::size_t pair_end = n - n % (2 * batch::size);
  std::size_t i = 0;
  for (; i < pair_end; i += 2 * batch::size) {
    acc0 = multiply_add(batch::load_unaligned(a + i), batch::load_unaligned(b + i), acc0);
    acc1 = multiply_add(batch::load_unaligned(a + i + batch::size),
                        batch::load_unaligned(b + i + batch::size), acc1);
  }
  const std::size_t vec_end = n - n % batch::size;
  for (; i < vec_end; i += batch::size) {
    acc0 = multiply_add(batch::load_unaligned(a + i), batch::load_unaligned(b + i), acc0);
  }
  float sum = xsimd::hadd(acc0 + acc1);
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

/// out[j] = dot(a, b[j], n) for four vectors b[0..3], bit for bit: each has
/// dot's accumulators and order. The four are read side by side, so four
/// streams from memory are in flight instead of one.
template <class Arch = xsimd::default_arch>
void dot4(const float* a, const float* const b[4], std::size_t n, float out[4]) {
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = batch::size;
  batch acc0[4] = {batch(0.0f), batch(0.0f), batch(0.0f), batch(0.0f)};
  batch acc1[4] = {batch(0.0f), batch(0.0f), batch(0.0f), batch(0.0f)};
  const std::size_t pair_end = n - n % (2 * W);
  std::size_t i = 0;
  for (; i < pair_end; i += 2 * W) {
    const batch a0 = batch::load_unaligned(a + i), a1 = batch::load_unaligned(a + i + W);
    for (std::size_t j = 0; j < 4; ++j) {
      acc0[j] = multiply_add(a0, batch::load_unaligned(b[j] + i), acc0[j]);
      acc1[j] = multiply_add(a1, batch::load_unaligned(b[j] + i + W), acc1[j]);
    }
  }
  const std::size_t vec_end = n - n % W;
  for (; i < vec_end; i += W) {
    const batch a0 = batch::load_unaligned(a + i);
    for (std::size_t j = 0; j < 4; ++j) {
      acc0[j] = multiply_add(a0, batch::load_unaligned(b[j] + i), acc0[j]);
    }
  }
  for (std::size_t j = 0; j < 4; ++j) {
    float sum = xsimd::hadd(acc0[j] + acc1[j]);
    for (std::size_t t = i; t < n; ++t) sum += a[t] * b[j][t];
    out[j] = sum;
  }
}

inline double dot_reference(const float* a, const float* b, std::size_t n) {
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) sum += static_cast<double>(a[i]) * b[i];
  return sum;
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
