// Library version and the SIMD instruction set the kernels were built for.
#include <xsimd/xsimd.hpp>

#include "attnscope/attnscope.hpp"

namespace attnscope {

const char* version() { return ATTN_VERSION; }

const char* simd_arch() { return xsimd::default_arch::name(); }

}  // namespace attnscope
