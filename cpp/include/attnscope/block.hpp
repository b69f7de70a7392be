// Transformer-block parts around attention: positional encoding, residual,
// LayerNorm, feed-forward, and a block composing them.
//
// All operate on the last dimension of a row-major tensor of any rank >= 1
// (usually (B, T, C) or (T, C)).
#pragma once

#include <cstddef>
#include <optional>

#include "attnscope/attention.hpp"
#include "attnscope/tensor.hpp"

namespace attnscope {

/// y = x·W (+ b). weight (in, out), bias (out) or empty; x (..., in).
struct Linear {
  Tensor weight;
  Tensor bias;
};
Tensor linear(const Tensor& x, const Linear& layer);

/// Sinusoidal encoding of "Attention Is All You Need": (T, C) with
/// PE[t, 2i] = sin(t / base^(2i/C)), PE[t, 2i+1] = cos(t / base^(2i/C)).
Tensor positional_encoding(std::size_t T, std::size_t C, float base = 10000.0f);

/// x + PE for x (T, C) or (B, T, C).
Tensor add_positional_encoding(const Tensor& x, float base = 10000.0f);

/// Element-wise a + b, same shapes.
Tensor residual_add(const Tensor& a, const Tensor& b);

/// LayerNorm over the last dimension: (x - mean) / sqrt(var + eps) * gamma + beta,
/// with the biased variance (PyTorch). gamma, beta: (C) or empty (1 and 0).
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps = 1e-5f);

enum class Activation { ReLU, GELU };  // GELU: exact, x·Φ(x) with erf

/// Linear → activation → Linear.
Tensor feed_forward(const Tensor& x, const Linear& first, const Linear& second,
                    Activation activation);

struct BlockWeights {
  SelfAttentionWeights attention;  // needs wo so the residual matches C
  Tensor norm1_gamma, norm1_beta;  // LayerNorm around attention
  Tensor norm2_gamma, norm2_beta;  // LayerNorm around the feed-forward
  Linear ff1, ff2;
  Activation activation = Activation::ReLU;
  float eps = 1e-5f;
  /// true: pre-norm  x + Attn(LN(x)), then h + FF(LN(h)).
  /// false: post-norm LN(x + Attn(x)), then LN(h + FF(h)).
  bool norm_first = false;
};

struct BlockTrace {
  SelfAttentionResult attention;  // with its own trace when options.trace
  Tensor attention_residual;      // x + attention output (before norm in post-norm)
  Tensor norm1;                   // LN applied (to x in pre-norm, to the residual in post-norm)
  Tensor ff_hidden;               // activation(first linear)
  Tensor ff_output;               // second linear
  Tensor ff_residual;             // h + ff_output
  Tensor norm2;                   // second LN output
};

struct BlockResult {
  Tensor output;  // same shape as x
  BlockTrace trace;
};

BlockResult transformer_block(const Tensor& x, const BlockWeights& weights,
                              const AttentionOptions& options = {});

}  // namespace attnscope
