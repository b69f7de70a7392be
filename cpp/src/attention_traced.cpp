// The traced path: every (B, H, Tq, Tk) intermediate is written out so it can
// be displayed — scores, scaled, masked (-inf where masked), weights.
#include <algorithm>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "attention_internal.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/mask_row.hpp"
#include "kernels/matmul.hpp"
#include "kernels/pack_keys.hpp"
#include "kernels/softmax_rows.hpp"

namespace attnscope::detail {

std::size_t attention_traced(const float* q, const float* k, const float* v,
                             const AttentionDims& dims, float scale, const ScoreTerms& terms,
                             float* out, std::uint8_t* fully_masked, const TraceBuffers& trace) {
  using Arch = xsimd::default_arch;
  const std::size_t Tq = dims.q_len, Tk = dims.k_len, d_k = dims.d_k, d_v = dims.d_v;
  const std::size_t tt = Tq * Tk, group = dims.group();
  // The fast path's micro-kernel and scaling: both paths compute the same
  // float scores and scaled scores (each score the same sum in the same
  // order, whatever the layout of the keys).
  std::vector<float> keys_t(d_k * Tk);
  std::vector<std::uint8_t> has_keys(Tq);
  std::size_t count = 0;

  for (std::size_t b = 0; b < dims.batch; ++b) {
    for (std::size_t kv = 0; kv < dims.kv_heads; ++kv) {
      const std::size_t kv_head = b * dims.kv_heads + kv;
      const float* vh = v + kv_head * Tk * d_v;
      // Transposed once for the whole group of query heads that read it.
      kernels::transpose_keys(k + kv_head * Tk * d_k, Tk, d_k, keys_t.data());
      for (std::size_t h = kv * group; h < (kv + 1) * group; ++h) {
        const std::size_t head = b * dims.heads + h;
        const float* qh = q + head * Tq * d_k;
        float* scores = trace.scores + head * tt;
        float* scaled = trace.scaled + head * tt;
        float* masked = trace.masked + head * tt;
        float* weights = trace.weights + head * tt;
        // A key tile at a time, so that its packed copy stays in cache for
        // every query.
        for (std::size_t k0 = 0; k0 < Tk; k0 += kernels::kKeyTile) {
          kernels::matmul_best(qh, d_k, keys_t.data() + k0, Tk, scores + k0, Tk, Tq, d_k,
                               std::min(kernels::kKeyTile, Tk - k0));
        }
        std::copy(scores, scores + tt, scaled);
        kernels::scale_row<Arch>(scaled, tt, scale);
        std::copy(scaled, scaled + tt, masked);
        const kernels::HeadMask hm = head_mask(terms, dims, b, h);
        for (std::size_t i = 0; i < Tq; ++i) kernels::mask_row(masked + i * Tk, i, 0, Tk, hm);
        kernels::softmax_rows_best(masked, weights, Tq, Tk, has_keys.data());
        // Fully masked rows have zero weights, so their output is zero too.
        kernels::matmul_best(weights, Tk, vh, d_v, out + head * Tq * d_v, d_v, Tq, Tk, d_v);
        for (std::size_t i = 0; i < Tq; ++i) {
          fully_masked[head * Tq + i] = has_keys[i] ? 0 : 1;
          count += has_keys[i] ? 0 : 1;
        }
      }
    }
  }
  return count;
}

}  // namespace attnscope::detail
