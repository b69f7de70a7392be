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

inline double dot_reference(const float* a, const float* b, std::size_t n) {
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) sum += static_cast<double>(a[i]) * b[i];
  return sum;
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
