// a·b + c on float batches: the one multiply-add every kernel uses.
//
// Natively this is xsimd::fma: a fused instruction where the arch has one
// (fma3, avx512), a multiply then an add on plain sse2. WebAssembly's SIMD
// (simd128) has no fused multiply-add, so the plain wasm build issues
// f32x4.mul then f32x4.add. The relaxed-SIMD wasm flavour (compiled with
// -mrelaxed-simd) uses f32x4.relaxed_madd instead, which engines lower to one
// fused instruction where the CPU has FMA, and to a multiply and an add
// elsewhere; either result is a·b + c within one rounding of the exact value.
// clang 14 only has the relaxed-SIMD proposal's prototype,
// __builtin_wasm_fma_f32x4(x, y, z) = x + y·z (the order binaryen 108 also
// folds constants in), under an opcode no engine accepts;
// scripts/relaxed-simd-opcodes.mjs turns it into the standard instruction
// after linking.
#pragma once

#include <xsimd/xsimd.hpp>

#include "kernels/isa_namespace.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {

template <class Arch>
inline xsimd::batch<float, Arch> multiply_add(const xsimd::batch<float, Arch>& a,
                                              const xsimd::batch<float, Arch>& b,
                                              const xsimd::batch<float, Arch>& c) {
#if defined(__wasm_relaxed_simd__)
  // xsimd 8.1 maps its sse2 batches onto simd128 under Emscripten: the
  // register type is the 4-float wasm vector the builtin takes.
  return __builtin_wasm_fma_f32x4(c.data, a.data, b.data);  // c + a·b
#else
  return xsimd::fma(a, b, c);
#endif
}

/// Whether this build uses wasm's relaxed multiply-add (reported by simd_arch()).
#if defined(__wasm_relaxed_simd__)
inline constexpr bool kRelaxedMultiplyAdd = true;
#else
inline constexpr bool kRelaxedMultiplyAdd = false;
#endif

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
