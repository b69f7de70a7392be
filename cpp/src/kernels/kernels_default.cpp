// The baseline instantiation, compiled with the library's own flags: SSE2 in
// a portable native build, 128-bit wasm SIMD under Emscripten, the host's
// best set with ATTN_NATIVE_ARCH.
#include "kernels/dispatch_arch.hpp"

ATTN_INSTANTIATE_KERNELS(xsimd::default_arch)
