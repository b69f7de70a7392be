// The parts of a Llama-style decoder block and the block they compose:
// RMSNorm, the SwiGLU feed-forward, and pre-norm residuals without biases.
// Attention options (kv_heads via the width of W_K / W_V, rope, ALiBi,
// window) come through AttentionOptions and SelfAttentionWeights as usual.
//
// Like block.hpp, the parts act on the last dimension of a row-major tensor
// of any rank >= 1 (usually (B, T, C) or (T, C)).
#pragma once

#include <cstddef>

#include "attnscope/attention.hpp"
#include "attnscope/block.hpp"
#include "attnscope/tensor.hpp"

namespace attnscope {

/// RMSNorm over the last dimension: x / sqrt(mean(x²) + eps) · gamma.
/// gamma: (C) or empty (all ones). eps finite and > 0.
Tensor rms_norm(const Tensor& x, const Tensor& gamma, float eps = 1e-6f);

/// SwiGLU feed-forward: (SiLU(x·W_gate) ⊙ (x·W_up))·W_down, SiLU(z) = z·σ(z).
/// gate and up: (C, hidden); down: (hidden, C_out). Biases are optional
/// (Llama has none).
Tensor swiglu(const Tensor& x, const Linear& gate, const Linear& up, const Linear& down);

struct LlamaBlockWeights {
  SelfAttentionWeights attention;  // needs wo (H·d_v, C) so the residual matches C
  Tensor attention_norm;           // RMSNorm gamma before attention, (C) or empty
  Tensor ffn_norm;                 // RMSNorm gamma before the feed-forward
  Linear gate, up, down;           // SwiGLU
  float eps = 1e-6f;
};

struct LlamaBlockTrace {
  Tensor attention_norm;          // RMSNorm(x)
  SelfAttentionResult attention;  // with its own trace when options.trace
  Tensor attention_residual;      // h = x + attention output
  Tensor ffn_norm;                // RMSNorm(h)
  Tensor ffn_output;              // SwiGLU(RMSNorm(h))
};

struct LlamaBlockResult {
  Tensor output;  // h + SwiGLU(RMSNorm(h)), same shape as x
  LlamaBlockTrace trace;
};

/// h = x + Attn(RMSNorm(x)); out = h + SwiGLU(RMSNorm(h)).
LlamaBlockResult llama_block(const Tensor& x, const LlamaBlockWeights& weights,
                             const AttentionOptions& options = {});

}  // namespace attnscope
