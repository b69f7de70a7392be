// Library version and the SIMD instruction set the hot kernels run with.
#include "attnscope/attnscope.hpp"
#include "kernels/dispatch.hpp"

namespace attnscope {

const char* version() { return ATTN_VERSION; }

// The set chosen at run time (e.g. "fma3+avx2" on an AVX2 machine running
// the portable native build); "sse2" under WebAssembly.
const char* simd_arch() { return kernels::best_arch_name(); }

}  // namespace attnscope
