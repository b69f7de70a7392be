// Library version and the SIMD instruction set the hot kernels run with.
#include "attnscope/attnscope.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/multiply_add.hpp"

namespace attnscope {

const char* version() { return ATTN_VERSION; }

// The set chosen at run time (e.g. "fma3+avx2" on an AVX2 machine running
// the portable native build); "sse2" under WebAssembly, "sse2+relaxed_madd"
// in the wasm flavour built with relaxed SIMD.
const char* simd_arch() {
  if constexpr (kernels::kRelaxedMultiplyAdd) return "sse2+relaxed_madd";
  return kernels::best_arch_name();
}

}  // namespace attnscope
