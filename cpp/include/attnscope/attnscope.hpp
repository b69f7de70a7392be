// attnscope: self-attention, exact and fast, with every intermediate kept.
// Include this header for the whole public API.
#pragma once

#include "attnscope/attention.hpp"
#include "attnscope/backward.hpp"
#include "attnscope/block.hpp"
#include "attnscope/gpt2.hpp"
#include "attnscope/llama_block.hpp"
#include "attnscope/matmul_tile.hpp"
#include "attnscope/tensor.hpp"
#include "attnscope/threads.hpp"
#include "attnscope/train.hpp"

namespace attnscope {

/// Library version, "MAJOR.MINOR.PATCH".
const char* version();

/// Name of the SIMD instruction set the hot kernels run with. Portable native
/// builds choose it at run time from what the CPU has ("sse2", "fma3+avx2",
/// "avx512bw"); under WebAssembly the 128-bit path reports "sse2".
const char* simd_arch();

}  // namespace attnscope
