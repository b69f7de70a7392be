// Checks shared by attention() and self_attention(): the scale, the range
// the scores can reach, and the finiteness of the result.
#include <algorithm>
#include <cmath>
#include <string>

#include "attention_internal.hpp"
#include "format.hpp"
#include "kernels/scan.hpp"

namespace attnscope::detail {

namespace {

// Largest Euclidean norm of the rows of x. Rows are summed in float (SIMD);
// a row whose float sum overflows is summed again in double.
double max_row_norm(const float* x, std::size_t rows, std::size_t d) {
  double worst = 0.0;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* row = x + r * d;
    double sum = kernels::sum_of_squares(row, d);
    if (std::isinf(sum)) {
      sum = 0.0;
      for (std::size_t p = 0; p < d; ++p) sum += double(row[p]) * row[p];
    }
    worst = std::max(worst, sum);
  }
  return std::sqrt(worst);
}

std::string format_number(double value) { return format_general(value, 3); }

// A little below FLT_MAX, leaving room for float rounding of the sums.
constexpr double kScoreLimit = 3.0e38;

}  // namespace

float resolve_scale(const Scale& scale, std::size_t d_k, const char* fn) {
  if (scale.mode == Scale::Mode::Custom && !std::isfinite(scale.factor)) {
    throw Error(std::string(fn) + ": scale factor is " + format_number(scale.factor) +
                ", expected a finite number");
  }
  return scale.factor_for(d_k);
}

void check_score_range(const float* q, const float* k, const AttentionDims& dims, float scale,
                       const Mask& mask, const char* fn) {
  double additive_max = 0.0;
  for (float a : mask.additive.data) {
    if (std::isfinite(a)) additive_max = std::max(additive_max, double(std::abs(a)));
  }
  const std::size_t T = dims.seq_len, d_k = dims.d_k;
  for (std::size_t head = 0; head < dims.batch * dims.heads; ++head) {
    const double bound = max_row_norm(q + head * T * d_k, T, d_k) *
                         max_row_norm(k + head * T * d_k, T, d_k);
    const double scaled_bound = bound * std::abs(double(scale)) + additive_max;
    if (bound > kScoreLimit || scaled_bound > kScoreLimit) {
      throw Error(std::string(fn) + ": scores of batch " + std::to_string(head / dims.heads) +
                  ", head " + std::to_string(head % dims.heads) + " may reach " +
                  format_number(std::max(bound, scaled_bound)) +
                  " (|q|·|k|·scale + |additive mask|) and overflow float; scale the inputs down");
    }
  }
}

void check_output_finite(const Tensor& out, const char* fn) {
  if (kernels::all_finite(out.data.data(), out.data.size())) return;
  for (float value : out.data) {
    if (!std::isfinite(value)) {
      throw Error(std::string(fn) +
                  ": the output overflows float (values near 3.4e38); scale the inputs down");
    }
  }
}

}  // namespace attnscope::detail
