// AVX2 + FMA instantiation; CMake compiles this file with -mavx2 -mfma when
// runtime dispatch is on (ATTN_DISPATCH), otherwise it is empty.
#include "kernels/dispatch_arch.hpp"

#if defined(ATTN_DISPATCH) && XSIMD_WITH_AVX2 && XSIMD_WITH_FMA3_AVX2
ATTN_INSTANTIATE_KERNELS(xsimd::fma3<xsimd::avx2>)
#endif
