// The flash-style attention backward, per query head and in tiles of
// kQueryTile queries × kKeyTile keys. The forward gives each query's
// log-sum-exp of its masked scores; each tile's weights are recomputed as
// exp(score − lse), and the tile's share added to dq, dk and dv with the
// matmul kernel. Scratch is a few tiles and
// two floats per query: no Tq×Tk buffer exists. Key tiles that every query
// of a query tile has masked (causal, padding) are skipped. Key/value heads
// run in parallel on the thread pool (thread_pool.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "backward_attention_internal.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/dot.hpp"
#include "kernels/mask_row.hpp"
#include "kernels/softmax_rows.hpp"
#include "kernels/transpose.hpp"
#include "thread_pool.hpp"

namespace attnscope::detail {

namespace {

using Arch = xsimd::default_arch;
constexpr std::size_t kQueryTile = 64, kKeyTile = 64;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

/// dst (cols, rows) = srcᵀ for src (rows, cols) with row stride `stride`:
/// 4 × 4 blocks in registers, then the ragged edges one float at a time.
void transpose(const float* src, std::size_t rows, std::size_t cols, std::size_t stride,
               float* dst) {
  const std::size_t rows4 = rows - rows % 4, cols4 = cols - cols % 4;
  for (std::size_t r = 0; r < rows4; r += 4) {
    for (std::size_t c = 0; c < cols4; c += 4) {
      kernels::transpose_4x4<Arch>(src + r * stride + c, stride, dst + c * rows + r, rows);
    }
  }
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t first = r < rows4 ? cols4 : 0;
    for (std::size_t c = first; c < cols; ++c) dst[c * rows + r] = src[r * stride + c];
  }
}

/// One query head's inputs and gradients, and the tile scratch.
struct HeadTiles {
  const float *queries, *keys, *values, *d_out;
  float *dq, *dk, *dv;
  const kernels::HeadMask* mask;
  std::size_t Tq, Tk, d_k, d_v;
  float scale;
  std::vector<float> scores, grads, transposed, keys_t, values_t;

  HeadTiles(std::size_t d_k_, std::size_t d_v_)
      : scores(allocate_zeros({kQueryTile * kKeyTile}, "attention_backward: score tile").data),
        grads(allocate_zeros({kQueryTile * kKeyTile}, "attention_backward: gradient tile").data),
        transposed(allocate_zeros({kQueryTile * kKeyTile}, "attention_backward: tile").data),
        keys_t(allocate_zeros({d_k_ * kKeyTile}, "attention_backward: key tile").data),
        values_t(allocate_zeros({d_v_ * kKeyTile}, "attention_backward: value tile").data) {}

  /// Whether some query of [i0, i0 + m) may see a key at or after j0.
  bool reaches(std::size_t i0, std::size_t m, std::size_t j0) const {
    for (std::size_t r = 0; r < m; ++r) {
      if (mask->key_end(i0 + r) > j0) return true;
    }
    return false;
  }

  /// scores (m, n) = the scaled, biased and masked scores of queries
  /// [i0, i0 + m) against keys [j0, j0 + n) (keys_t holds that key tile).
  void score_tile(std::size_t i0, std::size_t m, std::size_t j0, std::size_t n) {
    kernels::matmul_best(queries + i0 * d_k, d_k, keys_t.data(), n, scores.data(), n, m, d_k, n);
    for (std::size_t r = 0; r < m; ++r) {
      float* row = scores.data() + r * n;
      for (std::size_t j = 0; j < n; ++j) row[j] *= scale;
      kernels::mask_row(row, i0 + r, j0, n, *mask);
    }
  }

  void gradients(const float* lse, const float* centre) {
    for (std::size_t j0 = 0; j0 < Tk; j0 += kKeyTile) {
      const std::size_t n = std::min(kKeyTile, Tk - j0);
      transpose(keys + j0 * d_k, n, d_k, d_k, keys_t.data());
      transpose(values + j0 * d_v, n, d_v, d_v, values_t.data());
      for (std::size_t i0 = 0; i0 < Tq; i0 += kQueryTile) {
        const std::size_t m = std::min(kQueryTile, Tq - i0);
        if (!reaches(i0, m, j0)) continue;
        score_tile(i0, m, j0, n);
        // P = exp(S − lse): 0 where masked and on fully masked queries.
        for (std::size_t r = 0; r < m; ++r) {
          float* row = scores.data() + r * n;
          const float l = lse[i0 + r];
          if (l == kNegInf) {
            std::fill(row, row + n, 0.0f);
          } else {
            kernels::exp_sum_row<Arch>(row, row, n, l);  // masked: exp(−inf) = 0
          }
        }
        // dP = dO·vᵀ, then dS = scale·P ∘ (dP − dO·O).
        kernels::matmul_best(d_out + i0 * d_v, d_v, values_t.data(), n, grads.data(), n, m, d_v, n);
        for (std::size_t r = 0; r < m; ++r) {
          for (std::size_t j = 0; j < n; ++j) {
            const std::size_t at = r * n + j;
            grads[at] = scale * scores[at] * (grads[at] - centre[i0 + r]);
          }
        }
        transpose(scores.data(), m, n, n, transposed.data());  // Pᵀ (n, m)
        kernels::matmul_best(transposed.data(), m, d_out + i0 * d_v, d_v, dv + j0 * d_v, d_v, n, m,
                             d_v,
                             /*accumulate=*/true);
        kernels::matmul_best(grads.data(), n, keys + j0 * d_k, d_k, dq + i0 * d_k, d_k, m, n, d_k,
                             /*accumulate=*/true);
        transpose(grads.data(), m, n, n, transposed.data());  // dSᵀ (n, m)
        kernels::matmul_best(transposed.data(), m, queries + i0 * d_k, d_k, dk + j0 * d_k, d_k, n,
                             m, d_k,
                             /*accumulate=*/true);
      }
    }
  }
};

}  // namespace

void attention_backward_flash(const float* q, const float* k, const float* v, const float* output,
                              const float* log_sum_exp, const float* d_output,
                              const AttentionDims& dims, float scale, const ScoreTerms& terms,
                              const AttentionGradientBuffers& out) {
  const std::size_t Tq = dims.q_len, Tk = dims.k_len, d_k = dims.d_k, d_v = dims.d_v;
  const std::size_t group = dims.group(), kv_heads = dims.batch * dims.kv_heads;
  // One task per key/value head: only its group's query heads add into its
  // dk and dv, and they do so in order, as on one thread, so the sums are
  // the same bits at any thread count.
  const std::size_t slots = std::min(parallel_slots(), kv_heads);
  std::vector<HeadTiles> tiles;
  std::vector<std::vector<float>> centres;
  tiles.reserve(slots);
  for (std::size_t s = 0; s < slots; ++s) {
    tiles.emplace_back(d_k, d_v);
    tiles.back().Tq = Tq;
    tiles.back().Tk = Tk;
    tiles.back().d_k = d_k;
    tiles.back().d_v = d_v;
    tiles.back().scale = scale;
    centres.push_back(allocate_zeros({Tq}, "attention_backward: dO·O").data);
  }
  parallel_for(kv_heads, slots, [&](std::size_t kv_head, std::size_t slot) {
    HeadTiles& t = tiles[slot];
    std::vector<float>& centre = centres[slot];
    const std::size_t b = kv_head / dims.kv_heads, kv = kv_head % dims.kv_heads;
    t.keys = k + kv_head * Tk * d_k;
    t.values = v + kv_head * Tk * d_v;
    t.dk = out.dk + kv_head * Tk * d_k;
    t.dv = out.dv + kv_head * Tk * d_v;
    for (std::size_t h = kv * group; h < (kv + 1) * group; ++h) {
      const std::size_t head = b * dims.heads + h;
      const kernels::HeadMask mask = head_mask(terms, dims, b, h);
      t.mask = &mask;
      t.queries = q + head * Tq * d_k;
      t.d_out = d_output + head * Tq * d_v;
      t.dq = out.dq + head * Tq * d_k;
      for (std::size_t i = 0; i < Tq; ++i) {
        centre[i] = kernels::dot<Arch>(t.d_out + i * d_v, output + (head * Tq + i) * d_v, d_v);
      }
      t.gradients(log_sum_exp + head * Tq, centre.data());
    }
  });
}

}  // namespace attnscope::detail
