// Rotary position embedding as a pre-pass: q and k are rotated once into
// scratch, and both paths then run unchanged on the rotated copies. That is
// O((H·Tq + Hkv·Tk)·d) work against the attention's O(H·Tq·Tk·d).
#include <cmath>
#include <vector>

#include "attention_internal.hpp"

namespace attnscope::detail {

std::vector<float> rotate_rope(const float* x, std::size_t heads, std::size_t rows_per_head,
                               std::size_t first_position, std::size_t d, double base,
                               const char* fn) {
  const std::size_t half = d / 2;
  // cos and sin of pos·base^(−2p/d), one table for all heads. Position by
  // position they follow from the previous one by the angle-addition
  // formulas in double (a rotation by θ_p), which is what keeps the table
  // cheap next to the attention (cos and sin per entry cost a large share of
  // it: docs/performance/journal.md). The error grows by about 1e-16 per
  // step, far below float's resolution for any length that fits in memory.
  std::vector<float> cosines = allocate_zeros({rows_per_head * half}, fn).data;
  std::vector<float> sines = allocate_zeros({rows_per_head * half}, fn).data;
  std::vector<double> step_cos(half), step_sin(half), cur_cos(half), cur_sin(half);
  for (std::size_t p = 0; p < half; ++p) {
    const double theta = std::pow(base, -2.0 * double(p) / double(d));
    step_cos[p] = std::cos(theta);
    step_sin[p] = std::sin(theta);
    cur_cos[p] = std::cos(double(first_position) * theta);
    cur_sin[p] = std::sin(double(first_position) * theta);
  }
  for (std::size_t t = 0; t < rows_per_head; ++t) {
    for (std::size_t p = 0; p < half; ++p) {
      cosines[t * half + p] = static_cast<float>(cur_cos[p]);
      sines[t * half + p] = static_cast<float>(cur_sin[p]);
      const double c = cur_cos[p] * step_cos[p] - cur_sin[p] * step_sin[p];
      cur_sin[p] = cur_sin[p] * step_cos[p] + cur_cos[p] * step_sin[p];
      cur_cos[p] = c;
    }
  }
  std::vector<float> out = allocate_zeros({heads * rows_per_head * d}, fn).data;
  for (std::size_t h = 0; h < heads; ++h) {
    for (std::size_t t = 0; t < rows_per_head; ++t) {
      const float* src = x + (h * rows_per_head + t) * d;
      float* dst = out.data() + (h * rows_per_head + t) * d;
      const float* c = cosines.data() + t * half;
      const float* s = sines.data() + t * half;
      for (std::size_t p = 0; p < half; ++p) {
        const float a = src[p], b = src[p + half];
        dst[p] = a * c[p] - b * s[p];
        dst[p + half] = b * c[p] + a * s[p];
      }
    }
  }
  return out;
}

RotatedQueriesKeys rotate_queries_keys(const float* q, const float* k, const AttentionDims& dims,
                                       double base, const char* fn) {
  return {
      rotate_rope(q, dims.batch * dims.heads, dims.q_len, dims.query_offset(), dims.d_k, base, fn),
      rotate_rope(k, dims.batch * dims.kv_heads, dims.k_len, 0, dims.d_k, base, fn)};
}

}  // namespace attnscope::detail
