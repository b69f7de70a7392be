// The fast path: per (batch, key/value head), the tiled online-softmax
// kernel. Only O(T·d) scratch is allocated; no Tq×Tk buffer exists.
//
// Each key/value head is packed once, and the query heads that read it (its
// GQA group) go through the kernel together, stacked as G·Tq rows: every
// key tile then serves the whole group from cache. In a decode step
// (Tq = 1) that is what makes GQA cheaper than MHA: the keys and values are
// streamed from memory once per group, not once per query head.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "attention_internal.hpp"
#include "kernels/decode_attention.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/flash_attention.hpp"
#include "kernels/pack_keys.hpp"
#include "kernels/scan.hpp"
#include "kernels/softmax_rows.hpp"

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

// A decode step: few rows per key/value head, read in place.
std::size_t attention_decode(const float* q, const float* k, const float* v,
                             const AttentionDims& dims, float scale, const ScoreTerms& terms,
                             float* out, std::uint8_t* fully_masked, bool* scores_finite) {
  const std::size_t Tq = dims.q_len, Tk = dims.k_len, d_k = dims.d_k, d_v = dims.d_v;
  const std::size_t group = dims.group(), rows = group * Tq;
  std::vector<float> scores =
      allocate_zeros({rows * Tk}, "attention: scores of a decode step").data;
  std::vector<float> keys_t = allocate_zeros({d_k * kernels::kKeyTile}, "attention: key tile").data;
  std::size_t count = 0;
  for (std::size_t b = 0; b < dims.batch; ++b) {
    for (std::size_t kv = 0; kv < dims.kv_heads; ++kv) {
      const std::size_t kv_head = b * dims.kv_heads + kv;
      const std::size_t first_head = b * dims.heads + kv * group;
      const bool finite = kernels::decode_attention_best(
          q + first_head * Tq * d_k, k + kv_head * Tk * d_k, v + kv_head * Tk * d_v, rows, Tk, d_k,
          d_v, scale, head_mask(terms, dims, b, kv * group, group), out + first_head * Tq * d_v,
          fully_masked + first_head * Tq, scores.data(), keys_t.data());
      *scores_finite = *scores_finite && finite;
      for (std::size_t i = 0; i < rows; ++i) count += fully_masked[first_head * Tq + i];
    }
  }
  return count;
}

}  // namespace

bool decode_reads_every_key(const AttentionDims& dims, const Mask& mask) {
  if (dims.group() * dims.q_len > kernels::kDecodeMaxRows) return false;
  if (!mask.additive.empty() || !mask.allowed.empty()) return false;
  for (std::size_t length : mask.lengths) {
    if (length < dims.k_len) return false;
  }
  // With causal masking the last query row still sees every key.
  return !mask.window || *mask.window >= static_cast<std::int64_t>(dims.k_len);
}

std::size_t attention_fast(const float* q, const float* k, const float* v,
                           const AttentionDims& dims, float scale, const ScoreTerms& terms,
                           float* out, std::uint8_t* fully_masked, bool* scores_finite) {
  *scores_finite = true;
  using Arch = xsimd::default_arch;
  const std::size_t Tq = dims.q_len, Tk = dims.k_len, d_k = dims.d_k, d_v = dims.d_v;
  const std::size_t group = dims.group();
  if (group * Tq <= kernels::kDecodeMaxRows) {
    return attention_decode(q, k, v, dims, scale, terms, out, fully_masked, scores_finite);
  }
  std::vector<float> packed_keys(kernels::packed_keys_size(Tk, d_k, kernels::kKeyTile));
  std::vector<float> packed_values(kernels::packed_values_size(Tk, d_v));
  kernels::FlashWorkspace workspace;
  std::size_t count = 0;
  for (std::size_t b = 0; b < dims.batch; ++b) {
    for (std::size_t kv = 0; kv < dims.kv_heads; ++kv) {
      const std::size_t kv_head = b * dims.kv_heads + kv;
      const std::size_t first_head = b * dims.heads + kv * group;
      const float* values = v + kv_head * Tk * d_v;
      float* group_out = out + first_head * Tq * d_v;
      kernels::pack_value_panels(values, Tk, d_v, packed_values.data());
      const int shift = value_exponent_shift(values, Tk * d_v, Tk);
      if (shift) {
        kernels::scale_row<Arch>(packed_values.data(), packed_values.size(),
                                 std::ldexp(1.0f, -shift));
      }
      kernels::pack_key_tiles(k + kv_head * Tk * d_k, Tk, d_k, kernels::kKeyTile,
                              packed_keys.data());
      kernels::flash_attention_best(q + first_head * Tq * d_k, packed_keys.data(),
                                    packed_values.data(), group * Tq, Tk, d_k, d_v, scale,
                                    head_mask(terms, dims, b, kv * group, group), group_out,
                                    fully_masked + first_head * Tq, workspace);
      if (shift) kernels::scale_row<Arch>(group_out, group * Tq * d_v, std::ldexp(1.0f, shift));
      for (std::size_t i = 0; i < group * Tq; ++i) count += fully_masked[first_head * Tq + i];
    }
  }
  return count;
}

}  // namespace attnscope::detail
