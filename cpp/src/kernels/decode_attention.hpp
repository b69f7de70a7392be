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
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "kernels/flash_attention.hpp"
#include "kernels/isa_namespace.hpp"
#include "kernels/mask_row.hpp"
#include "kernels/multiply_add.hpp"
#include "kernels/outlined.hpp"
#include "kernels/scan.hpp"
#include "kernels/softmax_rows.hpp"
#include "kernels/transpose.hpp"
#include "kernels/vec_exp.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {

/// Rows up to which attention_fast takes the decode kernel.
inline constexpr std::size_t kDecodeMaxRows = 16;
/// Lanes per key in the decode kernel's scores: the rows rounded up to whole
/// batches of any instruction set (16 lanes at most).
inline constexpr std::size_t kDecodeLanes = 16;

/// Floats of scratch decode_attention needs for its scores (Tk × the padded
/// rows) and for its queries and outputs with the rows in the lanes
/// ((d_k + d_v) × the padded rows).
inline std::size_t decode_scores_size(std::size_t Tk) { return Tk * kDecodeLanes; }
inline std::size_t decode_lanes_size(std::size_t d_k, std::size_t d_v) {
  return (d_k + d_v) * kDecodeLanes;
}

/// The keys a set of rows may see: [0, sink_end) and [begin, end).
struct DecodeKeyRange {
  std::size_t sink_end, begin, end;
};

inline DecodeKeyRange decode_key_range(const HeadMask& mask, std::size_t rows) noexcept {
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

/// The two runs of keys `rows` rows may see, [0, sink_end) and [begin, end)
/// of decode_key_range, within the Tk keys of the cache.
using DecodeKeyRuns = std::array<std::array<std::size_t, 2>, 2>;

inline DecodeKeyRuns decode_key_runs(const HeadMask& mask, std::size_t rows,
                                     std::size_t Tk) noexcept {
  DecodeKeyRange range = decode_key_range(mask, rows);
  range.end = std::min(range.end, Tk);  // the mask never reaches past the cache
  range.begin = std::min(range.begin, range.end);
  return {{{0, range.sink_end}, {range.begin, range.end}}};
}

/// The head width as a constant where it is one of the common ones: Width
/// if nonzero, else the run-time `width`. With the width known, the rows
/// that the two loops below read together (eight keys, eight values) are one
/// pointer and constant offsets, instead of eight addresses computed at run
/// time; that measured faster in wasm (docs/performance/journal.md,
/// "Decode width and ALiBi's running max").
template <std::size_t Width>
constexpr std::size_t head_width(std::size_t width) noexcept {
  return Width ? Width : width;
}

/// Calls f(std::integral_constant<std::size_t, Width>) with Width = d for
/// d = 64 or 128, and 0 (the width known at run time only) otherwise.
template <class F>
void with_head_width(std::size_t d, F f) noexcept {
  if (d == 128) {
    f(std::integral_constant<std::size_t, 128>{});
  } else if (d == 64) {
    f(std::integral_constant<std::size_t, 64>{});
  } else {
    f(std::integral_constant<std::size_t, 0>{});
  }
}

/// Keys whose scores decode_score_keys takes together when the rows fill one
/// batch: each load of a query column serves them all. In wasm, 7 measured
/// faster than 8 and no slower than 6, and 10 or 12 slower still, likely as
/// the engine runs out of registers for the accumulators
/// (docs/performance/journal.md).
#if defined(__wasm_simd128__)
inline constexpr std::size_t kDecodeKeysPerPass = 7;
#else
inline constexpr std::size_t kDecodeKeysPerPass = 8;
#endif

/// The scores of Keys keys, key[k·d_k + p] for k < Keys, times `factor`,
/// into scores_t[k·R + lane]: every key's products are added in the order of
/// p, each key a chain of multiply-adds of its own, and the sum scaled as the
/// traced path scales it. `not_finite` gains each scaled score times 0 (all
/// lanes, as all_finite would read them): it turns NaN once one is NaN or
/// infinite.
template <class Arch, std::size_t Batches, std::size_t Keys>
void decode_score_keys(const float* queries_t, const float* key, std::size_t d_k,
                       const xsimd::batch<float, Arch>& factor, float* scores_t,
                       xsimd::batch<float, Arch>& not_finite) noexcept {
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = batch::size, R = Batches * W;
  batch acc[Keys][Batches];
  for (std::size_t k = 0; k < Keys; ++k) {
    for (std::size_t b = 0; b < Batches; ++b) acc[k][b] = batch(0.0f);
  }
  for (std::size_t p = 0; p < d_k; ++p) {
    batch column[Batches];
    for (std::size_t b = 0; b < Batches; ++b) {
      column[b] = batch::load_unaligned(queries_t + p * R + b * W);
    }
    for (std::size_t k = 0; k < Keys; ++k) {
      const batch component(key[k * d_k + p]);
      for (std::size_t b = 0; b < Batches; ++b) {
        acc[k][b] = multiply_add(component, column[b], acc[k][b]);
      }
    }
  }
  const batch zero(0.0f);
  for (std::size_t k = 0; k < Keys; ++k) {
    for (std::size_t b = 0; b < Batches; ++b) {
      const batch scaled = acc[k][b] * factor;
      scaled.store_unaligned(scores_t + k * R + b * W);
      not_finite += scaled * zero;
    }
  }
}

/// Raises *norm2_max to the float sum of squares of each of the Keys key
/// rows from `key` that is larger (a NaN sum is passed over, as
/// attention_checks.cpp's max_row_norm2 passes it over); nothing when
/// norm2_max is null. Each row's sum is sum_of_squares<KeyNormArch>'s, the
/// same operations in the same order, so the same float to the bit; the rows
/// are summed side by side, Keys chains of additions at once instead of one
/// after another.
template <std::size_t Keys>
void raise_key_norm2_max(const float* key, std::size_t d_k, float* norm2_max) noexcept {
  if (!norm2_max) return;
  using batch = xsimd::batch<float, KeyNormArch>;
  constexpr std::size_t W = batch::size;
  batch acc[Keys];
  for (std::size_t k = 0; k < Keys; ++k) acc[k] = batch(0.0f);
  std::size_t i = 0;
  for (; i + W <= d_k; i += W) {
    for (std::size_t k = 0; k < Keys; ++k) {
      const batch x = batch::load_unaligned(key + k * d_k + i);
      acc[k] = multiply_add(x, x, acc[k]);
    }
  }
  for (std::size_t k = 0; k < Keys; ++k) {
    float norm2 = xsimd::hadd(acc[k]);
    for (std::size_t p = i; p < d_k; ++p) norm2 += key[k * d_k + p] * key[k * d_k + p];
    if (norm2 > *norm2_max) *norm2_max = norm2;
  }
}

/// scores_t[j·R + lane] = (Σ_p queries_t[p·R + lane] · keys[j·d_k + p]) ·
/// factor for keys [0, n), Batches batches of lanes (R = Batches·W);
/// not_finite: see decode_score_keys. Several keys at a
/// time share each load of a query column; their sums of squares are taken
/// right after, while the rows are in L1 (see raise_key_norm2_max), with the
/// width known at run time only, as attention_checks.cpp sums them (with it
/// constant, GCC 12 warns falsely about sum_of_squares's scalar tail). Width:
/// see head_width.
template <class Arch, std::size_t Batches, std::size_t Width>
void decode_scores(const float* queries_t, const float* keys, std::size_t n,
                   std::size_t d_k_runtime, const xsimd::batch<float, Arch>& factor,
                   float* scores_t, xsimd::batch<float, Arch>& not_finite,
                   float* key_norm2_max) noexcept {
  constexpr std::size_t R = Batches * xsimd::batch<float, Arch>::size;
  const std::size_t d_k = head_width<Width>(d_k_runtime);
  constexpr std::size_t kKeys = Batches == 1 ? kDecodeKeysPerPass : 4;
  std::size_t j = 0;
  for (; j + kKeys <= n; j += kKeys) {
    decode_score_keys<Arch, Batches, kKeys>(queries_t, keys + j * d_k, d_k, factor,
                                            scores_t + j * R, not_finite);
    raise_key_norm2_max<kKeys>(keys + j * d_k, d_k_runtime, key_norm2_max);
  }
  for (; j + 4 <= n; j += 4) {
    decode_score_keys<Arch, Batches, 4>(queries_t, keys + j * d_k, d_k, factor, scores_t + j * R,
                                        not_finite);
    raise_key_norm2_max<4>(keys + j * d_k, d_k_runtime, key_norm2_max);
  }
  for (; j < n; ++j) {
    decode_score_keys<Arch, Batches, 1>(queries_t, keys + j * d_k, d_k, factor, scores_t + j * R,
                                        not_finite);
    raise_key_norm2_max<1>(keys + j * d_k, d_k_runtime, key_norm2_max);
  }
}

/// out_t (d_v × R, row r's component c at out_t[c·R + r]) += the weights
/// times values [0, n) (n × d_v), each weight exp(score − max) of the
/// scaled, masked scores (scores_t layout) and each row's max (max[b]),
/// added to sum[b] key by key: the softmax's exponentials are taken as the
/// values pass needs them, not in a pass of their own. The values are read
/// row by row, eight rows at a time, each component broadcast against the
/// weights of all rows. Reading the values in order measured faster in wasm
/// than blocks of them taken a few columns at a time (web/bench/README.md).
/// Width: see head_width.
template <class Arch, std::size_t Batches, std::size_t Width>
void decode_accumulate_values(const float* scores_t, const xsimd::batch<float, Arch>* max,
                              xsimd::batch<float, Arch>* sum, const float* values, std::size_t n,
                              std::size_t d_v_runtime, float* out_t) noexcept {
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = batch::size, R = Batches * W, kValues = 8;
  const std::size_t d_v = head_width<Width>(d_v_runtime);
  const auto weight = [&](std::size_t j, std::size_t b) noexcept {
    const batch e = vec_exp<Arch>(batch::load_unaligned(scores_t + j * R + b * W) - max[b]);
    sum[b] += e;
    return e;
  };
  std::size_t j = 0;
  for (; j + kValues <= n; j += kValues) {
    batch w[kValues][Batches];
    for (std::size_t u = 0; u < kValues; ++u) {
      for (std::size_t b = 0; b < Batches; ++b) w[u][b] = weight(j + u, b);
    }
    const float* value = values + j * d_v;
    for (std::size_t c = 0; c < d_v; ++c) {
      for (std::size_t b = 0; b < Batches; ++b) {
        batch acc = batch::load_unaligned(out_t + c * R + b * W);
        for (std::size_t u = 0; u < kValues; ++u) {
          acc = multiply_add(w[u][b], batch(value[u * d_v + c]), acc);
        }
        acc.store_unaligned(out_t + c * R + b * W);
      }
    }
  }
  for (; j < n; ++j) {
    batch w[Batches];
    for (std::size_t b = 0; b < Batches; ++b) w[b] = weight(j, b);
    for (std::size_t c = 0; c < d_v; ++c) {
      const batch component(values[j * d_v + c]);
      for (std::size_t b = 0; b < Batches; ++b) {
        float* partial = out_t + c * R + b * W;
        multiply_add(w[b], component, batch::load_unaligned(partial)).store_unaligned(partial);
      }
    }
  }
}

/// The scaled scores of one query row q (d_k) against keys [0, n), into
/// scores[j], four keys at a time with the keys in the lanes: each block of
/// four components of four keys is transposed in registers, so that a
/// multiply-add takes one component of four keys against that component of
/// q broadcast. Each score still adds its products in the order of p from
/// zero, a chain of its own, and is scaled as decode_scores scales it: the
/// same bits, with every lane at work (with the rows in the lanes, a single
/// row leaves three of four idle). not_finite and key_norm2_max: see
/// decode_scores. For batches of four floats (wasm, and SSE natively).
template <class Arch, std::size_t Width>
void decode_scores_row(const float* q, const float* keys, std::size_t n, std::size_t d_k_runtime,
                       const xsimd::batch<float, Arch>& factor, float* scores,
                       xsimd::batch<float, Arch>& not_finite, float* key_norm2_max) noexcept {
  using batch = xsimd::batch<float, Arch>;
  static_assert(batch::size == 4, "four keys in the lanes");
  const std::size_t d_k = head_width<Width>(d_k_runtime);
  const std::size_t blocks_end = d_k - d_k % 4;
  const batch zero(0.0f);
  std::size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const float* key = keys + j * d_k;
    batch acc(0.0f);
    std::size_t p = 0;
    for (; p < blocks_end; p += 4) {
      batch c0 = batch::load_unaligned(key + p), c1 = batch::load_unaligned(key + d_k + p);
      batch c2 = batch::load_unaligned(key + 2 * d_k + p);
      batch c3 = batch::load_unaligned(key + 3 * d_k + p);
      transpose_4x4_in_registers(c0, c1, c2, c3);
      acc = multiply_add(batch(q[p]), c0, acc);
      acc = multiply_add(batch(q[p + 1]), c1, acc);
      acc = multiply_add(batch(q[p + 2]), c2, acc);
      acc = multiply_add(batch(q[p + 3]), c3, acc);
    }
    for (; p < d_k; ++p) {
      alignas(16)
          const float column[4] = {key[p], key[d_k + p], key[2 * d_k + p], key[3 * d_k + p]};
      acc = multiply_add(batch(q[p]), batch::load_aligned(column), acc);
    }
    const batch scaled = acc * factor;
    scaled.store_unaligned(scores + j);
    not_finite += scaled * zero;
    raise_key_norm2_max<4>(key, d_k_runtime, key_norm2_max);
  }
  for (; j < n; ++j) {  // the last keys one at a time, in lane 0
    const float* key = keys + j * d_k;
    batch acc(0.0f);
    for (std::size_t p = 0; p < d_k; ++p) acc = multiply_add(batch(q[p]), batch(key[p]), acc);
    const batch scaled = acc * factor;
    scores[j] = scaled.get(0);
    not_finite += scaled * zero;
    raise_key_norm2_max<1>(key, d_k_runtime, key_norm2_max);
  }
}

/// decode_accumulate_values for a single query row (its scores one float a key, its max
/// `max`): out (d_v) += exp(score − max) times each value, `sum` gaining each exponential key
/// by key. The values' components sit in the lanes instead of the rows, so every lane of a
/// multiply-add does work (with the rows in the lanes, one row leaves all but one idle); each
/// out[c] and the sum still add their terms one after the other in the keys' order, with the
/// same operations on the same numbers, so the bits are those decode_accumulate_values gives.
/// Width: see head_width.
template <class Arch, std::size_t Width>
void decode_accumulate_values_row(const float* scores, float max, float& sum, const float* values,
                                  std::size_t n, std::size_t d_v_runtime, float* out) noexcept {
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = batch::size, kValues = 8, kChunkBatches = 8;
  constexpr std::size_t kValueBatches = (kValues + W - 1) / W;
  const std::size_t d_v = head_width<Width>(d_v_runtime);
  const std::size_t vec_end = d_v - d_v % W;
  const std::size_t chunks_end = d_v - d_v % (kChunkBatches * W);
  alignas(64) float weights[kValueBatches * W] = {};  // lanes past the last key stay finite
  // weights[0 .. count) = exp(score − max) of keys j .. j + count, added to sum in order.
  const auto take_weights = [&](std::size_t j, std::size_t count) noexcept {
    std::copy_n(scores + j, count, weights);
    for (std::size_t u = 0; u < count; u += W) {
      vec_exp<Arch>(batch::load_aligned(weights + u) - batch(max)).store_aligned(weights + u);
    }
    for (std::size_t u = 0; u < count; ++u) sum += weights[u];
  };
  // out[c0 ..) += the weights times components c0 .. of `count` values, Batches batches wide.
  const auto accumulate = [&](const float* value, std::size_t count, std::size_t c0,
                              auto batches) noexcept {
    constexpr std::size_t B = decltype(batches)::value;
    batch acc[B];
    for (std::size_t b = 0; b < B; ++b) acc[b] = batch::load_unaligned(out + c0 + b * W);
    for (std::size_t u = 0; u < count; ++u) {
      const batch w(weights[u]);
      for (std::size_t b = 0; b < B; ++b) {
        acc[b] = multiply_add(w, batch::load_unaligned(value + u * d_v + c0 + b * W), acc[b]);
      }
    }
    for (std::size_t b = 0; b < B; ++b) acc[b].store_unaligned(out + c0 + b * W);
  };
  for (std::size_t j = 0; j < n; j += kValues) {
    const std::size_t count = std::min(kValues, n - j);
    take_weights(j, count);
    const float* value = values + j * d_v;
    std::size_t c = 0;
    for (; c < chunks_end; c += kChunkBatches * W) {
      accumulate(value, count, c, std::integral_constant<std::size_t, kChunkBatches>{});
    }
    for (; c < vec_end; c += W)
      accumulate(value, count, c, std::integral_constant<std::size_t, 1>{});
    // The last d_v % W components, each in a batch of its own: the same
    // multiply-add as the lanes', which a scalar one may round differently.
    for (; c < d_v; ++c) {
      batch acc(out[c]);
      for (std::size_t u = 0; u < count; ++u) {
        acc = multiply_add(batch(weights[u]), batch(value[u * d_v + c]), acc);
      }
      out[c] = acc.get(0);
    }
  }
}

/// Masks keys [k0, k0 + n) of scores_t for rows [0, rows): each row's
/// scores are gathered, masked by mask_row as the traced path masks them,
/// and put back.
template <class Arch>
void decode_mask_scores(float* scores_t, std::size_t R, std::size_t rows, std::size_t k0,
                        std::size_t n, const HeadMask& mask) noexcept {
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
                            std::uint8_t* fully_masked, float* scores_t, float* lanes_scratch,
                            float* key_norm2_max) noexcept {
  using batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = batch::size, R = Batches * W;
  // Query row r's component p at queries_t[p·R + r]; padding lanes are 0.
  float* queries_t = lanes_scratch;
  std::fill(queries_t, queries_t + d_k * R, 0.0f);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t p = 0; p < d_k; ++p) queries_t[p * R + r] = q[r * d_k + p];
  }
  const DecodeKeyRuns runs = decode_key_runs(mask, rows, Tk);
  const TileKeyRange shared = TileKeyRange::of(mask, 0, rows);
  const bool dense_mask = mask.has_dense_terms();

  // Scores, scaled as the traced path scales them, then masked where some
  // row may not see some key, a tile of keys at a time; each row's max (the
  // softmax's, below) is taken down the tile while it is in L1, in the
  // keys' order.
  batch max[Batches], sum[Batches];
  for (std::size_t b = 0; b < Batches; ++b) {
    max[b] = batch(kNegInf);
    sum[b] = batch(0.0f);
  }
  const batch factor(scale);
  batch not_finite(0.0f);
  for (const auto& run : runs) {
    for (std::size_t k0 = run[0]; k0 < run[1]; k0 += kKeyTile) {
      const std::size_t n = std::min(kKeyTile, run[1] - k0);
      float* tile = scores_t + k0 * R;
      with_head_width(d_k, [&](auto width) noexcept {
        call_outlined<&decode_scores<Arch, Batches, decltype(width)::value>>(
            queries_t, keys + k0 * d_k, n, d_k, factor, tile, not_finite, key_norm2_max);
      });
      if (dense_mask || !shared.shows(k0, n, mask.sinks)) {
        decode_mask_scores<Arch>(tile, R, rows, k0, n, mask);
      }
      for (std::size_t j = 0; j < n; ++j) {
        for (std::size_t b = 0; b < Batches; ++b) {
          max[b] = max_no_nan(max[b], batch::load_unaligned(tile + j * R + b * W));
        }
      }
    }
  }
  // A sum of the lanes, as all_finite takes it: xsimd's != compares ordered on
  // AVX and AVX-512, where NaN != NaN is false.
  const bool scores_finite = !std::isnan(xsimd::hadd(not_finite));

  // Softmax down the keys, every lane a row: exp(score − max), its sum, and
  // the weights times the values, in one pass (decode_accumulate_values). A
  // row that sees no key has max −inf; it is shifted by 0 instead, so that
  // its −inf scores give weights of exactly 0.
  for (std::size_t b = 0; b < Batches; ++b) {
    max[b] = xsimd::select(max[b] == batch(kNegInf), batch(0.0f), max[b]);
  }
  float* out_t = lanes_scratch + d_k * R;  // row r's component c at out_t[c·R + r]
  std::fill(out_t, out_t + d_v * R, 0.0f);
  for (const auto& run : runs) {
    with_head_width(d_v, [&](auto width) noexcept {
      call_outlined<&decode_accumulate_values<Arch, Batches, decltype(width)::value>>(
          scores_t + run[0] * R, max, sum, values + run[0] * d_v, run[1] - run[0], d_v, out_t);
    });
  }
  alignas(64) float row_sum[R];
  for (std::size_t b = 0; b < Batches; ++b) sum[b].store_aligned(row_sum + b * W);
  for (std::size_t r = 0; r < rows; ++r) {
    fully_masked[r] = row_sum[r] == 0.0f ? 1 : 0;
    const float inverse = row_sum[r] == 0.0f ? 0.0f : 1.0f / row_sum[r];
    for (std::size_t c = 0; c < d_v; ++c) out[r * d_v + c] = out_t[c * R + r] * inverse;
  }
  return scores_finite;
}

/// decode_attention for a single query row with batches of four floats:
/// both passes with the keys' and values' own elements in the lanes
/// (decode_scores_row, decode_accumulate_values_row), the scores one float
/// a key (scores: Tk floats), out_scratch d_v floats. The same operations in
/// the same order as decode_attention_lanes on that row, so the same bits.
template <class Arch>
bool decode_attention_row(const float* q, const float* keys, const float* values, std::size_t Tk,
                          std::size_t d_k, std::size_t d_v, float scale, const HeadMask& mask,
                          float* out, std::uint8_t* fully_masked, float* scores, float* out_scratch,
                          float* key_norm2_max) noexcept {
  using batch = xsimd::batch<float, Arch>;
  const DecodeKeyRuns runs = decode_key_runs(mask, 1, Tk);
  const TileKeyRange shared = TileKeyRange::of(mask, 0, 1);
  const bool dense_mask = mask.has_dense_terms();
  const batch factor(scale);
  batch not_finite(0.0f);
  float max = kNegInf;
  for (const auto& run : runs) {
    for (std::size_t k0 = run[0]; k0 < run[1]; k0 += kKeyTile) {
      const std::size_t n = std::min(kKeyTile, run[1] - k0);
      float* tile = scores + k0;
      with_head_width(d_k, [&](auto width) noexcept {
        call_outlined<&decode_scores_row<Arch, decltype(width)::value>>(
            q, keys + k0 * d_k, n, d_k, factor, tile, not_finite, key_norm2_max);
      });
      if (dense_mask || !shared.shows(k0, n, mask.sinks)) {
        decode_mask_scores<Arch>(tile, 1, 1, k0, n, mask);
      }
      // max_no_nan's lane, key by key: a NaN score never replaces the max.
      for (std::size_t j = 0; j < n; ++j) max = max < tile[j] ? tile[j] : max;
    }
  }
  const bool scores_finite = !std::isnan(xsimd::hadd(not_finite));
  if (max == kNegInf) max = 0.0f;  // no key seen: its -inf scores give weights of 0
  float sum = 0.0f;
  std::fill(out_scratch, out_scratch + d_v, 0.0f);
  for (const auto& run : runs) {
    with_head_width(d_v, [&](auto width) noexcept {
      call_outlined<&decode_accumulate_values_row<Arch, decltype(width)::value>>(
          scores + run[0], max, sum, values + run[0] * d_v, run[1] - run[0], d_v, out_scratch);
    });
  }
  fully_masked[0] = sum == 0.0f ? 1 : 0;
  const float inverse = sum == 0.0f ? 0.0f : 1.0f / sum;
  for (std::size_t c = 0; c < d_v; ++c) out[c] = out_scratch[c] * inverse;
  return scores_finite;
}

}  // namespace detail

/// q: `rows` query rows (d_k each, rows <= kDecodeMaxRows); keys (Tk × d_k)
/// and values (Tk × d_v) row-major, in place. scores_t holds
/// decode_scores_size(Tk) floats of scratch, lanes_scratch
/// decode_lanes_size(d_k, d_v). out: rows × d_v. Returns whether every scaled
/// score it computed was finite: a -inf score (from a -inf key, or a
/// product that overflows) would otherwise pass as a masked key.
/// key_norm2_max, when not null, starts at 0 and ends at the largest float
/// sum of squares (sum_of_squares<KeyNormArch>) of the key rows the kernel
/// read: +inf if one overflowed, and then the caller recomputes in double.
template <class Arch = xsimd::default_arch>
bool decode_attention(const float* q, const float* keys, const float* values, std::size_t rows,
                      std::size_t Tk, std::size_t d_k, std::size_t d_v, float scale,
                      const HeadMask& mask, float* out, std::uint8_t* fully_masked, float* scores_t,
                      float* lanes_scratch, float* key_norm2_max = nullptr) noexcept {
  constexpr std::size_t W = xsimd::batch<float, Arch>::size;
  static_assert(kDecodeMaxRows <= kDecodeLanes && kDecodeLanes % W == 0);
  const auto run = [&](auto batches) noexcept {
    return detail::decode_attention_lanes<Arch, decltype(batches)::value>(
        q, keys, values, rows, Tk, d_k, d_v, scale, mask, out, fully_masked, scores_t,
        lanes_scratch, key_norm2_max);
  };
  if (key_norm2_max) *key_norm2_max = 0.0f;
  if constexpr (W == 4) {
    if (rows == 1) {
      return detail::decode_attention_row<Arch>(q, keys, values, Tk, d_k, d_v, scale, mask, out,
                                                fully_masked, scores_t, lanes_scratch,
                                                key_norm2_max);
    }
  }
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
