// AVX-512 (F, CD, DQ, BW) instantiation; CMake compiles this file with those
// flags when runtime dispatch is on (ATTN_DISPATCH), otherwise it is empty.
#include "kernels/dispatch_arch.hpp"

#if defined(ATTN_DISPATCH) && XSIMD_WITH_AVX512BW
ATTN_INSTANTIATE_KERNELS(xsimd::avx512bw)
#endif
