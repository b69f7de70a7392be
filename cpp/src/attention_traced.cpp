// The traced path: every (B, H, T, T) intermediate is written out so it can
// be displayed — scores, scaled, masked (-inf where masked), weights.
#include <algorithm>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "attention_internal.hpp"
#include "kernels/flash_attention.hpp"
#include "kernels/mask_row.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/matmul.hpp"
#include "kernels/softmax_rows.hpp"
#include "kernels/pack_keys.hpp"

namespace attnscope::detail {

std::size_t attention_traced(const float* q, const float* k, const float* v,
                             const AttentionDims& dims, float scale, const Mask& mask,
                             float* out, std::uint8_t* fully_masked, const TraceBuffers& trace) {
  using Arch = xsimd::default_arch;
  const std::size_t T = dims.seq_len, d_k = dims.d_k, d_v = dims.d_v;
  const std::size_t tt = T * T;
  // The fast path's micro-kernel and scaling: both paths compute the same
  // float scores and scaled scores (each score the same sum in the same
  // order, whatever the layout of the keys).
  std::vector<float> keys_t(d_k * T);
  std::vector<std::uint8_t> has_keys(T);
  std::size_t count = 0;

  for (std::size_t b = 0; b < dims.batch; ++b) {
    for (std::size_t h = 0; h < dims.heads; ++h) {
      const std::size_t head = b * dims.heads + h;
      const float* qh = q + head * T * d_k;
      const float* kh = k + head * T * d_k;
      const float* vh = v + head * T * d_v;
      float* scores = trace.scores + head * tt;
      float* scaled = trace.scaled + head * tt;
      float* masked = trace.masked + head * tt;
      float* weights = trace.weights + head * tt;

      kernels::transpose_keys(kh, T, d_k, keys_t.data());
      // A key tile at a time, so that its packed copy stays in cache for
      // every query.
      for (std::size_t k0 = 0; k0 < T; k0 += kernels::kKeyTile) {
        kernels::matmul_best(qh, d_k, keys_t.data() + k0, T, scores + k0, T, T, d_k,
                             std::min(kernels::kKeyTile, T - k0));
      }
      std::copy(scores, scores + tt, scaled);
      kernels::scale_row<Arch>(scaled, tt, scale);
      std::copy(scaled, scaled + tt, masked);
      const kernels::HeadMask hm = head_mask(mask, dims, b, h);
      for (std::size_t i = 0; i < T; ++i) kernels::mask_row(masked + i * T, i, 0, T, hm);
      kernels::softmax_rows_best(masked, weights, T, T, has_keys.data());
      // Fully masked rows have zero weights, so their output is zero too.
      kernels::matmul_best(weights, T, vh, d_v, out + head * T * d_v, d_v, T, T, d_v);
      for (std::size_t i = 0; i < T; ++i) {
        fully_masked[head * T + i] = has_keys[i] ? 0 : 1;
        count += has_keys[i] ? 0 : 1;
      }
    }
  }
  return count;
}

}  // namespace attnscope::detail
