// Attention for a few query rows against many keys: a decode step (Tq = 1,
// or a handful of speculative tokens) reading a KV cache. The flash kernel
// packs keys and values into tiles first, which pays off when many queries
// reuse each tile; here every key and value is used by only the few rows of
// one GQA group, so they are read once, in place, in two passes: the keys,
// each row serving all the group's rows while it is in L1, then the values
// likewise. Keys that the window hides are never read.
//
// The query rows sit in the vector lanes (queries_t: d_k × R, R the rows
// rounded up to whole batches), so a score is a multiply-add of a query
// column by one broadcast key component, with no horizontal sum and no
// transposed copy of the keys; the scores come out key by key, R a key
// (scores_t: Tk × R), and the max, exp and sum of the softmax run down the
// keys on whole batches, every lane a row. Each score adds its products in
// the traced path's order (component 0 first, from zero), so both paths
// round alike even where a huge scale magnifies every rounding. The softmax
// is exact (max first), so weights·values never exceed max|v| and no
// rescaling is needed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "kernels/flash_attention.hpp"
#include "kernels/isa_namespace.hpp"
#include "kernels/mask_row.hpp"
#include "kernels/multiply_add.hpp"
#include "kernels/scan.hpp"
#include "kernels/softmax_rows.hpp"
#include "kernels/vec_exp.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {

/// Rows up to which attention_fast takes the decode kernel.
inline constexpr std::size_t kDecodeMaxRows = 16;
/// Lanes per key in the decode kernel's scores: the rows rounded up to whole
/// batches of any instruction set (16 lanes at most).
inline constexpr std::size_t kDecodeLanes = 16;

/// Floats of scratch decode_attention needs for its scores (Tk × the padded
/// rows) and for its transposed queries (d_k × the padded rows).
inline std::size_t decode_scores_size(std::size_t Tk) { return Tk * kDecodeLanes; }
inline std::size_t decode_queries_size(std::size_t d_k) { return d_k * kDecodeLanes; }

/// Values per block of the P·V step: 64 rows of d_v = 128 are 32 KiB, which
/// stay in L1 while each group of columns passes over them.
inline constexpr std::size_t kDecodeValueBlock = 64;

/// The keys a set of rows may see: [0, sink_end) and [begin, end).
struct DecodeKeyRange {
  std::size_t sink_end, begin, end;
};

inline DecodeKeyRange decode_key_range(const HeadMask& mask, std::size_t rows) {
  DecodeKeyRange range{0, mask.window_begin(0), mask.key_end(0)};
  for (std::size_t r = 1; r < rows; ++r) {
    range.begin = std::min(range.begin, mask.window_begin(r));
    range.end = std::max(range.end, mask.key_end(r));
  }
  range.sink_end = std::min(mask.sinks, range.end);
  if (range.begin <= range.sink_end) range.begin = range.sink_end;  // one run of keys
  range.begin = std::min(range.begin, range.end);
  return range;
}

namespace detail {

/// scores_t[j·R + lane] = Σ_p queries_t[p·R + lane] · keys[j·d_k + p] for
/// keys [0, n), Batches batches of lanes (R = Batches·W). Eight keys at a
/// time share each load of a query column.
template <class Arch, std::size_t Batches>
void decode_scores(const float* queries_t, const float* keys, std::size_t n, std::size_t d_k,
                   float* scores_t) {
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = batch::size, R = Batches * W;
  constexpr std::size_t kKeys = Batches == 1 ? 8 : 4;
  std::size_t j = 0;
  for (; j + kKeys <= n; j += kKeys) {
    const float* key = keys + j * d_k;
    batch acc[kKeys][Batches];
    for (std::size_t k = 0; k < kKeys; ++k) {
      for (std::size_t b = 0; b < Batches; ++b) acc[k][b] = batch(0.0f);
    }
    for (std::size_t p = 0; p < d_k; ++p) {
      batch column[Batches];
      for (std::size_t b = 0; b < Batches; ++b) {
        column[b] = batch::load_unaligned(queries_t + p * R + b * W);
      }
      for (std::size_t k = 0; k < kKeys; ++k) {
        const batch component(key[k * d_k + p]);
        for (std::size_t b = 0; b < Batches; ++b) {
          acc[k][b] = multiply_add(component, column[b], acc[k][b]);
        }
      }
    }
    for (std::size_t k = 0; k < kKeys; ++k) {
      for (std::size_t b = 0; b < Batches; ++b) {
        acc[k][b].store_unaligned(scores_t + (j + k) * R + b * W);
      }
    }
  }
  for (; j < n; ++j) {
    const float* key = keys + j * d_k;
    batch acc[Batches];
    for (std::size_t b = 0; b < Batches; ++b) acc[b] = batch(0.0f);
    for (std::size_t p = 0; p < d_k; ++p) {
      const batch component(key[p]);
      for (std::size_t b = 0; b < Batches; ++b) {
        acc[b] = multiply_add(component, batch::load_unaligned(queries_t + p * R + b * W), acc[b]);
      }
    }
    for (std::size_t b = 0; b < Batches; ++b) acc[b].store_unaligned(scores_t + j * R + b * W);
  }
}

/// out (rows × d_v) += weights · values (n × d_v), the weight of row r and
/// value j at weights[j·R + r]. Four rows at a time share each load of a
/// value, and their sums stay in registers across the n values, four batches
/// of columns at a time.
template <class Arch>
void decode_accumulate_values(const float* weights, std::size_t R, const float* values,
                              std::size_t n, std::size_t rows, std::size_t d_v, float* out) {
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = batch::size, kRows = 4, kCols = 4 * W;
  const std::size_t col_end = d_v - d_v % kCols;
  std::size_t r0 = 0;
  for (; r0 + kRows <= rows; r0 += kRows) {
    for (std::size_t c = 0; c < col_end; c += kCols) {
      batch acc[kRows][4];
      for (std::size_t r = 0; r < kRows; ++r) {
        for (std::size_t b = 0; b < 4; ++b) {
          acc[r][b] = batch::load_unaligned(out + (r0 + r) * d_v + c + b * W);
        }
      }
      for (std::size_t j = 0; j < n; ++j) {
        const float* value = values + j * d_v + c;
        const batch v0 = batch::load_unaligned(value), v1 = batch::load_unaligned(value + W),
                    v2 = batch::load_unaligned(value + 2 * W),
                    v3 = batch::load_unaligned(value + 3 * W);
        for (std::size_t r = 0; r < kRows; ++r) {
          const batch w(weights[j * R + r0 + r]);
          acc[r][0] = multiply_add(w, v0, acc[r][0]);
          acc[r][1] = multiply_add(w, v1, acc[r][1]);
          acc[r][2] = multiply_add(w, v2, acc[r][2]);
          acc[r][3] = multiply_add(w, v3, acc[r][3]);
        }
      }
      for (std::size_t r = 0; r < kRows; ++r) {
        for (std::size_t b = 0; b < 4; ++b) {
          acc[r][b].store_unaligned(out + (r0 + r) * d_v + c + b * W);
        }
      }
    }
  }
  // The rows and columns left over, one multiply-add at a time.
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t first_col = r < r0 ? col_end : 0;
    for (std::size_t j = 0; j < n; ++j) {
      const float w = weights[j * R + r];
      const float* value = values + j * d_v;
      for (std::size_t c = first_col; c < d_v; ++c) out[r * d_v + c] += w * value[c];
    }
  }
}

/// Masks keys [k0, k0 + n) of scores_t for rows [0, rows): each row's
/// scores are gathered, masked by mask_row as the traced path masks them,
/// and put back.
template <class Arch>
void decode_mask_scores(float* scores_t, std::size_t R, std::size_t rows, std::size_t k0,
                        std::size_t n, const HeadMask& mask) {
  float row[kKeyTile];
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t j = 0; j < n; ++j) row[j] = scores_t[j * R + r];
    mask_row<Arch>(row, r, k0, n, mask);
    for (std::size_t j = 0; j < n; ++j) scores_t[j * R + r] = row[j];
  }
}

/// decode_attention with the rows padded to Batches batches (see below).
template <class Arch, std::size_t Batches>
bool decode_attention_lanes(const float* q, const float* keys, const float* values,
                            std::size_t rows, std::size_t Tk, std::size_t d_k, std::size_t d_v,
                            float scale, const HeadMask& mask, float* out,
                            std::uint8_t* fully_masked, float* scores_t, float* queries_t) {
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = batch::size, R = Batches * W;
  // Query row r's component p at queries_t[p·R + r]; padding lanes are 0.
  std::fill(queries_t, queries_t + d_k * R, 0.0f);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t p = 0; p < d_k; ++p) queries_t[p * R + r] = q[r * d_k + p];
  }
  DecodeKeyRange range = decode_key_range(mask, rows);
  range.end = std::min(range.end, Tk);  // the mask never reaches past the cache
  range.begin = std::min(range.begin, range.end);
  const std::size_t runs[2][2] = {{0, range.sink_end}, {range.begin, range.end}};
  const TileKeyRange shared = TileKeyRange::of(mask, 0, rows);
  const bool dense_mask = mask.has_dense_terms();

  // Scores, scaled as the traced path scales them, then masked where some
  // row may not see some key, a tile of keys at a time.
  bool scores_finite = true;
  const batch factor(scale);
  for (const auto& run : runs) {
    for (std::size_t k0 = run[0]; k0 < run[1]; k0 += kKeyTile) {
      const std::size_t n = std::min(kKeyTile, run[1] - k0);
      float* tile = scores_t + k0 * R;
      decode_scores<Arch, Batches>(queries_t, keys + k0 * d_k, n, d_k, tile);
      for (std::size_t i = 0; i < n * R; i += W) {
        (batch::load_unaligned(tile + i) * factor).store_unaligned(tile + i);
      }
      scores_finite = scores_finite && all_finite<Arch>(tile, n * R);
      if (dense_mask || !shared.shows(k0, n, mask.sinks)) {
        decode_mask_scores<Arch>(tile, R, rows, k0, n, mask);
      }
    }
  }

  // Softmax down the keys, every lane a row: max, then exp(score − max) and
  // its sum. A row that sees no key has max −inf; it is shifted by 0
  // instead, so that its −inf scores give weights of exactly 0.
  batch max[Batches], sum[Batches];
  for (std::size_t b = 0; b < Batches; ++b) {
    max[b] = batch(kNegInf);
    sum[b] = batch(0.0f);
  }
  for (const auto& run : runs) {
    for (std::size_t j = run[0]; j < run[1]; ++j) {
      for (std::size_t b = 0; b < Batches; ++b) {
        max[b] = max_no_nan(max[b], batch::load_unaligned(scores_t + j * R + b * W));
      }
    }
  }
  for (std::size_t b = 0; b < Batches; ++b) {
    max[b] = xsimd::select(max[b] == batch(kNegInf), batch(0.0f), max[b]);
  }
  for (const auto& run : runs) {
    for (std::size_t j = run[0]; j < run[1]; ++j) {
      for (std::size_t b = 0; b < Batches; ++b) {
        float* score = scores_t + j * R + b * W;
        const batch e = vec_exp<Arch>(batch::load_unaligned(score) - max[b]);
        e.store_unaligned(score);
        sum[b] += e;
      }
    }
  }
  alignas(64) float row_sum[R];
  for (std::size_t b = 0; b < Batches; ++b) sum[b].store_aligned(row_sum + b * W);

  std::fill(out, out + rows * d_v, 0.0f);
  for (const auto& run : runs) {
    for (std::size_t j0 = run[0]; j0 < run[1]; j0 += kDecodeValueBlock) {
      decode_accumulate_values<Arch>(scores_t + j0 * R, R, values + j0 * d_v,
                                     std::min(kDecodeValueBlock, run[1] - j0), rows, d_v, out);
    }
  }
  for (std::size_t r = 0; r < rows; ++r) {
    fully_masked[r] = row_sum[r] == 0.0f ? 1 : 0;
    if (row_sum[r] == 0.0f) continue;
    scale_row<Arch>(out + r * d_v, d_v, 1.0f / row_sum[r]);
  }
  return scores_finite;
}

}  // namespace detail

/// q: `rows` query rows (d_k each, rows <= kDecodeMaxRows); keys (Tk × d_k)
/// and values (Tk × d_v) row-major, in place. scores_t holds
/// decode_scores_size(Tk) floats of scratch, queries_t
/// decode_queries_size(d_k). out: rows × d_v. Returns whether every scaled
/// score it computed was finite: a -inf score (from a -inf key, or a
/// product that overflows) would otherwise pass as a masked key.
template <class Arch = xsimd::default_arch>
bool decode_attention(const float* q, const float* keys, const float* values, std::size_t rows,
                      std::size_t Tk, std::size_t d_k, std::size_t d_v, float scale,
                      const HeadMask& mask, float* out, std::uint8_t* fully_masked, float* scores_t,
                      float* queries_t) {
  constexpr std::size_t W = xsimd::batch<float, Arch>::size;
  static_assert(kDecodeMaxRows <= kDecodeLanes && kDecodeLanes % W == 0);
  const auto run = [&](auto lanes) {
    return detail::decode_attention_lanes<Arch, decltype(lanes)::value>(
        q, keys, values, rows, Tk, d_k, d_v, scale, mask, out, fully_masked, scores_t, queries_t);
  };
  switch ((rows + W - 1) / W) {
    case 0:
    case 1:
      return run(std::integral_constant<std::size_t, 1>{});
    case 2:
      return run(std::integral_constant<std::size_t, 2>{});
    default:
      if constexpr (W <= 4) {
        if (rows <= 3 * W) return run(std::integral_constant<std::size_t, 3>{});
        return run(std::integral_constant<std::size_t, 4>{});
      } else {
        return run(std::integral_constant<std::size_t, kDecodeLanes / W>{});
      }
  }
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
