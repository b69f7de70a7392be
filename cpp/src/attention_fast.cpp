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

}  // namespace

std::size_t attention_fast(const float* q, const float* k, const float* v,
                           const AttentionDims& dims, float scale, const Mask& mask, float* out,
                           std::uint8_t* fully_masked) {
  using Arch = xsimd::default_arch;
  const std::size_t T = dims.seq_len, d_k = dims.d_k, d_v = dims.d_v;
  std::vector<float> packed_keys(kernels::packed_keys_size(T, d_k, kernels::kKeyTile));
  std::vector<float> packed_values(kernels::packed_values_size(T, d_v));
  kernels::FlashWorkspace workspace;
  std::size_t count = 0;
  for (std::size_t b = 0; b < dims.batch; ++b) {
    for (std::size_t h = 0; h < dims.heads; ++h) {
      const std::size_t head = b * dims.heads + h;
      const float* values = v + head * T * d_v;
      float* head_out = out + head * T * d_v;
      kernels::pack_value_panels(values, T, d_v, packed_values.data());
      const int shift = value_exponent_shift(values, T * d_v, T);
      if (shift) {
        kernels::scale_row<Arch>(packed_values.data(), packed_values.size(),
                                 std::ldexp(1.0f, -shift));
      }
      kernels::pack_key_tiles(k + head * T * d_k, T, d_k, kernels::kKeyTile, packed_keys.data());
      kernels::flash_attention_best(q + head * T * d_k, packed_keys.data(), packed_values.data(),
                                     T, d_k, d_v, scale, head_mask(mask, dims, b, h), head_out,
                                     fully_masked + head * T, workspace);
      if (shift) kernels::scale_row<Arch>(head_out, T * d_v, std::ldexp(1.0f, shift));
      for (std::size_t i = 0; i < T; ++i) count += fully_masked[head * T + i];
    }
  }
  return count;
}

}  // namespace attnscope::detail
