// The flash kernel's tile shape and its per-tile steps (flash_attention.hpp):
// the two products of a tile, the online softmax of one row or of a whole
// tile against the running max and sum, and the test for the leaner in-range
// exp pass. Kept apart from the kernel's loop over query blocks and key tiles
// so that each file holds one part of the algorithm.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include <xsimd/xsimd.hpp>

#include "kernels/alibi_softmax.hpp"
#include "kernels/boundary_types.hpp"
#include "kernels/isa_namespace.hpp"
#include "kernels/matmul.hpp"
#include "kernels/multiply_add.hpp"
#include "kernels/pack_keys.hpp"
#include "kernels/scan.hpp"
#include "kernels/softmax_rows.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {
// 16 × 128 measured fastest in wasm (against other query-row and key counts;
// docs/performance/journal.md): 128 keys halve the per-tile softmax
// bookkeeping of 64, and a key tile (d·128 floats) still sits in L2.
inline constexpr std::size_t kQueryTile = 16;
inline constexpr std::size_t kKeyTile = 128;
/// Query tiles are visited kQueryBlock rows at a time, key tile by key tile,
/// so that a key and value tile serves 128 queries from cache: at long
/// lengths a head's keys and values no longer fit in L2 beside the rest, and
/// the blocks cut their traffic from L3 by 128/16 (128 rows against 64:
/// docs/performance/journal.md). Causal skipping stays per 16-row tile.
inline constexpr std::size_t kQueryBlock = 128;

/// How far a tile's max may exceed the running max before the running max
/// is moved: 8·ln 2, so unnormalised weights stay below 2^8.
inline constexpr float kLazyMaxSlack = 5.54517744f;
/// The largest unnormalised weight, e^kLazyMaxSlack: a bound the caller needs
/// to keep weights × values finite (see attention_fast.cpp).
inline constexpr float kMaxUnnormalisedWeight = 256.0f;

namespace detail {

/// Exponentiates one query row of one key tile, scores[0..n)·scale, against
/// the larger of the running max and the row's own max, rescaling what the
/// row has accumulated when the max moves, and adds the weights' sum.
template <class Arch>
void softmax_row_new_max(const float* scores, float scale, float* weights, std::size_t n,
                         float& running_max, float& running_sum, float* partial, std::size_t d_v) {
  const float new_max = std::max(running_max, row_max<Arch>(scores, n, scale));
  if (new_max == kNegInf) {
    // Nothing visible yet: this row contributes zeros to P·V.
    std::fill(weights, weights + n, 0.0f);
    return;
  }
  float unused;
  const float sum = exp_sum_max_row<Arch>(scores, weights, n, scale, new_max, &unused);
  if (running_max != new_max) {
    const float rescale = running_max == kNegInf ? 0.0f : std::exp(running_max - new_max);
    running_sum *= rescale;
    scale_row<Arch>(partial, d_v, rescale);
    running_max = new_max;
  }
  running_sum += sum;
}

/// S = Q·Kᵀ for one tile: rows × cols scores (row stride kKeyTile) from one
/// packed key tile and the queries, packed as row panels (kLda = kPackedA,
/// 4-row register tiles) or read in place d_k apart (kLda = d_k, a head size
/// known at compile time, so that a tile finds its query values at fixed
/// offsets; kRows 4 or 6). Every way gives the same bits.
template <class Arch, std::size_t kLda = kPackedA, std::size_t kRows = kMatmulRows>
void tile_scores(const float* queries, const float* key_tile, float* scores, std::size_t rows,
                 std::size_t d_k, std::size_t cols) {
  matmul_with<Arch, kLda, Panels, kRows>(queries, d_k, key_tile_panels(key_tile, d_k), scores,
                                         kKeyTile, rows, d_k, cols);
}

/// partial += P·V for one tile: weights (rows × cols, row stride kKeyTile)
/// times the tile's cols values (value_panels), in register tiles kRows
/// rows tall (kMatmulRows or kMatmulTallRows: the same bits).
template <class Arch, std::size_t kRows = kMatmulRows>
void tile_accumulate_values(const float* weights, Panels values, float* partial, std::size_t rows,
                            std::size_t cols, std::size_t d_v) {
  matmul_with<Arch, kKeyTile, Panels, kRows>(weights, kKeyTile, values, partial, d_v, rows, cols,
                                             d_v, /*accumulate=*/true);
}

/// One query row of one key tile: turns scores[0..n)·scale into weights
/// against the running max (moving it when needed) and adds their sum.
/// n is a multiple of the batch size.
template <class Arch>
void online_softmax_row(const float* scores, float scale, float* weights, std::size_t n,
                        float& running_max, float& running_sum, float* partial, std::size_t d_v) {
  if (running_max != kNegInf) {
    float tile_max;
    const float sum = exp_sum_max_row<Arch>(scores, weights, n, scale, running_max, &tile_max);
    if (tile_max <= running_max + kLazyMaxSlack) {
      running_sum += sum;
      return;
    }
    // The max grew by more than the slack: redo the tile against it.
  }
  softmax_row_new_max<Arch>(scores, scale, weights, n, running_max, running_sum, partial, d_v);
}

/// online_softmax_row for a head under alibi_ramp_applies, on the raw
/// scores of query row `query` against keys first_key...: false, with the
/// running max and sum untouched, where the max moves past the slack, which
/// the caller then takes through the masked row.
template <class Arch>
bool online_softmax_row_alibi(const float* scores, std::size_t query, std::size_t first_key,
                              std::size_t n, float scale, const HeadMask& mask, float* weights,
                              float& running_max, float& running_sum) {
  // A row's first tile shifts by its own max, as softmax_row_new_max does
  // (its partial output is still 0, so there is nothing to rescale).
  const bool first = running_max == kNegInf;
  const float shift =
      first ? alibi_row_max<Arch>(scores, n, scale, mask, query, first_key) : running_max;
  if (shift == kNegInf) return false;
  float tile_max;
  const float sum = alibi_exp_sum_max_row<Arch>(scores, weights, n, scale, mask, query, first_key,
                                                shift, &tile_max);
  if (first) {
    running_max = shift;
    running_sum = sum;
    return true;
  }
  if (tile_max > running_max + kLazyMaxSlack) return false;
  running_sum += sum;
  return true;
}

/// The softmax step of an unmasked tile whose exponents are known to stay in
/// range (see exponents_in_range): online_softmax_row for each of its rows,
/// with exp_sum_row_in_range: no clamp and no max in the exp pass. A row's
/// max moves when its weights sum above kMaxUnnormalisedWeight, which bounds
/// every weight as the slack does. A row's first tile finds its max on the
/// unscaled scores (max(x)·scale = max(x·scale), scale > 0) and gives
/// softmax_row_new_max's weights bit for bit. scores and weights have rows of
/// kKeyTile floats; running_max, running_sum and partial point at the
/// tile's first row.
template <class Arch>
void tile_softmax_in_range(const float* scores, float* weights, std::size_t rows, std::size_t n,
                           float scale, float* running_max, float* running_sum, float* partial,
                           std::size_t d_v) {
  const float exp2_factor = scale * kLog2e;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* row = scores + r * kKeyTile;
    float* row_weights = weights + r * kKeyTile;
    if (running_max[r] == kNegInf) {
      const float max = row_max<Arch>(row, n);
      running_max[r] = max * scale;
      running_sum[r] = exp_sum_row_in_range<Arch>(row, row_weights, n, max, exp2_factor);
      continue;
    }
    // running_max is some score times scale, so running_max / scale is that
    // score, exactly (scale is a power of two).
    const float sum =
        exp_sum_row_in_range<Arch>(row, row_weights, n, running_max[r] / scale, exp2_factor);
    if (sum <= kMaxUnnormalisedWeight) {
      running_sum[r] += sum;
    } else {
      softmax_row_new_max<Arch>(row, scale, row_weights, n, running_max[r], running_sum[r],
                                partial + r * d_v, d_v);
    }
  }
}

}  // namespace detail

/// Whether a head's unmasked tiles may take tile_softmax_in_range.
/// That needs
/// - scale a power of two (2^-60 … 2^60), so that scores·scale and
///   running_max / scale are exact and the in-range weights equal
///   exp_sum_max_row's bit for bit;
/// - every exponent (score − running max)·scale·log2 e within ±120 (the
///   in-range exp takes ±126): scores and running maxima are both within
///   ±|q|·|k|·scale (Cauchy–Schwarz, with the largest query and key norms,
///   and 1 % for the rounding of the norms and of the scores), so
///   2·bound·log2 e <= 120 is enough.
/// `scratch` holds kKeyTile floats.
template <class Arch>
bool exponents_in_range(const float* q, const float* packed_keys, std::size_t rows,
                        std::size_t keys, std::size_t d_k, float scale, float* scratch) {
  int exponent = 0;
  if (!(scale > 0.0f) || std::frexp(scale, &exponent) != 0.5f || exponent < -59 || exponent > 61) {
    return false;
  }
  float query_norm2 = 0.0f;
  for (std::size_t i = 0; i < rows; ++i) {
    query_norm2 = std::max(query_norm2, sum_of_squares<Arch>(q + i * d_k, d_k));
  }
  // Packed tiles hold keys as the columns of panels: sum the squares down
  // each column.
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = batch::size;
  static_assert(kKeyTile % kPanelWidth == 0 && kPanelWidth % W == 0);
  float key_norm2 = 0.0f;
  for (std::size_t k0 = 0; k0 < keys; k0 += kKeyTile) {
    const float* tile = packed_keys + (k0 / kKeyTile) * d_k * kKeyTile;
    std::fill(scratch, scratch + kKeyTile, 0.0f);
    const Panels keys = key_tile_panels(tile, d_k);
    for (std::size_t j0 = 0; j0 < kKeyTile; j0 += kPanelWidth) {
      const float* panel = keys.column(j0);
      for (std::size_t p = 0; p < d_k; ++p) {
        for (std::size_t j = 0; j < kPanelWidth; j += W) {
          const batch key = batch::load_unaligned(panel + p * kPanelWidth + j);
          float* sum = scratch + j0 + j;
          multiply_add(key, key, batch::load_unaligned(sum)).store_unaligned(sum);
        }
      }
    }
    key_norm2 = std::max(key_norm2, *std::max_element(scratch, scratch + kKeyTile));
  }
  // An overflowed (infinite) norm fails the test below, as it should.
  const double bound = std::sqrt(double(query_norm2) * double(key_norm2)) * scale * 1.01;
  return 2.0 * bound * kLog2e <= 120.0;
}

/// exponents_in_range for T queries and T keys.
template <class Arch>
bool exponents_in_range(const float* q, const float* packed_keys, std::size_t T, std::size_t d_k,
                        float scale, float* scratch) {
  return exponents_in_range<Arch>(q, packed_keys, T, T, d_k, scale, scratch);
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
