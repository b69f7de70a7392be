// The traced attention backward: the forward's softmax weights are read, so
// nothing is recomputed (see backward.hpp for the formulas). Key/value heads
// run in parallel on the thread pool (thread_pool.hpp).
#include <xsimd/xsimd.hpp>

#include "backward_attention_internal.hpp"
#include "kernels/dot.hpp"
#include "thread_pool.hpp"

namespace attnscope::detail {

void attention_backward_traced(const float* q, const float* k, const float* v,
                               const float* d_output, const float* weights,
                               const AttentionDims& dims, float scale,
                               const AttentionGradientBuffers& out) {
  using Arch = xsimd::default_arch;
  const std::size_t Tq = dims.q_len, Tk = dims.k_len, d_k = dims.d_k, d_v = dims.d_v;
  const std::size_t group = dims.group(), kv_heads = dims.batch * dims.kv_heads;
  // One task per key/value head: its group's query heads add into its dk and
  // dv in order, as on one thread, so any thread count gives the same bits.
  parallel_for(kv_heads, parallel_slots(), [&](std::size_t kv_head, std::size_t) {
    const std::size_t b = kv_head / dims.kv_heads, kv = kv_head % dims.kv_heads;
    for (std::size_t h = kv * group; h < (kv + 1) * group; ++h) {
      const std::size_t head = b * dims.heads + h;
      const float* keys = k + kv_head * Tk * d_k;
      const float* values = v + kv_head * Tk * d_v;
      float* dk = out.dk + kv_head * Tk * d_k;
      float* dv = out.dv + kv_head * Tk * d_v;
      for (std::size_t i = 0; i < Tq; ++i) {
        const float* w = weights + (head * Tq + i) * Tk;
        const float* query = q + (head * Tq + i) * d_k;
        const float* d_out = d_output + (head * Tq + i) * d_v;
        float* dq = out.dq + (head * Tq + i) * d_k;
        // rowsum(P ∘ dP) = dO·O, taken here from the weights themselves.
        double centre = 0.0;
        for (std::size_t j = 0; j < Tk; ++j) {
          if (w[j] != 0.0f)
            centre += double(w[j]) * kernels::dot<Arch>(d_out, values + j * d_v, d_v);
        }
        for (std::size_t j = 0; j < Tk; ++j) {
          if (w[j] == 0.0f) continue;  // masked, or a zero weight: no gradient flows
          const float dp = kernels::dot<Arch>(d_out, values + j * d_v, d_v);
          const float ds = scale * w[j] * static_cast<float>(dp - centre);
          for (std::size_t e = 0; e < d_v; ++e) dv[j * d_v + e] += w[j] * d_out[e];
          for (std::size_t e = 0; e < d_k; ++e) {
            dq[e] += ds * keys[j * d_k + e];
            dk[j * d_k + e] += ds * query[e];
          }
        }
      }
    }
  });
}

}  // namespace attnscope::detail
