// Attention for one (batch, head) without materialising the T×T scores:
// queries are taken kQueryTile at a time, keys kKeyTile at a time, and the
// softmax is computed online (running max and sum per query, the partial
// output rescaled whenever the max grows), as in FlashAttention.
// Key tiles that causal or padding masks hide entirely are never visited.
//
// The reference is the plain definition in double precision.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "kernels/mask_row.hpp"
#include "kernels/matmul.hpp"
#include "kernels/softmax_rows.hpp"
#include "kernels/pack_keys.hpp"

namespace attnscope::kernels {

inline constexpr std::size_t kQueryTile = 16;
inline constexpr std::size_t kKeyTile = 64;

/// Scratch buffers reused across heads (sized on first use).
struct FlashWorkspace {
  std::vector<float> scores;   // kQueryTile × kKeyTile
  std::vector<float> partial;  // kQueryTile × d_v, unnormalised output
  std::vector<float> running_max, running_sum;  // kQueryTile each
};

/// Sizes the scratch buffers for values of width d_v. Kept out of the
/// per-arch kernel so that no std::vector code is compiled with AVX flags.
inline void size_workspace(FlashWorkspace& ws, std::size_t d_v) {
  ws.scores.resize(kQueryTile * kKeyTile);
  ws.partial.resize(kQueryTile * d_v);
  ws.running_max.resize(kQueryTile);
  ws.running_sum.resize(kQueryTile);
}

/// flash_attention on a workspace already sized by size_workspace(ws, d_v).
template <class Arch = xsimd::default_arch>
void flash_attention_sized(const float* q, const float* packed_keys, const float* v,
                           std::size_t T, std::size_t d_k, std::size_t d_v, float scale,
                           const HeadMask& mask, float* out, std::uint8_t* fully_masked,
                           FlashWorkspace& ws) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  constexpr std::size_t W = xsimd::batch<float, Arch>::size;
  static_assert(kKeyTile % W == 0, "key tiles must hold whole batches");
  float* scores = ws.scores.data();
  float* partial = ws.partial.data();

  for (std::size_t q0 = 0; q0 < T; q0 += kQueryTile) {
    const std::size_t rows = std::min(kQueryTile, T - q0);
    // No query of this tile sees a key at or past the last query's key_end.
    const std::size_t key_end = mask.key_end(q0 + rows - 1);
    std::fill(ws.running_max.begin(), ws.running_max.end(), kNegInf);
    std::fill(ws.running_sum.begin(), ws.running_sum.end(), 0.0f);
    std::fill(partial, partial + rows * d_v, 0.0f);

    for (std::size_t k0 = 0; k0 < key_end; k0 += kKeyTile) {
      const std::size_t cols = std::min(kKeyTile, key_end - k0);
      const float* key_tile = packed_keys + (k0 / kKeyTile) * d_k * kKeyTile;
      // Packed tiles are zero-padded to kKeyTile keys, so the product may run
      // on whole batches; the extra columns are never read.
      const std::size_t vector_cols = std::min(kKeyTile, (cols + W - 1) / W * W);
      matmul<Arch>(q + q0 * d_k, d_k, key_tile, kKeyTile, scores, kKeyTile, rows, d_k,
                   vector_cols);
      for (std::size_t r = 0; r < rows; ++r) {
        float* row = scores + r * kKeyTile;
        scale_row<Arch>(row, cols, scale);
        mask_row<Arch>(row, q0 + r, k0, cols, mask);
        const float tile_max = row_max<Arch>(row, cols);
        const float old_max = ws.running_max[r];
        const float new_max = std::max(old_max, tile_max);
        if (new_max == kNegInf) {
          // Nothing visible yet: this row contributes zeros to P·V.
          std::fill(row, row + cols, 0.0f);
          continue;
        }
        const float tile_sum = exp_sum_row<Arch>(row, row, cols, new_max);
        if (old_max != new_max) {
          const float rescale = old_max == kNegInf ? 0.0f : std::exp(old_max - new_max);
          ws.running_sum[r] *= rescale;
          scale_row<Arch>(partial + r * d_v, d_v, rescale);
          ws.running_max[r] = new_max;
        }
        ws.running_sum[r] += tile_sum;
      }
      matmul<Arch>(scores, kKeyTile, v + k0 * d_v, d_v, partial, d_v, rows, cols, d_v,
                   /*accumulate=*/true);
    }

    for (std::size_t r = 0; r < rows; ++r) {
      float* dst = out + (q0 + r) * d_v;
      const float sum = ws.running_sum[r];
      if (sum == 0.0f) {
        std::fill(dst, dst + d_v, 0.0f);
        fully_masked[q0 + r] = 1;
        continue;
      }
      fully_masked[q0 + r] = 0;
      std::copy(partial + r * d_v, partial + (r + 1) * d_v, dst);
      scale_row<Arch>(dst, d_v, 1.0f / sum);
    }
  }
}

/// q (T×d_k), packed_keys (pack_key_tiles with tile kKeyTile), v (T×d_v)
/// → out (T×d_v). fully_masked[i] = 1 (and out row i = 0) when query i sees
/// no key.
template <class Arch = xsimd::default_arch>
void flash_attention(const float* q, const float* packed_keys, const float* v, std::size_t T,
                     std::size_t d_k, std::size_t d_v, float scale, const HeadMask& mask,
                     float* out, std::uint8_t* fully_masked, FlashWorkspace& ws) {
  size_workspace(ws, d_v);
  flash_attention_sized<Arch>(q, packed_keys, v, T, d_k, d_v, scale, mask, out, fully_masked,
                              ws);
}

/// Reference: scores, mask, softmax and weights·V in double precision.
/// q (T×d_k), keys (T×d_k, not transposed), v (T×d_v).
inline void flash_attention_reference(const float* q, const float* keys, const float* v,
                                      std::size_t T, std::size_t d_k, std::size_t d_v,
                                      double scale, const HeadMask& mask, double* out,
                                      std::uint8_t* fully_masked) {
  const double neg_inf = -std::numeric_limits<double>::infinity();
  std::vector<double> row(T);
  for (std::size_t i = 0; i < T; ++i) {
    double max = neg_inf;
    for (std::size_t j = 0; j < T; ++j) {
      double s = 0.0;
      for (std::size_t p = 0; p < d_k; ++p) s += static_cast<double>(q[i * d_k + p]) * keys[j * d_k + p];
      s *= scale;
      if (mask.additive) s += mask.additive[i * T + j];
      const bool hidden = (mask.allowed && !mask.allowed[i * T + j]) || j >= mask.key_end(i);
      row[j] = hidden ? neg_inf : s;
      max = std::max(max, row[j]);
    }
    fully_masked[i] = max == neg_inf ? 1 : 0;
    double sum = 0.0;
    for (std::size_t j = 0; j < T; ++j) {
      row[j] = max == neg_inf ? 0.0 : std::exp(row[j] - max);
      sum += row[j];
    }
    for (std::size_t c = 0; c < d_v; ++c) {
      double acc = 0.0;
      for (std::size_t j = 0; j < T; ++j) acc += row[j] * v[j * d_v + c];
      out[i * d_v + c] = sum > 0.0 ? acc / sum : 0.0;
    }
  }
}

}  // namespace attnscope::kernels
