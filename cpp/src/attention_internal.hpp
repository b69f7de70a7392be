// Internal plumbing shared by attention.cpp (validation and dispatch), the
// traced and fast paths, and self-attention. Inputs reaching these functions
// have already been validated.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attnscope/attention.hpp"
#include "kernels/mask_row.hpp"
#include "tensor_checks.hpp"

namespace attnscope::detail {

/// Sizes of one attention call: per-head tensors are (B, H, T, d).
struct AttentionDims {
  std::size_t batch = 1, heads = 1, seq_len = 1, d_k = 1, d_v = 1;
};

/// Checks every mask of `mask` against dims; throws Error naming `fn`.
void validate_mask(const Mask& mask, const AttentionDims& dims, const char* fn);

/// The masks that apply to (batch b, head h), as raw pointers into `mask`.
kernels::HeadMask head_mask(const Mask& mask, const AttentionDims& dims, std::size_t b,
                            std::size_t h);

/// Where the traced path writes its intermediates, each (B·H·T·T) floats.
struct TraceBuffers {
  float* scores;
  float* scaled;
  float* masked;
  float* weights;
};

/// Allocates the four square tensors of a trace (AttentionTrace or
/// SelfAttentionTrace) with shape `square` and returns where the traced path
/// writes them. Throws ResourceError naming `what` when they cannot be allocated.
template <class Trace>
TraceBuffers allocate_square_tensors(Trace& trace, const Shape& square, const char* what) {
  trace.scores = zeros_for(square, what);
  trace.scaled = zeros_for(square, what);
  trace.masked = zeros_for(square, what);
  trace.weights = zeros_for(square, what);
  return {trace.scores.data.data(), trace.scaled.data.data(), trace.masked.data.data(),
          trace.weights.data.data()};
}

/// q (B,H,T,d_k), k (B,H,T,d_k), v (B,H,T,d_v) → out (B,H,T,d_v),
/// fully_masked (B,H,T). Both return the number of fully masked queries.
std::size_t attention_traced(const float* q, const float* k, const float* v,
                             const AttentionDims& dims, float scale, const Mask& mask,
                             float* out, std::uint8_t* fully_masked, const TraceBuffers& trace);

std::size_t attention_fast(const float* q, const float* k, const float* v,
                           const AttentionDims& dims, float scale, const Mask& mask, float* out,
                           std::uint8_t* fully_masked);

/// Validates the scale (finite custom factor) and returns the factor for d_k.
float resolve_scale(const Scale& scale, std::size_t d_k, const char* fn);

/// Throws unless every score, scaled score and masked score is sure to fit
/// in a float: by Cauchy–Schwarz |q·k| <= |q|·|k|, so the row norms bound
/// them. Without this an overflowing score would turn into NaN weights.
void check_score_range(const float* q, const float* k, const AttentionDims& dims, float scale,
                       const Mask& mask, const char* fn);

/// Throws if attention produced a non-finite value, which only happens when
/// finite inputs overflow float in Q·Kᵀ.
void check_output_finite(const Tensor& out, const char* fn);

}  // namespace attnscope::detail
