// RMSNorm and SwiGLU on checked arguments, shared by rms_norm_swiglu.cpp and
// llama_block.cpp (see block_internal.hpp for the conventions).
#pragma once

#include <cstddef>
#include <string>

#include "attnscope/llama_block.hpp"

namespace attnscope::detail {

Tensor rms_norm_unchecked(const Tensor& x, const Tensor& gamma, float eps, const char* fn);
Tensor swiglu_unchecked(const Tensor& x, const Linear& gate, const Linear& up, const Linear& down,
                        const char* fn);
/// Checks gate and up (C → hidden, both) and down (hidden → ·), naming them
/// `prefix` + "gate." etc.; returns down's output width.
std::size_t check_swiglu(const Linear& gate, const Linear& up, const Linear& down, std::size_t C,
                         const char* fn, const std::string& prefix);

}  // namespace attnscope::detail
