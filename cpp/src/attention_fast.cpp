// The fast path: per (batch, head), the tiled online-softmax kernel. Only
// O(T·d) scratch is allocated; no T×T buffer exists.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "attention_internal.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/flash_attention.hpp"
#include "kernels/softmax_rows.hpp"
#include "kernels/pack_keys.hpp"
#include "kernels/scan.hpp"

namespace attnscope::detail {

namespace {

// The flash kernel sums unnormalised weights (each below
// kMaxUnnormalisedWeight) times values, so a partial sum can reach
// 256·T·max|v| before the final division. For values that close to FLT_MAX,
// run on values scaled by an exact power of two instead.
int value_exponent_shift(const float* v, std::size_t n, std::size_t T) {
  const double growth = double(kernels::kMaxUnnormalisedWeight) * double(2 * T);
  if (double(kernels::max_abs(v, n)) * growth <= double(FLT_MAX)) return 0;
  return static_cast<int>(std::ceil(std::log2(growth)));
}

// The kernel wants q·k already scaled: the scale is folded into the keys as
// they are packed, at no cost. If that would push a key past kFoldLimit
// (huge keys and a scale above 1), the keys get just enough of it to reach
// kFoldLimit and a copy of the queries the rest: check_score_range bounds
// |q|·|k|·|scale| by 3e38, so those queries stay small and every product
// finite (check_output_finite catches the absurd corner left: scales near
// FLT_MAX with queries near it too).
constexpr double kFoldLimit = 1e38;

struct FoldedFactors {
  float keys = 1.0f, queries = 1.0f;
};

FoldedFactors fold_factors(double factor, float largest_key) {
  if (largest_key == 0.0f) return {};  // every score is 0 whatever the factor
  const double key_factor = std::min({std::abs(factor), kFoldLimit / double(largest_key), kFoldLimit});
  if (key_factor == 0.0) return {0.0f, 1.0f};
  return {float(std::copysign(key_factor, factor)), float(std::abs(factor) / key_factor)};
}

}  // namespace

std::size_t attention_fast(const float* q, const float* k, const float* v,
                           const AttentionDims& dims, float scale, const Mask& mask, float* out,
                           std::uint8_t* fully_masked) {
  using Arch = xsimd::default_arch;
  const std::size_t T = dims.seq_len, d_k = dims.d_k, d_v = dims.d_v;
  std::vector<float> packed_keys(kernels::packed_keys_size(T, d_k, kernels::kKeyTile));
  std::vector<float> scaled_values, scaled_queries;
  kernels::FlashWorkspace workspace;
  std::size_t count = 0;
  for (std::size_t b = 0; b < dims.batch; ++b) {
    for (std::size_t h = 0; h < dims.heads; ++h) {
      const std::size_t head = b * dims.heads + h;
      const float* values = v + head * T * d_v;
      float* head_out = out + head * T * d_v;
      const int shift = value_exponent_shift(values, T * d_v, T);
      if (shift) {
        scaled_values.assign(values, values + T * d_v);
        kernels::scale_row<Arch>(scaled_values.data(), T * d_v, std::ldexp(1.0f, -shift));
        values = scaled_values.data();
      }
      const float* keys = k + head * T * d_k;
      const float* queries = q + head * T * d_k;
      const FoldedFactors factors = fold_factors(scale, kernels::max_abs(keys, T * d_k));
      kernels::pack_key_tiles(keys, T, d_k, kernels::kKeyTile, packed_keys.data(), factors.keys);
      if (factors.queries != 1.0f) {
        scaled_queries.assign(queries, queries + T * d_k);
        kernels::scale_row<Arch>(scaled_queries.data(), T * d_k, factors.queries);
        queries = scaled_queries.data();
      }
      kernels::flash_attention_best(queries, packed_keys.data(), values, T, d_k, d_v,
                                     head_mask(mask, dims, b, h), head_out,
                                     fully_masked + head * T, workspace);
      if (shift) kernels::scale_row<Arch>(head_out, T * d_v, std::ldexp(1.0f, shift));
      for (std::size_t i = 0; i < T; ++i) count += fully_masked[head * T + i];
    }
  }
  return count;
}

}  // namespace attnscope::detail
