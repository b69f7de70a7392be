// Internal plumbing shared by attention.cpp (validation and dispatch), the
// traced and fast paths, and self-attention. Inputs reaching these functions
// have already been validated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "allocate.hpp"
#include "attnscope/attention.hpp"
#include "checks.hpp"
#include "kernels/mask_row.hpp"

namespace attnscope::detail {

/// Sizes of one attention call: q (B, H, Tq, d_k), k (B, Hkv, Tk, d_k),
/// v (B, Hkv, Tk, d_v).
struct AttentionDims {
  std::size_t batch = 1, heads = 1, kv_heads = 1, q_len = 1, k_len = 1, d_k = 1, d_v = 1;

  /// Query heads per key/value head.
  std::size_t group() const { return heads / kv_heads; }
  /// pos(0) = Tk − Tq.
  std::size_t query_offset() const { return k_len - q_len; }
};

/// The sizes of q (B, H, Tq, d_k), k and v of rank 2 to 4 (shapes already checked).
AttentionDims attention_dims(const TensorView& q, const TensorView& k, const TensorView& v);

/// What is added to, or hides, the scaled scores: the masks, the bias
/// tensor (Bias::values, maybe empty) and the ALiBi slopes (empty without).
struct ScoreTerms {
  const Mask* mask = nullptr;
  const Tensor* bias = nullptr;
  std::vector<float> alibi_slopes;
};

/// Checks every mask of `mask` against dims; throws Error naming `fn`.
void validate_mask(const Mask& mask, const AttentionDims& dims, const char* fn);

/// Checks the bias tensor's shape and values and rope's settings.
void validate_bias(const Bias& bias, const AttentionDims& dims, const char* fn);
void validate_rope(const Rope& rope, const AttentionDims& dims, const char* fn);

/// ALiBi slopes m_0 .. m_{H-1} (the paper's rule).
std::vector<float> alibi_slopes(std::size_t heads);

/// The terms the mask, bias and ALiBi of `options` add to the scores.
ScoreTerms score_terms(const AttentionOptions& options, const AttentionDims& dims);
/// validate_mask, validate_bias and validate_rope, then score_terms.
ScoreTerms checked_score_terms(const AttentionOptions& options, const AttentionDims& dims,
                               const char* fn);

/// The score terms of batch b for `count` query heads from h0, stacked as
/// rows of Tq queries each (count = 1: one head).
kernels::HeadMask head_mask(const ScoreTerms& terms, const AttentionDims& dims, std::size_t b,
                            std::size_t h0, std::size_t count = 1);

/// Rotates `rows_per_head` rows of width d in each of `heads` heads, row t
/// at position first_position + t (RoPE, rotate-half pairs).
std::vector<float> rotate_rope(const float* x, std::size_t heads, std::size_t rows_per_head,
                               std::size_t first_position, std::size_t d, double base,
                               const char* fn);

/// q and k rotated by rope, each row at its position (queries at
/// dims.query_offset() on, keys from 0).
struct RotatedQueriesKeys {
  std::vector<float> q, k;
};
RotatedQueriesKeys rotate_queries_keys(const float* q, const float* k, const AttentionDims& dims,
                                       double base, const char* fn);

/// The bias that the score terms add, (B, H, Tq, Tk), for the trace.
void fill_bias(const ScoreTerms& terms, const AttentionDims& dims, float* out);

/// Where the traced path writes its intermediates, each (B·H·Tq·Tk) floats.
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
  trace.scores = allocate_zeros(square, what);
  trace.scaled = allocate_zeros(square, what);
  trace.masked = allocate_zeros(square, what);
  trace.weights = allocate_zeros(square, what);
  return {trace.scores.data.data(), trace.scaled.data.data(), trace.masked.data.data(),
          trace.weights.data.data()};
}

/// q, k, v → out (B,H,Tq,d_v), fully_masked (B,H,Tq). Both return the number
/// of fully masked queries.
std::size_t attention_traced(const float* q, const float* k, const float* v,
                             const AttentionDims& dims, float scale, const ScoreTerms& terms,
                             float* out, std::uint8_t* fully_masked, const TraceBuffers& trace);

struct InputScan;

/// scores_finite: false when a decode step met a non-finite score (only
/// possible when its input checks were deferred; see DeferredChecks).
/// log_sum_exp, when given (B·H·Tq floats), receives each query's
/// log-sum-exp of its masked scores (−inf when fully masked).
/// key_norm2_max, when given (B·Hkv floats), receives on the decode kernel's
/// path each key/value head's largest float sum of squares of the key rows
/// it read (see kernels::decode_attention); the flash path leaves it as is.
/// scan, when given, is filled by the flash path's packing step (see
/// InputScan); the decode path leaves it unscanned.
std::size_t attention_fast(const float* q, const float* k, const float* v,
                           const AttentionDims& dims, float scale, const ScoreTerms& terms,
                           float* out, std::uint8_t* fully_masked, bool* scores_finite,
                           float* log_sum_exp = nullptr, float* key_norm2_max = nullptr,
                           InputScan* scan = nullptr);

/// Validates the scale (finite custom factor) and returns the factor for d_k.
float resolve_scale(const Scale& scale, std::size_t d_k, const char* fn);

/// Throws unless every score, scaled score and masked score is sure to fit
/// in a float: by Cauchy–Schwarz |q·k| <= |q|·|k|, so the row norms bound
/// them. Without this an overflowing score would turn into NaN weights.
/// key_norm2_max (B·Hkv floats, as the decode kernel gives them) and
/// query_norm2_max (B·H floats, as an InputScan has them), when given, are
/// each head's largest float sum of squares of a key or query row already
/// taken: the same bound, the same error. Without them, or where an entry is
/// +inf (a sum overflowed float, or it was never taken), the norm is measured
/// from k or q.
void check_score_range(const float* q, const float* k, const AttentionDims& dims, float scale,
                       const ScoreTerms& terms, const char* fn,
                       const float* key_norm2_max = nullptr,
                       const float* query_norm2_max = nullptr);

/// A decode step whose kernel reads every key and value row unmasked by at
/// least one query row (no padding, custom mask or window hides a key): a
/// NaN or infinity in k or v then always reaches a score or the output.
/// attention() scans k and v for them only when a score or the output is
/// not finite, and checks the score bound after the kernel with the key
/// norms that the kernel took while reading the keys (the same bound and
/// error as on the traced path, so both paths accept the same inputs; a
/// refused call's output is discarded): k and v are each read once instead
/// of three times and twice.
bool decode_reads_every_key(const AttentionDims& dims, const Mask& mask);

/// What the flash path's packing step learns of q, k and v while it reads
/// them, when attention() leaves their checks to it: per key/value head
/// whether its query rows, keys and values are all finite, and the largest
/// float sum of squares of its key rows and of each query head's rows
/// (+inf: a sum overflowed, or it was never taken). Each task scans its own
/// head, so these checks run on the pool's threads instead of before the
/// call on one.
struct InputScan {
  std::vector<std::uint8_t> finite;    // B·Hkv; 0 until scanned
  std::vector<float> key_norm2_max;    // B·Hkv
  std::vector<float> query_norm2_max;  // B·H

  /// Everything unscanned, for dims.
  explicit InputScan(const AttentionDims& dims);
};

/// Fills `scan` for one key/value head (index b·Hkv + kv) of the inputs.
void scan_head_inputs(const float* q, const float* k, const float* v, const AttentionDims& dims,
                      std::size_t kv_head, InputScan& scan);

/// True when attention_fast runs the flash kernel (not the decode kernel).
bool takes_flash_path(const AttentionDims& dims, bool with_log_sum_exp);

/// The inputs whose full checks attention() deferred (see above); null when
/// they were checked before the call. With `scan` (the flash path), q's
/// finite check is deferred too, and the packing step fills the scan.
struct DeferredChecks {
  TensorView k, v;
  TensorView q{};
  InputScan* scan = nullptr;
};

/// Everything attention() and self_attention() share once q, k and v exist:
/// options checked against dims, rope, the score range, the traced or fast
/// path into `out` and `fully_masked` (sized by the caller), and with a trace
/// its square tensors (shape `square`), rotated q and k (shapes q_shape,
/// k_shape) and bias. Returns the number of fully masked queries.
template <class Trace>
std::size_t run_attention(const float* q, const float* k, const float* v, const AttentionDims& dims,
                          const AttentionOptions& options, float scale, const Shape& square,
                          const Shape& q_shape, const Shape& k_shape, float* out,
                          std::uint8_t* fully_masked, Trace* trace, const char* fn,
                          const DeferredChecks* deferred = nullptr, float* log_sum_exp = nullptr);

/// Every check attention() makes of q, k, v and the options (shapes,
/// values, masks, bias, rope, scale and the score range), without running
/// it: for a backward given the forward's results. Messages name `attention`.
/// With rope, the score-range check needs q and k rotated; they are returned
/// so that the backward need not rotate them again (empty without rope).
RotatedQueriesKeys check_attention_inputs(const TensorView& q, const TensorView& k,
                                          const TensorView& v, const AttentionOptions& options);

}  // namespace attnscope::detail

#include "attention_run.hpp"
