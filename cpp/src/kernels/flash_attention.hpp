// Attention for one (batch, head) without materialising the T×T scores:
// queries are taken kQueryTile at a time, keys kKeyTile at a time, and the
// softmax is computed online (running max and sum per query, the partial
// output rescaled whenever the max grows), as in FlashAttention.
// Key tiles that causal, padding or window masks hide entirely are never
// visited. Queries and keys may differ in number (a KV cache: query i sits
// at key position Tk − Tq + i), and the query heads that share one key/value
// head (GQA) may come stacked, so that each key tile serves all of them.
//
// Scores are scaled inside the exp pass, rounded exactly as the traced path's
// separate scaling rounds them (tiles that need masking are scaled first):
// at extreme scales (1e8) a different rounding of the scores would pick
// different weights than the traced path. The online max is lazy, as in
// FlashAttention-4: a tile is exponentiated against the running max of
// earlier tiles while its own max is found in the same pass, and the max is
// only moved (redoing that tile) when it grew by more than kLazyMaxSlack;
// otherwise the tile's weights may reach e^kLazyMaxSlack = 256, which the
// final division by the sum cancels. That saves a separate max pass over
// every tile, about a tenth of the kernel's time in wasm.
//
// When the scale is a power of two and the norms of the queries and keys
// bound every exponent (exponents_in_range), unmasked tiles take a leaner
// exp pass with the same weights bit for bit: no clamp, no max, and no
// separate scaling multiply; the max moves when the tile's weights sum above
// 256, which bounds each weight as the slack does. Fewer vector operations
// per score (gain: docs/performance/journal.md, "Figures formerly in code comments").
//
// ALiBi, when it is the only dense term and there is no window, is added in
// the exp pass from a ramp (alibi_softmax.hpp) instead of by a masking pass
// over each row, and each row's running max starts at its score for the
// nearest key (seed_running_max), so that the bias, which grows from tile to
// tile along a causal row, rarely moves it.
//
// In wasm the two products of each tile, and its in-range softmax step, run
// out of line (call_outlined): inlined into this function, the products'
// accumulators were spilled by V8 as soon as the softmax code around them
// grew.
//
// The tile shape and the per-tile steps are in flash_tile_steps.hpp.
//
// The tests check it against the double-precision reference of
// tests/cpp/test_attention_reference.hpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "kernels/alibi_softmax.hpp"
#include "kernels/boundary_types.hpp"
#include "kernels/flash_tile_steps.hpp"
#include "kernels/isa_namespace.hpp"
#include "kernels/mask_row.hpp"
#include "kernels/matmul.hpp"
#include "kernels/multiply_add.hpp"
#include "kernels/outlined.hpp"
#include "kernels/pack_keys.hpp"
#include "kernels/scan.hpp"
#include "kernels/softmax_rows.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {

/// Sizes the scratch buffers for values of width d_v. Kept out of the
/// per-arch kernel so that no std::vector code is compiled with AVX flags.
inline void size_workspace(FlashWorkspace& ws, std::size_t d_k, std::size_t d_v) {
  ws.queries.resize(kQueryBlock * d_k);
  ws.scores.resize(kQueryTile * kKeyTile);
  ws.weights.resize(kQueryTile * kKeyTile);
  ws.partial.resize(kQueryBlock * d_v);
  ws.running_max.resize(kQueryBlock);
  ws.running_sum.resize(kQueryBlock);
}

/// The keys one query tile (rows [r0, r0 + rows)) may see: every row sees
/// keys [0, min(sinks, shared_end)) and [shared_begin, shared_end); none sees
/// a key outside [0, sinks) ∪ [begin, end).
struct TileKeyRange {
  std::size_t begin, end, shared_begin, shared_end;

  static TileKeyRange of(const HeadMask& mask, std::size_t r0, std::size_t rows) {
    TileKeyRange range{mask.window_begin(r0), mask.key_end(r0), mask.window_begin(r0),
                       mask.key_end(r0)};
    for (std::size_t r = r0 + 1; r < r0 + rows; ++r) {
      const std::size_t b = mask.window_begin(r), e = mask.key_end(r);
      range.begin = std::min(range.begin, b);
      range.end = std::max(range.end, e);
      range.shared_begin = std::max(range.shared_begin, b);
      range.shared_end = std::min(range.shared_end, e);
    }
    return range;
  }
  /// Whether no row sees any of keys [k0, k0 + n).
  bool hides(std::size_t k0, std::size_t n, std::size_t sinks) const {
    return k0 >= end || (k0 >= sinks && k0 + n <= begin);
  }
  /// Whether every row sees all of keys [k0, k0 + n) (no masking needed).
  bool shows(std::size_t k0, std::size_t n, std::size_t sinks) const {
    return k0 + n <= shared_end && (k0 >= shared_begin || k0 + n <= sinks);
  }
};

/// q (rows × d_k: one head's queries, or a group's stacked as HeadMask
/// describes), packed_keys (pack_key_tiles of `keys` keys with tile
/// kKeyTile), packed_values (pack_value_panels of the keys × d_v values) →
/// out (rows × d_v), scores multiplied by `scale`. fully_masked[i] = 1 (and
/// out row i = 0) when query row i sees no key. `ws` must already be sized
/// by size_workspace(ws, d_k, d_v).
template <class Arch = xsimd::default_arch>
void flash_attention(const float* q, const float* packed_keys, const float* packed_values,
                     std::size_t rows_total, std::size_t keys, std::size_t d_k, std::size_t d_v,
                     float scale, const HeadMask& mask, float* out, std::uint8_t* fully_masked,
                     FlashWorkspace& ws);

/// Whether the unmasked tiles of a head (all its rows_total query rows) take
/// the in-range exp pass. Tiles with masked keys keep the clamped exp (their
/// scores hold -inf, and an additive mask is not bounded by the norms).
/// `scratch` holds kKeyTile floats.
template <class Arch = xsimd::default_arch>
bool flash_in_range(const float* q, const float* packed_keys, std::size_t rows_total,
                    std::size_t keys, std::size_t d_k, float scale, const HeadMask& mask,
                    float* scratch) {
  return !mask.has_dense_terms() &&
         exponents_in_range<Arch>(q, packed_keys, rows_total, keys, d_k, scale, scratch);
}

/// flash_attention for the query rows [rows.begin, rows.end) only; q, out,
/// fully_masked and the mask's rows are indexed as in the whole call.
template <class Arch = xsimd::default_arch>
void flash_attention_rows(const float* q, const float* packed_keys, const float* packed_values,
                          std::size_t keys, std::size_t d_k, std::size_t d_v, float scale,
                          const HeadMask& mask, float* out, std::uint8_t* fully_masked,
                          const FlashRowRange& rows_range, FlashWorkspace& ws) {
  constexpr std::size_t W = xsimd::batch<float, Arch>::size;
  static_assert(kKeyTile % W == 0, "key tiles must hold whole batches");
  float* scores = ws.scores.data();
  float* weights = ws.weights.data();
  float* partial = ws.partial.data();
  const bool dense_mask = mask.has_dense_terms();
  const bool alibi_ramp = alibi_ramp_applies(mask);
  const bool in_range = rows_range.in_range;
  const std::size_t rows_end = rows_range.end;
  // The register tile's height the engine runs faster (matmul_tile.hpp), as
  // matmul_panel reads it. With 6-row tiles, the scores' product reads the
  // queries in place where their stride is one it knows at compile time;
  // otherwise from 4-row panels.
  const bool tall_tiles = matmul_tile_rows() == kMatmulTallRows;
  const bool queries_in_place = tall_tiles && (d_k == 64 || d_k == 128);
  const auto score_tile = [&](std::size_t q0, std::size_t b0, const float* key_tile,
                              std::size_t rows, std::size_t cols) {
    if (!queries_in_place) {
      call_outlined<&detail::tile_scores<Arch>>(ws.queries.data() + (q0 - b0) * d_k, key_tile,
                                                scores, rows, d_k, cols);
    } else if (d_k == 64) {
      call_outlined<&detail::tile_scores<Arch, 64, kMatmulTallRows>>(q + q0 * d_k, key_tile, scores,
                                                                     rows, d_k, cols);
    } else {
      call_outlined<&detail::tile_scores<Arch, 128, kMatmulTallRows>>(q + q0 * d_k, key_tile,
                                                                      scores, rows, d_k, cols);
    }
  };
  constexpr std::size_t kTilesPerBlock = kQueryBlock / kQueryTile;
  TileKeyRange tile_keys[kTilesPerBlock];

  for (std::size_t b0 = rows_range.begin; b0 < rows_end; b0 += kQueryBlock) {
    const std::size_t block_rows = std::min(kQueryBlock, rows_end - b0);
    std::size_t block_begin = keys, block_end = 0;
    for (std::size_t q0 = b0; q0 < b0 + block_rows; q0 += kQueryTile) {
      const TileKeyRange range =
          TileKeyRange::of(mask, q0, std::min(kQueryTile, b0 + block_rows - q0));
      tile_keys[(q0 - b0) / kQueryTile] = range;
      block_begin = std::min(block_begin, range.begin);
      block_end = std::max(block_end, range.end);
    }
    std::fill(ws.running_max.begin(), ws.running_max.end(), kNegInf);
    std::fill(ws.running_sum.begin(), ws.running_sum.end(), 0.0f);
    std::fill(partial, partial + block_rows * d_v, 0.0f);
    // The in-range pass needs a running max that is a tile's own score.
    if (mask.alibi_slopes && !in_range) {
      seed_running_max<Arch>(q, packed_keys, kKeyTile, keys, d_k, scale, mask, b0, block_rows,
                             ws.running_max.data());
    }
    for (std::size_t q0 = b0; q0 < b0 + block_rows && !queries_in_place; q0 += kQueryTile) {
      pack_row_panels<Arch>(q + q0 * d_k, d_k, std::min(kQueryTile, b0 + block_rows - q0), d_k,
                            ws.queries.data() + (q0 - b0) * d_k);
    }

    // Key tiles outermost: each is used by every query tile of the block
    // while it is still in cache. Tiles before the window (other than the
    // sinks') are never visited, so a window W costs O(T·W).
    const std::size_t first_window_tile = block_begin / kKeyTile * kKeyTile;
    for (std::size_t k0 = 0; k0 < block_end; k0 += kKeyTile) {
      if (k0 >= mask.sinks && k0 < first_window_tile) k0 = first_window_tile;
      if (k0 >= block_end) break;
      const float* key_tile = packed_keys + (k0 / kKeyTile) * d_k * kKeyTile;
      for (std::size_t q0 = b0; q0 < b0 + block_rows; q0 += kQueryTile) {
        const std::size_t rows = std::min(kQueryTile, b0 + block_rows - q0);
        const TileKeyRange& range = tile_keys[(q0 - b0) / kQueryTile];
        const std::size_t tile_cols = std::min(kKeyTile, keys - k0);
        // Hidden from the whole tile (causal, padding, window).
        if (range.hides(k0, tile_cols, mask.sinks)) continue;
        const std::size_t cols = std::min(tile_cols, range.end - k0);
        // Packed tiles are zero-padded to kKeyTile keys, so the product may
        // run on whole batches; the padding columns are set to -inf below.
        const std::size_t vector_cols = std::min(kKeyTile, (cols + W - 1) / W * W);
        score_tile(q0, b0, key_tile, rows, vector_cols);
        // Tiles with masked keys, or with padding columns (set to -inf, which
        // a negative or zero scale would turn into +inf or NaN), are scaled
        // before the exp pass.
        const bool masked_tile =
            dense_mask || !range.shows(k0, cols, mask.sinks) || cols != vector_cols;
        const std::size_t first = q0 - b0;  // this tile's first row in the block
        if (in_range && !masked_tile) {
          call_outlined<&detail::tile_softmax_in_range<Arch>>(
              scores, weights, rows, vector_cols, scale, ws.running_max.data() + first,
              ws.running_sum.data() + first, partial + first * d_v, d_v);
        } else {
          for (std::size_t r = 0; r < rows; ++r) {
            float* row = scores + r * kKeyTile;
            if (alibi_ramp && detail::online_softmax_row_alibi<Arch>(
                                  row, q0 + r, k0, vector_cols, scale, mask, weights + r * kKeyTile,
                                  ws.running_max[first + r], ws.running_sum[first + r])) {
              continue;
            }
            // The additive mask adds to scaled scores.
            float row_scale = scale;
            if (masked_tile) {
              scale_row<Arch>(row, cols, scale);
              mask_row<Arch>(row, q0 + r, k0, cols, mask);
              row_scale = 1.0f;
            }
            std::fill(row + cols, row + vector_cols, kNegInf);
            detail::online_softmax_row<Arch>(row, row_scale, weights + r * kKeyTile, vector_cols,
                                             ws.running_max[first + r], ws.running_sum[first + r],
                                             partial + (first + r) * d_v, d_v);
          }
        }
        const Panels values = value_panels(packed_values, keys, k0);
        if (tall_tiles) {
          call_outlined<&detail::tile_accumulate_values<Arch, kMatmulTallRows>>(
              weights, values, partial + first * d_v, rows, cols, d_v);
        } else {
          call_outlined<&detail::tile_accumulate_values<Arch>>(
              weights, values, partial + first * d_v, rows, cols, d_v);
        }
      }
    }

    for (std::size_t r = 0; r < block_rows; ++r) {
      float* dst = out + (b0 + r) * d_v;
      const float sum = ws.running_sum[r];
      if (sum == 0.0f) {
        std::fill(dst, dst + d_v, 0.0f);
        fully_masked[b0 + r] = 1;
        if (ws.log_sum_exp) ws.log_sum_exp[b0 + r] = kNegInf;
        continue;
      }
      fully_masked[b0 + r] = 0;
      // The weights were exp(score − running_max) before the division by sum.
      if (ws.log_sum_exp) ws.log_sum_exp[b0 + r] = ws.running_max[r] + std::log(sum);
      std::copy(partial + r * d_v, partial + (r + 1) * d_v, dst);
      scale_row<Arch>(dst, d_v, 1.0f / sum);
    }
  }
}

template <class Arch>
void flash_attention(const float* q, const float* packed_keys, const float* packed_values,
                     std::size_t rows_total, std::size_t keys, std::size_t d_k, std::size_t d_v,
                     float scale, const HeadMask& mask, float* out, std::uint8_t* fully_masked,
                     FlashWorkspace& ws) {
  const bool in_range =
      flash_in_range<Arch>(q, packed_keys, rows_total, keys, d_k, scale, mask, ws.scores.data());
  flash_attention_rows<Arch>(q, packed_keys, packed_values, keys, d_k, d_v, scale, mask, out,
                             fully_masked, FlashRowRange{0, rows_total, in_range}, ws);
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
