// Checks of attention() and self_attention() beyond their arguments' shapes:
// the scale and the range the scores can reach.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attention_internal.hpp"
#include "format.hpp"
#include "kernels/scan.hpp"

namespace attnscope::detail {

namespace {

// The largest float sum of squares of the rows of x (SIMD), or +inf when
// one overflowed.
float max_row_norm2(const float* x, std::size_t rows, std::size_t d) {
  float worst = 0.0f;
  for (std::size_t r = 0; r < rows; ++r) {
    worst = std::max(worst, kernels::sum_of_squares<kernels::KeyNormArch>(x + r * d, d));
  }
  return worst;
}

// Largest Euclidean norm of the rows of x: from their float sums of squares,
// or, when one overflowed, from sums in double.
double max_row_norm(const float* x, std::size_t rows, std::size_t d) {
  const float norm2 = max_row_norm2(x, rows, d);
  if (!std::isinf(norm2)) return std::sqrt(double(norm2));
  double worst = 0.0;
  for (std::size_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (std::size_t p = 0; p < d; ++p) sum += double(x[r * d + p]) * x[r * d + p];
    worst = std::max(worst, sum);
  }
  return std::sqrt(worst);
}

// The largest norm of the rows of x: from norm2_max[i], the largest float
// sum of squares already taken, when there is one and it did not overflow
// (+inf), else measured.
double max_row_norm_from(const float* norm2_max, std::size_t i, const float* x, std::size_t rows,
                         std::size_t d) {
  return norm2_max && !std::isinf(norm2_max[i]) ? std::sqrt(double(norm2_max[i]))
                                                : max_row_norm(x, rows, d);
}

// A little below FLT_MAX, leaving room for float rounding of the sums.
constexpr double kScoreLimit = 3.0e38;

}  // namespace

float resolve_scale(const Scale& scale, std::size_t d_k, const char* fn) {
  if (scale.mode == Scale::Mode::Custom && !std::isfinite(scale.factor)) {
    throw Error(std::string(fn) + ": scale factor is " + format_value(scale.factor, 3) +
                ", expected a finite number");
  }
  return scale.factor_for(d_k);
}

void check_score_range(const float* q, const float* k, const AttentionDims& dims, float scale,
                       const ScoreTerms& terms, const char* fn, const float* key_norm2_max,
                       const float* query_norm2_max) {
  // The largest finite term added to a scaled score: mask, bias and ALiBi.
  double additive_max = 0.0;
  for (float a : terms.mask->additive.data) {
    if (std::isfinite(a)) additive_max = std::max(additive_max, double(std::abs(a)));
  }
  double bias_max = 0.0;
  if (terms.bias) {
    for (float a : terms.bias->data) bias_max = std::max(bias_max, double(std::abs(a)));
  }
  for (float slope : terms.alibi_slopes) {
    bias_max = std::max(bias_max, double(slope) * double(dims.k_len));
  }
  const std::size_t Tq = dims.q_len, Tk = dims.k_len, d_k = dims.d_k;
  std::vector<double> key_norms(dims.batch * dims.kv_heads);
  for (std::size_t kv_head = 0; kv_head < key_norms.size(); ++kv_head) {
    key_norms[kv_head] = max_row_norm_from(key_norm2_max, kv_head, k + kv_head * Tk * d_k, Tk, d_k);
  }
  for (std::size_t head = 0; head < dims.batch * dims.heads; ++head) {
    const std::size_t b = head / dims.heads, h = head % dims.heads;
    const double bound = max_row_norm_from(query_norm2_max, head, q + head * Tq * d_k, Tq, d_k) *
                         key_norms[b * dims.kv_heads + h / dims.group()];
    const double scaled_bound = bound * std::abs(double(scale)) + additive_max + bias_max;
    if (bound > kScoreLimit || scaled_bound > kScoreLimit) {
      throw Error(std::string(fn) + ": scores of batch " + std::to_string(b) + ", head " +
                  std::to_string(h) + " may reach " +
                  format_value(std::max(bound, scaled_bound), 3) +
                  " (|q|·|k|·scale + |additive mask| + |bias|) and overflow float; scale the "
                  "inputs down");
    }
  }
}

InputScan::InputScan(const AttentionDims& dims)
    : finite(dims.batch * dims.kv_heads, 0),
      key_norm2_max(dims.batch * dims.kv_heads, INFINITY),
      query_norm2_max(dims.batch * dims.heads, INFINITY) {}

void scan_head_inputs(const float* q, const float* k, const float* v, const AttentionDims& dims,
                      std::size_t kv_head, InputScan& scan) {
  const std::size_t group = dims.group(), Tq = dims.q_len, Tk = dims.k_len;
  const std::size_t d_k = dims.d_k, d_v = dims.d_v;
  const float* queries = q + kv_head * group * Tq * d_k;
  const float* keys = k + kv_head * Tk * d_k;
  scan.finite[kv_head] = kernels::all_finite(queries, group * Tq * d_k) &&
                         kernels::all_finite(keys, Tk * d_k) &&
                         kernels::all_finite(v + kv_head * Tk * d_v, Tk * d_v);
  scan.key_norm2_max[kv_head] = max_row_norm2(keys, Tk, d_k);
  // The query heads of a key/value head are consecutive: b·H + kv·group + g.
  for (std::size_t g = 0; g < group; ++g) {
    scan.query_norm2_max[kv_head * group + g] = max_row_norm2(queries + g * Tq * d_k, Tq, d_k);
  }
}

}  // namespace attnscope::detail
