// The fast path: per (batch, head), the tiled online-softmax kernel. Only
// O(T·d) scratch is allocated; no T×T buffer exists.
#include <vector>

#include <xsimd/xsimd.hpp>

#include "attention_internal.hpp"
#include "kernels/flash_attention.hpp"
#include "kernels/transpose.hpp"

namespace attnscope::detail {

std::size_t attention_fast(const float* q, const float* k, const float* v,
                           const AttentionDims& dims, float scale, const Mask& mask, float* out,
                           std::uint8_t* fully_masked) {
  const std::size_t T = dims.seq_len, d_k = dims.d_k, d_v = dims.d_v;
  std::vector<float> keys_t(d_k * T);
  kernels::FlashWorkspace workspace;
  std::size_t count = 0;
  for (std::size_t b = 0; b < dims.batch; ++b) {
    for (std::size_t h = 0; h < dims.heads; ++h) {
      const std::size_t head = b * dims.heads + h;
      // Keys transposed so a tile of scores is one matmul with keys on lanes.
      kernels::transpose(k + head * T * d_k, T, d_k, keys_t.data());
      kernels::flash_attention<xsimd::default_arch>(
          q + head * T * d_k, keys_t.data(), v + head * T * d_v, T, d_k, d_v, scale,
          head_mask(mask, dims, b, h), out + head * T * d_v, fully_masked + head * T,
          workspace);
      for (std::size_t i = 0; i < T; ++i) count += fully_masked[head * T + i];
    }
  }
  return count;
}

}  // namespace attnscope::detail
