// ALiBi inside the flash kernel's softmax step. The bias of query i and key
// j is −slope·|pos(i) − j|: a ramp along the row, so each batch of scaled
// scores takes it from a running distance (one subtraction per batch), with
// no bias row written and read back. Each masked score is the one mask_row
// gives the traced path (x·scale, then + (−slope)·|pos − j|, each rounded
// alike), and keys at or past the row's key_end are −inf, so the weights,
// max and sum equal those of scaling, masking and then exp_sum_max_row, bit
// for bit; only the passes over memory are gone. seed_running_max, at the
// end, gives each row a running max to start from.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include <xsimd/xsimd.hpp>

#include "kernels/boundary_types.hpp"
#include "kernels/fast_max.hpp"
#include "kernels/isa_namespace.hpp"
#include "kernels/mask_row.hpp"
#include "kernels/pack_keys.hpp"
#include "kernels/softmax_rows.hpp"
#include "kernels/vec_exp.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {

/// Whether alibi_softmax_row applies to a head: ALiBi as its only dense
/// term, and no window (every row then sees keys [0, key_end)).
inline bool alibi_ramp_applies(const HeadMask& mask) {
  return mask.alibi_slopes && !mask.additive && !mask.allowed && !mask.bias && !mask.window;
}

namespace detail {

/// The masked scores of query row `query` against keys first_key,
/// first_key + 1, ..., one batch after another (see the header comment).
template <class Arch>
struct AlibiRamp {
  using batch = xsimd::batch<float, Arch>;
  batch scale, neg_slope, distance, key, end;

  AlibiRamp(float s, const HeadMask& mask, std::size_t query, std::size_t first_key)
      : scale(s), neg_slope(-mask.alibi_slopes[mask.head_of(query)]) {
    alignas(64) float lanes[batch::size];
    for (std::size_t l = 0; l < batch::size; ++l) lanes[l] = static_cast<float>(l);
    const batch iota = batch::load_aligned(lanes);
    // Exact integers in float for rows of fewer than 2^24 keys.
    distance =
        batch(static_cast<float>(mask.position(query)) - static_cast<float>(first_key)) - iota;
    key = batch(static_cast<float>(first_key)) + iota;
    end = batch(static_cast<float>(mask.key_end(query)));
  }
  /// The masked scores of the next batch.
  batch next(batch scores) {
    const batch z = scores * scale + neg_slope * xsimd::abs(distance);
    const auto visible = key < end;
    distance -= batch(float(batch::size));
    key += batch(float(batch::size));
    return xsimd::select(visible, z, batch(kNegInf));
  }
};

}  // namespace detail

/// The ALiBi-masked scores of query row `query` against keys first_key +
/// [0, n) (x holds their raw scores; n a multiple of the batch size): their
/// max.
template <class Arch>
float alibi_row_max(const float* x, std::size_t n, float scale, const HeadMask& mask,
                    std::size_t query, std::size_t first_key) {
  using batch = xsimd::batch<float, Arch>;
  detail::AlibiRamp<Arch> ramp(scale, mask, query, first_key);
  batch max(kNegInf);
  for (std::size_t i = 0; i < n; i += batch::size) {
    max = max_no_nan(max, ramp.next(batch::load_unaligned(x + i)));
  }
  return lane_max(max);
}

/// exp_sum_max_row on those masked scores: y[i] = exp(z[i] − shift), their
/// sum returned and max(z) in *z_max.
template <class Arch>
float alibi_exp_sum_max_row(const float* x, float* y, std::size_t n, float scale,
                            const HeadMask& mask, std::size_t query, std::size_t first_key,
                            float shift, float* z_max) {
  using batch = xsimd::batch<float, Arch>;
  detail::AlibiRamp<Arch> ramp(scale, mask, query, first_key);
  const batch s(shift), log2e(kLog2e);
  batch max(kNegInf);
  const float sum = detail::exp2_sum_in_chunks<Arch>(x, y, n, [&](batch scores) {
    const batch z = ramp.next(scores);
    max = max_no_nan(max, z);
    return clamp_exp2_argument<Arch>((z - s) * log2e);
  });
  *z_max = lane_max(max);
  return sum;
}

/// Sets the flash kernel's running max of rows [r0, r0 + rows) (running_max
/// indexed from r0) to a score each row is sure to reach: under ALiBi a causal
/// row's bias grows by slope·key_tile from one key tile to the next, so a
/// running max started from the first tile moved (and its tile was
/// exponentiated again) on nearly every tile of the steeper heads. Started
/// from the key nearest the query, where the bias is 0, it rarely moves.
/// That key's score is recomputed here as a dot product, which may round
/// differently from the tile product: it is lowered by a bound on that
/// difference, so that the start never exceeds the score the tiles will
/// compute for the key (scaling and masking round monotonically, scale > 0),
/// and so never exceeds the row's max. A row whose nearest visible key the
/// mask hides keeps −inf.
template <class Arch>
void seed_running_max(const float* q, const float* packed_keys, std::size_t key_tile,
                      std::size_t keys, std::size_t d_k, float scale, const HeadMask& mask,
                      std::size_t r0, std::size_t rows, float* running_max) {
  if (!(scale > 0.0f)) return;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t row = r0 + r;
    const std::size_t end = std::min(mask.key_end(row), keys);
    if (end == 0) continue;
    const std::size_t key = std::min(mask.position(row), end - 1);
    if (key < mask.window_begin(row) && key >= mask.sinks) continue;
    const Panels tile = key_tile_panels(packed_keys + (key / key_tile) * d_k * key_tile, d_k);
    const float* query = q + row * d_k;
    double dot = 0.0, magnitude = 0.0;
    for (std::size_t p = 0; p < d_k; ++p) {
      const double product = double(query[p]) * double(tile.at(p, key % key_tile));
      dot += product;
      magnitude += std::fabs(product);
    }
    // The tile's float sum of d_k products is within d_k·2^-24·Σ|products|
    // of the exact one (to first order); this sum, in double, is closer
    // still. Three times that bound leaves room for both.
    const double lowered = dot - 3.0 * double(d_k + 2) * 0x1p-24 * magnitude;
    float score = static_cast<float>(lowered) * scale;
    if (!std::isfinite(score)) continue;
    mask_row<Arch>(&score, row, key, 1, mask);
    if (std::isfinite(score)) running_max[r] = score;
  }
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
