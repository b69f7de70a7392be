// The flash-style attention backward: per query head, a first pass over key
// tiles finds each query's log-sum-exp of its masked scores; the second
// recomputes one tile of weights at a time as exp(score − lse) and adds its
// contributions to dq, dk and dv. Scratch is one tile of scores per head,
// and the log-sum-exp and dO·O of each query: no Tq×Tk buffer exists.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "backward_attention_internal.hpp"
#include "kernels/dot.hpp"
#include "kernels/mask_row.hpp"

namespace attnscope::detail {

namespace {

using Arch = xsimd::default_arch;
constexpr std::size_t kKeyTile = 64;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

/// Scores of query `i` against keys [first, first + n): scaled, biased and masked.
void score_tile(const float* query, const float* keys, std::size_t i, std::size_t first,
                std::size_t n, std::size_t d_k, float scale, const kernels::HeadMask& mask,
                float* scores) {
  for (std::size_t j = 0; j < n; ++j) {
    scores[j] = scale * kernels::dot<Arch>(query, keys + (first + j) * d_k, d_k);
  }
  kernels::mask_row(scores, i, first, n, mask);
}

/// log Σ_j exp(score_j) over every key of query i (online, tile by tile);
/// -inf when every key is masked.
float log_sum_exp(const float* query, const float* keys, std::size_t i, const AttentionDims& dims,
                  float scale, const kernels::HeadMask& mask, float* scores) {
  float max = kNegInf;
  double sum = 0.0;
  for (std::size_t first = 0; first < dims.k_len; first += kKeyTile) {
    const std::size_t n = std::min(kKeyTile, dims.k_len - first);
    score_tile(query, keys, i, first, n, dims.d_k, scale, mask, scores);
    const float tile_max = *std::max_element(scores, scores + n);
    if (tile_max == kNegInf) continue;
    if (tile_max > max) {
      sum *= std::exp(double(max) - tile_max);
      max = tile_max;
    }
    for (std::size_t j = 0; j < n; ++j) sum += std::exp(double(scores[j]) - max);
  }
  return max == kNegInf ? kNegInf : static_cast<float>(max + std::log(sum));
}

}  // namespace

void attention_backward_flash(const float* q, const float* k, const float* v, const float* output,
                              const float* d_output, const AttentionDims& dims, float scale,
                              const ScoreTerms& terms, const AttentionGradientBuffers& out) {
  const std::size_t Tq = dims.q_len, Tk = dims.k_len, d_k = dims.d_k, d_v = dims.d_v;
  std::vector<float> scores = allocate_zeros({kKeyTile}, "attention_backward: score tile").data;
  std::vector<float> lse = allocate_zeros({Tq}, "attention_backward: log-sum-exp").data;
  std::vector<float> centre = allocate_zeros({Tq}, "attention_backward: dO·O").data;
  for (std::size_t b = 0; b < dims.batch; ++b) {
    for (std::size_t h = 0; h < dims.heads; ++h) {
      const std::size_t head = b * dims.heads + h;
      const std::size_t kv_head = b * dims.kv_heads + h / dims.group();
      const kernels::HeadMask mask = head_mask(terms, dims, b, h);
      const float* queries = q + head * Tq * d_k;
      const float* keys = k + kv_head * Tk * d_k;
      const float* values = v + kv_head * Tk * d_v;
      const float* d_out = d_output + head * Tq * d_v;
      float* dq = out.dq + head * Tq * d_k;
      float* dk = out.dk + kv_head * Tk * d_k;
      float* dv = out.dv + kv_head * Tk * d_v;
      for (std::size_t i = 0; i < Tq; ++i) {
        lse[i] = log_sum_exp(queries + i * d_k, keys, i, dims, scale, mask, scores.data());
        centre[i] = kernels::dot<Arch>(d_out + i * d_v, output + (head * Tq + i) * d_v, d_v);
      }
      for (std::size_t first = 0; first < Tk; first += kKeyTile) {
        const std::size_t n = std::min(kKeyTile, Tk - first);
        for (std::size_t i = 0; i < Tq; ++i) {
          if (lse[i] == kNegInf) continue;  // a fully masked query: zero gradients
          const float* query = queries + i * d_k;
          const float* d_row = d_out + i * d_v;
          score_tile(query, keys, i, first, n, d_k, scale, mask, scores.data());
          for (std::size_t j = 0; j < n; ++j) {
            if (scores[j] == kNegInf) continue;
            const float p = std::exp(scores[j] - lse[i]);
            const std::size_t key = first + j;
            const float dp = kernels::dot<Arch>(d_row, values + key * d_v, d_v);
            const float ds = scale * p * (dp - centre[i]);
            for (std::size_t e = 0; e < d_v; ++e) dv[key * d_v + e] += p * d_row[e];
            for (std::size_t e = 0; e < d_k; ++e) {
              dq[i * d_k + e] += ds * keys[key * d_k + e];
              dk[key * d_k + e] += ds * query[e];
            }
          }
        }
      }
    }
  }
}

}  // namespace attnscope::detail
