// Every kernel header puts its code in `inline namespace ATTN_KERNEL_ISA`
// inside attnscope::kernels. Each translation unit compiled with an
// instruction set's own flags (kernels_avx2.cpp, kernels_avx512.cpp, the
// per-set kernel test executables) sets ATTN_KERNEL_ISA to a name of its own
// in CMake; everything else gets isa_default. Inline functions and template
// instantiations thus get a different mangled name per instruction set, so
// the linker can never keep an AVX-compiled copy for a caller built for the
// baseline (the one definition rule holds by construction). Types shared
// across the dispatch boundary live outside it (boundary_types.hpp).
#pragma once

#ifndef ATTN_KERNEL_ISA
#define ATTN_KERNEL_ISA isa_default
#endif
