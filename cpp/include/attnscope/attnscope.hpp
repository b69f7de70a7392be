// attnscope: self-attention, exact and fast, with every intermediate kept.
// Include this header for the whole public API.
#pragma once

#include "attnscope/attention.hpp"
#include "attnscope/block.hpp"
#include "attnscope/tensor.hpp"

namespace attnscope {

/// Library version, "MAJOR.MINOR.PATCH".
const char* version();

/// Name of the SIMD instruction set the kernels were compiled for
/// (e.g. "sse2"; under WebAssembly the 128-bit path reports "sse2" too).
const char* simd_arch();

}  // namespace attnscope
