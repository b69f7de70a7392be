// Lane-wise maximum for inputs that are never NaN (scores, exponents).
//
// Under Emscripten, _mm_max_ps (and so xsimd::max) is emulated with a
// compare and a bit-select, because x86 and wasm disagree on NaN and -0.
// WebAssembly's f32x4.pmax(a, b) = (a < b ? b : a) is one
// instruction on x86 engines and exact for non-NaN inputs, so the hot loops
// use it. Elsewhere xsimd::max is already one instruction.
#pragma once

#include <xsimd/xsimd.hpp>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

#include "kernels/isa_namespace.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {

/// max(a, b) per lane; a NaN lane in `a` stays NaN (callers never pass one).
template <class Arch>
xsimd::batch<float, Arch> max_no_nan(xsimd::batch<float, Arch> a, xsimd::batch<float, Arch> b) {
#if defined(__wasm_simd128__)
  using reg = typename xsimd::batch<float, Arch>::register_type;
  return reg(wasm_f32x4_pmax(v128_t(reg(a)), v128_t(reg(b))));
#else
  // maxps(b, a) returns a when either is NaN: the NaN lane of `a` survives.
  return xsimd::max(b, a);
#endif
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
