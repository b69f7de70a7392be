// Gradients of scaled dot-product attention (see attention.hpp for the
// shapes and options): given q, k, v and dL/d(output), the gradients of a
// loss L with respect to q, k and v.
//
// Two paths, chosen like the forward's by options.trace:
//   trace = true   the traced form: runs the traced forward and uses its
//                  softmax weights (B, H, Tq, Tk).
//   trace = false  the flash-style form: never holds a Tq×Tk tensor. Its
//                  forward also gives each query's log-sum-exp of its masked
//                  scores; the weights are then recomputed one key tile at a
//                  time from q, k and that log-sum-exp. Given the output and
//                  log-sum-exp that attention_with_log_sum_exp already
//                  returned (SavedForward), it skips that forward.
// With scores s = scale·q·kᵀ (+ bias + masks), weights P = softmax(s) and
// output O = P·v, per query row i: dv += Pᵀ·dO, dP = dO·vᵀ,
// dS = P ∘ (dP − rowsum(dO ∘ O)), dq = scale·dS·k, dk += scale·dSᵀ·q.
// Grouped heads (GQA) sum the gradients of every query head that reads a
// key/value head. With rope, the scores use q and k rotated (R(θ)·q at
// pos(i), R(θ)·k at j), and their gradients come back through the
// rotation's transpose: dq = R(−θ)·dq_rotated, dk = R(−θ)·dk_rotated. Masked positions, and every
// position of a fully masked query, get zero gradient (never NaN).
#pragma once

#include "attnscope/attention.hpp"
#include "attnscope/tensor.hpp"

namespace attnscope {

struct AttentionGradients {
  Tensor dq;  // shaped as q
  Tensor dk;  // shaped as k
  Tensor dv;  // shaped as v
};

/// d_output is shaped as attention()'s output, (B, H, Tq, d_v) at q's rank.
/// Every check of attention() applies; also throws Error naming d_output
/// for a wrong shape or a non-finite value. The scale, masks, biases and
/// rope's angles are constants.
AttentionGradients attention_backward(const TensorView& q, const TensorView& k, const TensorView& v,
                                      const TensorView& d_output,
                                      const AttentionOptions& options = {});

/// What the flash form reads of its forward: attention_with_log_sum_exp's
/// output (B, H, Tq, d_v) and log_sum_exp (B, H, Tq), at q's rank.
struct SavedForward {
  TensorView output;
  TensorView log_sum_exp;
};

/// The flash form (options.trace must be false) from a saved forward: from
/// attention_with_log_sum_exp on the same q, k, v and options, the
/// gradients are bit for bit those of the call above. Every check of the
/// call above applies (q, k, v and the options are checked as attention()
/// checks them); also throws Error naming output or log_sum_exp for a wrong
/// shape, a NaN or infinite output, or a log-sum-exp that is NaN or +inf
/// (−inf, a fully masked query, is accepted).
AttentionGradients attention_backward(const TensorView& q, const TensorView& k, const TensorView& v,
                                      const TensorView& d_output, const SavedForward& saved,
                                      const AttentionOptions& options = {});

}  // namespace attnscope
