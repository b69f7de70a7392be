// Scaled dot-product attention and multi-head self-attention.
//
// Shapes (row-major, see tensor.hpp):
//   x                 (B, T, C)  or (T, C) for one sequence
//   wq, wk            (C, H*d_k)      bq, bk  (H*d_k)      optional biases
//   wv                (C, H*d_v)      bv      (H*d_v)
//   wo                (H*d_v, C_out)  bo      (C_out)      optional output projection
//   q, k              (B, H, T, d_k)  v (B, H, T, d_v)     per-head tensors
//   scores .. weights (B, H, T, T)    rows = queries, columns = keys
// Head h uses columns [h*d_k, (h+1)*d_k) of X·W_Q and X·W_K and
// [h*d_v, (h+1)*d_v) of X·W_V; heads are concatenated in that order
// (PyTorch nn.MultiheadAttention's convention).
//
// Steps: scores = Q·Kᵀ; scaled = scores · scale; masked = scaled + mask;
// weights = softmax over keys (max-subtracted, exact for any finite input);
// output = weights·V. A query whose keys are all masked gets zero weights and
// a zero output, and is flagged in `fully_masked` — never NaN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "attnscope/tensor.hpp"

namespace attnscope {

/// How scores are scaled before masking and softmax.
struct Scale {
  enum class Mode { InvSqrtDk, None, Custom };
  Mode mode = Mode::InvSqrtDk;
  float factor = 1.0f;  // used by Mode::Custom (multiplies the scores)

  static Scale inv_sqrt_dk() { return {Mode::InvSqrtDk, 1.0f}; }
  static Scale none() { return {Mode::None, 1.0f}; }
  /// Multiply scores by `factor` (a temperature τ is factor = 1/τ).
  static Scale custom(float factor) { return {Mode::Custom, factor}; }
  /// The factor actually applied for head dimension d_k.
  float factor_for(std::size_t d_k) const;
};

/// Masks, in any combination. A position masked by any of them is masked.
struct Mask {
  /// Look-ahead: query i may only attend to keys j <= i.
  bool causal = false;
  /// Padding: one length per sequence of the batch (size B); keys
  /// j >= lengths[b] are masked. Empty = no padding mask.
  std::vector<std::size_t> lengths;
  /// Added to the scaled scores. Shape (T, T), (B, T, T) or (B, H, T, T);
  /// -inf masks a position. NaN and +inf are rejected. Empty = none.
  Tensor additive;
  /// Boolean mask, 1 = may attend, 0 = masked (PyTorch's bool attn_mask).
  /// Shape (T, T), (B, T, T) or (B, H, T, T). Empty = none.
  BoolTensor allowed;

  bool any() const {
    return causal || !lengths.empty() || !additive.empty() || !allowed.empty();
  }
};

struct AttentionOptions {
  Scale scale;
  Mask mask;
  /// true: keep every intermediate (materialises T×T per head).
  /// false: fast path, tiled online softmax, never materialises T×T.
  bool trace = true;
};

/// Intermediates of the traced path, each (B, H, T, T).
struct AttentionTrace {
  Tensor scores;   // Q·Kᵀ
  Tensor scaled;   // scores · scale
  Tensor masked;   // scaled + mask (-inf where masked)
  Tensor weights;  // softmax over keys; exactly 0 where masked
};

struct AttentionResult {
  Tensor output;                      // (B, H, T, d_v), rank as given
  std::optional<AttentionTrace> trace;  // present iff options.trace
  /// (B, H, T): 1 where every key of that query was masked.
  std::vector<std::uint8_t> fully_masked;
  std::size_t fully_masked_count = 0;
};

/// Scaled dot-product attention on given queries, keys and values.
/// q, k: (B, H, T, d_k), v: (B, H, T, d_v); also (H, T, d) and (T, d), in
/// which case the output has the same rank and the trace tensors too.
/// Throws Error for inconsistent shapes, NaN/inf inputs, bad masks, and
/// inputs so large that a score could overflow float (|q|·|k|·scale plus
/// the largest finite additive mask entry above 3e38); ResourceError when
/// a size cannot be counted or allocated.
AttentionResult attention(const Tensor& q, const Tensor& k, const Tensor& v,
                          const AttentionOptions& options = {});

/// The same on views of the caller's memory (the package's bindings use it
/// to skip zero-filling a vector per input): the same checks, also of each
/// view's size against its shape, and the same result.
AttentionResult attention(const TensorView& q, const TensorView& k, const TensorView& v,
                          const AttentionOptions& options = {});

/// Weights of multi-head self-attention. Biases and the output projection
/// are optional (leave empty).
struct SelfAttentionWeights {
  Tensor wq, wk, wv;
  Tensor bq, bk, bv;
  Tensor wo, bo;
  std::size_t heads = 1;
};

/// Everything self_attention computed, per head where it applies.
/// When x was (T, C), the leading B is dropped from every shape here too.
struct SelfAttentionTrace {
  Tensor q, k, v;        // (B, H, T, d_k), (B, H, T, d_k), (B, H, T, d_v)
  Tensor scores, scaled, masked, weights;  // (B, H, T, T)
  Tensor head_outputs;   // (B, H, T, d_v)
  Tensor concat;         // (B, T, H*d_v): heads side by side, before W_O
};

struct SelfAttentionResult {
  /// (B, T, C_out) with W_O, else (B, T, H*d_v); (T, ·) when x was (T, C).
  Tensor output;
  std::optional<SelfAttentionTrace> trace;
  std::vector<std::uint8_t> fully_masked;  // (B, H, T)
  std::size_t fully_masked_count = 0;
};

/// Multi-head self-attention: project, split heads, attend, concat, W_O.
SelfAttentionResult self_attention(const Tensor& x,
                                   const SelfAttentionWeights& weights,
                                   const AttentionOptions& options = {});

}  // namespace attnscope
