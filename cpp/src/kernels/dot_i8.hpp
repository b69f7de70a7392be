// Exact integer dot products of an int16 vector with rows of int8, for a
// first, approximate pass over a large matrix that reads a quarter of the
// bytes of float32 (gpt2_greedy.cpp). The sums are of integers, so they are
// exact as long as no partial sum leaves int32: the caller keeps
// n · 127 · max|x| below 2³¹.
//
// xsimd 8 has no integer multiply-add of pairs, so the two targets that run
// this are written with their own intrinsics: wasm's i32x4.dot_i16x8_s and
// SSE2's pmaddwd (the same operation); other targets take the scalar loop.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernels/isa_namespace.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {

/// Elements per step of dot4_i8: rows and the vector are stored padded with
/// zeros to a multiple of this.
constexpr std::size_t kInt8Block = 16;

/// out[j] = Σ_k x[k]·rows[j][k] over k < n (a multiple of kInt8Block), for
/// four rows read side by side (four streams from memory).
inline void dot4_i8(const std::int16_t* x, const std::int8_t* const rows[4], std::size_t n,
                    std::int32_t out[4]) {
#if defined(__wasm_simd128__)
  v128_t acc[4] = {wasm_i32x4_splat(0), wasm_i32x4_splat(0), wasm_i32x4_splat(0),
                   wasm_i32x4_splat(0)};
  for (std::size_t k = 0; k < n; k += kInt8Block) {
    const v128_t low = wasm_v128_load(x + k), high = wasm_v128_load(x + k + 8);
    for (std::size_t j = 0; j < 4; ++j) {
      const v128_t w = wasm_v128_load(rows[j] + k);
      acc[j] = wasm_i32x4_add(acc[j], wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(w), low));
      acc[j] = wasm_i32x4_add(acc[j], wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(w), high));
    }
  }
  for (std::size_t j = 0; j < 4; ++j) {
    out[j] = wasm_i32x4_extract_lane(acc[j], 0) + wasm_i32x4_extract_lane(acc[j], 1) +
             wasm_i32x4_extract_lane(acc[j], 2) + wasm_i32x4_extract_lane(acc[j], 3);
  }
#elif defined(__SSE2__)
  __m128i acc[4] = {_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128(),
                    _mm_setzero_si128()};
  for (std::size_t k = 0; k < n; k += kInt8Block) {
    const __m128i low = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + k));
    const __m128i high = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + k + 8));
    for (std::size_t j = 0; j < 4; ++j) {
      const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[j] + k));
      // Each byte into the top of a 16-bit lane, then shifted down with its sign.
      const __m128i w_low = _mm_srai_epi16(_mm_unpacklo_epi8(w, w), 8);
      const __m128i w_high = _mm_srai_epi16(_mm_unpackhi_epi8(w, w), 8);
      acc[j] = _mm_add_epi32(acc[j], _mm_madd_epi16(w_low, low));
      acc[j] = _mm_add_epi32(acc[j], _mm_madd_epi16(w_high, high));
    }
  }
  for (std::size_t j = 0; j < 4; ++j) {
    alignas(16) std::int32_t lanes[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes), acc[j]);
    out[j] = lanes[0] + lanes[1] + lanes[2] + lanes[3];
  }
#else
  for (std::size_t j = 0; j < 4; ++j) {
    std::int32_t sum = 0;
    for (std::size_t k = 0; k < n; ++k) sum += std::int32_t{x[k]} * rows[j][k];
    out[j] = sum;
  }
#endif
}

/// dot4_i8 for one row.
inline std::int32_t dot_i8(const std::int16_t* x, const std::int8_t* row, std::size_t n) {
  const std::int8_t* const rows[4] = {row, row, row, row};
  std::int32_t out[4];
  dot4_i8(x, rows, n, out);
  return out[0];
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
