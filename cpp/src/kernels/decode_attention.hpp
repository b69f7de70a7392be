// Attention for a few query rows against many keys: a decode step (Tq = 1,
// or a handful of speculative tokens) reading a KV cache. The flash kernel
// packs keys and values into tiles first, which pays off when many queries
// reuse each tile; here every key and value is used by only the few rows of
// one GQA group, so they are read once, in place: each key row serves all
// the group's rows while it is in L1, then each value row likewise. The
// softmax is exact (max first), so weights·values never exceed max|v| and
// no rescaling is needed. Keys that the window hides are never read.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include <xsimd/xsimd.hpp>

#include "kernels/dispatch.hpp"
#include "kernels/flash_attention.hpp"
#include "kernels/isa_namespace.hpp"
#include "kernels/mask_row.hpp"
#include "kernels/multiply_add.hpp"
#include "kernels/pack_keys.hpp"
#include "kernels/scan.hpp"
#include "kernels/softmax_rows.hpp"
#include "kernels/transpose.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {

/// keys (n × d_k) → keys_t (d_k × n), 4×4 blocks at a time: element by
/// element, the column writes 4·n bytes apart made the transpose cost more
/// than the product.
template <class Arch>
void transpose_tile(const float* keys, std::size_t n, std::size_t d_k, float* keys_t) {
  const std::size_t n4 = n - n % 4, d4 = d_k - d_k % 4;
  for (std::size_t j = 0; j < n4; j += 4) {
    for (std::size_t p = 0; p < d4; p += 4) {
      transpose_4x4<Arch>(keys + j * d_k + p, d_k, keys_t + p * n + j, n);
    }
    for (std::size_t p = d4; p < d_k; ++p) {
      for (std::size_t jj = j; jj < j + 4; ++jj) keys_t[p * n + jj] = keys[jj * d_k + p];
    }
  }
  for (std::size_t j = n4; j < n; ++j) {
    for (std::size_t p = 0; p < d_k; ++p) keys_t[p * n + j] = keys[j * d_k + p];
  }
}

/// Values per block of the P·V step: 64 rows of d_v = 128 are 32 KiB, which
/// stay in L1 while each group of columns passes over them.
inline constexpr std::size_t kDecodeValueBlock = 64;

/// out (rows × d_v) += weights (rows × n, row stride ld) · values (n × d_v).
/// Four rows at a time share each load of a value, and their sums stay in
/// registers across the n values, four batches of columns at a time.
template <class Arch>
void accumulate_values(const float* weights, std::size_t ld, const float* values, std::size_t n,
                       std::size_t rows, std::size_t d_v, float* out) {
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
          const batch w(weights[(r0 + r) * ld + j]);
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
      const float w = weights[r * ld + j];
      const float* value = values + j * d_v;
      for (std::size_t c = first_col; c < d_v; ++c) out[r * d_v + c] += w * value[c];
    }
  }
}

/// Rows up to which attention_fast takes the decode kernel.
inline constexpr std::size_t kDecodeMaxRows = 16;

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

/// q: `rows` query rows (d_k each, rows <= kDecodeMaxRows); keys (Tk × d_k)
/// and values (Tk × d_v) row-major, in place. scores: rows × Tk floats of
/// scratch, keys_t d_k × kKeyTile. out: rows × d_v. Returns whether every
/// scaled score it computed was finite: a -inf score (from a -inf key, or
/// a product that overflows) would otherwise pass as a masked key.
template <class Arch = xsimd::default_arch>
bool decode_attention(const float* q, const float* keys, const float* values, std::size_t rows,
                      std::size_t Tk, std::size_t d_k, std::size_t d_v, float scale,
                      const HeadMask& mask, float* out, std::uint8_t* fully_masked, float* scores,
                      float* keys_t) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const DecodeKeyRange range = decode_key_range(mask, rows);
  const std::size_t runs[2][2] = {{0, range.sink_end}, {range.begin, range.end}};

  // Scores of the key tiles the runs touch, by the traced path's product on
  // the same tiles (each score the same sum in the same order, so both paths
  // agree even where a huge scale magnifies every rounding), then scaled as
  // the traced path scales them. Each tile is transposed into keys_t while
  // it is in cache; the keys are read from memory once.
  std::size_t done_end = 0;  // tiles are visited once even when the runs share one
  bool scores_finite = true;
  for (const auto& run : runs) {
    for (std::size_t k0 = run[0] / kKeyTile * kKeyTile; k0 < run[1]; k0 += kKeyTile) {
      if (k0 < done_end) continue;
      const std::size_t n = std::min(kKeyTile, Tk - k0);
      transpose_tile<Arch>(keys + k0 * d_k, n, d_k, keys_t);
      matmul_best(q, d_k, keys_t, n, scores + k0, Tk, rows, d_k, n);
      for (std::size_t r = 0; r < rows; ++r) {
        scale_row<Arch>(scores + r * Tk + k0, n, scale);
        scores_finite = scores_finite && all_finite<Arch>(scores + r * Tk + k0, n);
      }
      done_end = k0 + n;
    }
  }
  float row_sum[kDecodeMaxRows] = {};
  for (std::size_t r = 0; r < rows; ++r) {
    float* row = scores + r * Tk;
    float max = kNegInf;
    for (const auto& run : runs) {
      if (run[0] >= run[1]) continue;
      mask_row<Arch>(row + run[0], r, run[0], run[1] - run[0], mask);
      for (std::size_t j = run[0]; j < run[1]; ++j) max = std::max(max, row[j]);
    }
    float sum = 0.0f;
    for (const auto& run : runs) {
      for (std::size_t j = run[0]; j < run[1]; ++j) {
        row[j] = max == kNegInf ? 0.0f : std::exp(row[j] - max);
        sum += row[j];
      }
    }
    row_sum[r] = sum;
    fully_masked[r] = sum == 0.0f ? 1 : 0;
    std::fill(out + r * d_v, out + (r + 1) * d_v, 0.0f);
  }
  for (const auto& run : runs) {
    for (std::size_t j0 = run[0]; j0 < run[1]; j0 += kDecodeValueBlock) {
      accumulate_values<Arch>(scores + j0, Tk, values + j0 * d_v,
                              std::min(kDecodeValueBlock, run[1] - j0), rows, d_v, out);
    }
  }
  for (std::size_t r = 0; r < rows; ++r) {
    if (row_sum[r] == 0.0f) continue;
    const float inverse = 1.0f / row_sum[r];
    for (std::size_t c = 0; c < d_v; ++c) out[r * d_v + c] *= inverse;
  }
  return scores_finite;
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
