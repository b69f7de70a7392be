// AVX-512 (F, CD, DQ, BW) instantiation; CMake compiles this file with those
// flags when runtime dispatch is on (ATTN_DISPATCH), otherwise it is empty.

// GCC 12's own _mm512_max_ps starts from _mm512_undefined_ps(), which it then
// reports as "used uninitialized" once inlined into our code: a false
// positive in the compiler's header, silenced for this file only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "kernels/dispatch_arch.hpp"

#if defined(ATTN_DISPATCH) && XSIMD_WITH_AVX512BW
ATTN_INSTANTIATE_KERNELS(xsimd::avx512bw)
#endif
