// The two attention backward paths behind attention_backward()
// (backward.hpp). Inputs are checked by the caller; gradients are written
// into zeroed buffers shaped as q, k and v.
#pragma once

#include <cstddef>

#include "attention_internal.hpp"

namespace attnscope::detail {

struct AttentionGradientBuffers {
  float* dq;  // (B, H, Tq, d_k)
  float* dk;  // (B, Hkv, Tk, d_k), summed over each GQA group
  float* dv;  // (B, Hkv, Tk, d_v)
};

/// From the forward's softmax weights (B, H, Tq, Tk).
void attention_backward_traced(const float* q, const float* k, const float* v,
                               const float* d_output, const float* weights,
                               const AttentionDims& dims, float scale,
                               const AttentionGradientBuffers& out);

/// From the forward's output (B, H, Tq, d_v) and each query's log-sum-exp
/// of its masked scores (B, H, Tq): recomputes the weights one key tile at
/// a time.
void attention_backward_flash(const float* q, const float* k, const float* v, const float* output,
                              const float* log_sum_exp, const float* d_output,
                              const AttentionDims& dims, float scale, const ScoreTerms& terms,
                              const AttentionGradientBuffers& out);

}  // namespace attnscope::detail
