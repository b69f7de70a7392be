// Scaled dot-product attention and multi-head self-attention.
//
// Shapes (row-major, see tensor.hpp):
//   x                 (B, T, C)  or (T, C) for one sequence
//   wq, wk            (C, H*d_k)      bq, bk  (H*d_k)      optional biases
//   wv                (C, H*d_v)      bv      (H*d_v)
//   wo                (H*d_v, C_out)  bo      (C_out)      optional output projection
//   q                 (B, H, Tq, d_k)                      per-head tensors
//   k                 (B, Hkv, Tk, d_k)  v (B, Hkv, Tk, d_v)
//   scores .. weights (B, H, Tq, Tk)  rows = queries, columns = keys
// Grouped keys and values (GQA; MQA when Hkv = 1): H % Hkv == 0 and query
// head h reads key/value head h / (H / Hkv). A KV cache: Tq <= Tk, and query
// i sits at key position pos(i) = Tk − Tq + i (so causal is aligned to the
// bottom right, as in decoding). Self-attention has Tq = Tk = T.
// Head h uses columns [h*d_k, (h+1)*d_k) of X·W_Q and X·W_K and
// [h*d_v, (h+1)*d_v) of X·W_V; heads are concatenated in that order
// (PyTorch nn.MultiheadAttention's convention).
//
// Steps: (rope: rotate q and k); scores = Q·Kᵀ; scaled = scores · scale;
// masked = scaled + bias + mask;
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
/// Mask tensors are (Tq, Tk), (B, Tq, Tk) or (B, H, Tq, Tk).
struct Mask {
  /// Look-ahead: query i may only attend to keys j <= pos(i) = Tk − Tq + i.
  bool causal = false;
  /// Padding: one length per sequence of the batch (size B); keys
  /// j >= lengths[b] are masked. Empty = no padding mask.
  std::vector<std::size_t> lengths;
  /// Added to the scaled scores (after the bias); -inf masks a position.
  /// NaN and +inf are rejected. Empty = none.
  Tensor additive;
  /// Boolean mask, 1 = may attend, 0 = masked (PyTorch's bool attn_mask).
  /// Empty = none.
  BoolTensor allowed;
  /// Sliding window: key j is visible to query i only if |pos(i) − j| < window.
  /// Unset = no window; when set it must be at least 1.
  std::optional<std::int64_t> window;
  /// Attention sinks: keys j < sinks stay visible through the window (still
  /// subject to causal, padding and the other masks). At most Tk; 0 = none.
  std::size_t sinks = 0;

  bool any() const {
    return causal || !lengths.empty() || !additive.empty() || !allowed.empty() ||
           window.has_value();
  }
};

/// Rotary position embedding (RoPE, the Llama / GPT-NeoX "rotate half"
/// convention): before the scores, each pair (p, p + d_k/2) of q at pos(i)
/// and of k at j is rotated by the angle pos·base^(−2p/d_k). d_k must be even.
struct Rope {
  bool enabled = false;
  double base = 10000.0;  // finite and > 0
};

/// An additive per-head bias on the scaled scores, composing with the masks.
struct Bias {
  /// ALiBi: adds −m_h·|pos(i) − j| with m_h = 2^(−8(h+1)/H) when H is a power
  /// of two, and the paper's interleaving otherwise (the slopes of the power
  /// of two below H, then every other slope of twice that power).
  bool alibi = false;
  /// A general bias, (H, Tq, Tk) shared by the batch or (B, H, Tq, Tk);
  /// finite. Added after ALiBi if both are given. Empty = none.
  Tensor values;

  bool any() const { return alibi || !values.empty(); }
};

struct AttentionOptions {
  Scale scale;
  Mask mask;
  Rope rope;
  Bias bias;
  /// true: keep every intermediate (materialises T×T per head).
  /// false: fast path, tiled online softmax, never materialises T×T.
  bool trace = true;
};

/// Intermediates of the traced path; the square ones are (B, H, Tq, Tk).
struct AttentionTrace {
  Tensor scores;                // Q·Kᵀ (of the rotated q and k with rope)
  Tensor scaled;                // scores · scale
  Tensor masked;                // scaled + bias + mask (-inf where masked)
  Tensor weights;               // softmax over keys; exactly 0 where masked
  Tensor q_rotated, k_rotated;  // with rope: q and k rotated, shaped as q and k
  Tensor bias;                  // with a bias: what was added, (B, H, Tq, Tk) like scores
};

struct AttentionResult {
  Tensor output;                        // (B, H, Tq, d_v), rank as given
  std::optional<AttentionTrace> trace;  // present iff options.trace
  /// (B, H, Tq): 1 where every key of that query was masked.
  std::vector<std::uint8_t> fully_masked;
  std::size_t fully_masked_count = 0;
  /// Only from attention_with_log_sum_exp (else empty): each query's
  /// log-sum-exp of its masked scores, (B, H, Tq) at q's rank less one;
  /// −inf for a fully masked query.
  Tensor log_sum_exp;
};

/// Scaled dot-product attention on given queries, keys and values.
/// q (B, H, Tq, d_k), k (B, Hkv, Tk, d_k), v (B, Hkv, Tk, d_v); also of
/// rank 3 (no B) and 2 (no B, H), all three of the same rank, in which case
/// the output has that rank and the trace tensors too.
/// Throws Error naming the argument for inconsistent shapes (a batch
/// mismatch, H not a multiple of Hkv, Tq > Tk), NaN/inf inputs, bad masks
/// (window < 1, sinks > Tk), an odd d_k or a non-finite or non-positive base
/// with rope, a bias of the wrong shape, and
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

/// attention() on the fast path (options.trace must be false) that also
/// fills log_sum_exp: the forward whose output and log-sum-exp
/// attention_backward can start from (backward.hpp). It always runs the
/// tiled kernel, also where attention() would take the decode kernel (at
/// most 16 query rows per key/value head), so its output may differ from
/// attention()'s there in the last bits. Throws what attention() throws.
AttentionResult attention_with_log_sum_exp(const TensorView& q, const TensorView& k,
                                           const TensorView& v,
                                           const AttentionOptions& options = {});

/// Weights of multi-head self-attention. Biases and the output projection
/// are optional (leave empty). wq (C, H·d_k), wk (C, Hkv·d_k), wv
/// (C, Hkv·d_v): with kv_heads < heads the keys and values are grouped (GQA).
struct SelfAttentionWeights {
  Tensor wq, wk, wv;
  Tensor bq, bk, bv;
  Tensor wo, bo;
  std::size_t heads = 1;
  /// Key/value heads (Hkv), a divisor of heads; 0 = heads.
  std::size_t kv_heads = 0;
};

/// Everything self_attention computed, per head where it applies.
/// When x was (T, C), the leading B is dropped from every shape here too.
struct SelfAttentionTrace {
  Tensor q, k, v;                          // (B, H, T, d_k), (B, Hkv, T, d_k), (B, Hkv, T, d_v)
  Tensor q_rotated, k_rotated;             // with rope: q and k rotated
  Tensor scores, scaled, masked, weights;  // (B, H, T, T)
  Tensor bias;                             // with a bias: (B, H, T, T)
  Tensor head_outputs;                     // (B, H, T, d_v)
  Tensor concat;                           // (B, T, H*d_v): heads side by side, before W_O
};

struct SelfAttentionResult {
  /// (B, T, C_out) with W_O, else (B, T, H*d_v); (T, ·) when x was (T, C).
  Tensor output;
  std::optional<SelfAttentionTrace> trace;
  std::vector<std::uint8_t> fully_masked;  // (B, H, T)
  std::size_t fully_masked_count = 0;
};

/// Multi-head self-attention: project, split heads, attend, concat, W_O.
/// Every option of attention() applies, with Tq = Tk = T.
SelfAttentionResult self_attention(const Tensor& x, const SelfAttentionWeights& weights,
                                   const AttentionOptions& options = {});

}  // namespace attnscope
