// 4 × 4 blocks of floats transposed in registers, for the routines that lay
// operands out for the micro-kernel (keys into panels, queries into row
// panels) and for the decode kernel's single row (keys into the lanes).
// Copied one float at a time, that packing was a measurable share of
// attention in wasm (docs/performance/journal.md); a block moves 16 floats
// with 4 loads, 8 shuffles and 4 stores.
#pragma once

#include <cstddef>

#include <xsimd/xsimd.hpp>

#include "kernels/isa_namespace.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {

/// The 4 × 4 block whose rows are r0 .. r3 transposed in place: afterwards
/// r_c holds column c (r_c[r] = the former r_r[c]). Floats: a batch of 4.
template <class Floats>
void transpose_4x4_in_registers(Floats& r0, Floats& r1, Floats& r2, Floats& r3) {
  static_assert(Floats::size == 4, "a 4 × 4 block");
  // Two floats per lane, moved together.
  using Pairs = xsimd::batch<double, typename Floats::arch_type>;
  // (r0[0] r1[0] | r0[1] r1[1]), (r0[2] r1[2] | r0[3] r1[3]), and so for r2, r3.
  const Pairs low01 = xsimd::bitwise_cast<Pairs>(xsimd::zip_lo(r0, r1));
  const Pairs high01 = xsimd::bitwise_cast<Pairs>(xsimd::zip_hi(r0, r1));
  const Pairs low23 = xsimd::bitwise_cast<Pairs>(xsimd::zip_lo(r2, r3));
  const Pairs high23 = xsimd::bitwise_cast<Pairs>(xsimd::zip_hi(r2, r3));
  r0 = xsimd::bitwise_cast<Floats>(xsimd::zip_lo(low01, low23));
  r1 = xsimd::bitwise_cast<Floats>(xsimd::zip_hi(low01, low23));
  r2 = xsimd::bitwise_cast<Floats>(xsimd::zip_lo(high01, high23));
  r3 = xsimd::bitwise_cast<Floats>(xsimd::zip_hi(high01, high23));
}

/// dst[c·dst_stride + r] = src[r·src_stride + c] for r, c < 4.
/// Arch is the caller's instruction set. It is not needed for the 4-float
/// batches, but it gives each dispatched translation unit (compiled with its
/// own -mavx2 or -mavx512f) a copy of its own: a plain inline function would
/// have one name in all of them, and the linker may keep the AVX-512 copy for
/// every caller, including those on CPUs without it.
template <class Arch>
void transpose_4x4(const float* src, std::size_t src_stride, float* dst, std::size_t dst_stride) {
  using Floats = xsimd::make_sized_batch_t<float, 4>;
  Floats r0 = Floats::load_unaligned(src);
  Floats r1 = Floats::load_unaligned(src + src_stride);
  Floats r2 = Floats::load_unaligned(src + 2 * src_stride);
  Floats r3 = Floats::load_unaligned(src + 3 * src_stride);
  transpose_4x4_in_registers(r0, r1, r2, r3);
  r0.store_unaligned(dst);
  r1.store_unaligned(dst + dst_stride);
  r2.store_unaligned(dst + 2 * dst_stride);
  r3.store_unaligned(dst + 3 * dst_stride);
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
