// Dot products of a float vector with rows stored in bfloat16 (the top 16
// bits of a float32), for a first, approximate pass over a large matrix that
// reads half the bytes of float32 (gpt2_greedy.cpp). A row is stored as
// 32-bit words, each holding two neighbours: element 2k in the low half,
// 2k + 1 in the high half. Shifting a word left by 16, or masking its low
// half away, gives the bits of those two as float32, so one load of W words
// becomes two float batches with two integer operations; the float vector
// comes split into its even and odd elements to match.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <xsimd/xsimd.hpp>

#include "kernels/isa_namespace.hpp"
#include "kernels/multiply_add.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {

/// x rounded to the nearest bfloat16 (ties to even), as its 16 bits; x finite.
inline std::uint16_t to_bfloat16(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

/// The float32 whose top 16 bits are `b`.
inline float from_bfloat16(std::uint16_t b) {
  const std::uint32_t bits = std::uint32_t{b} << 16;
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

/// out[j] = Σ_k even[k]·lo(rows[j][k]) + odd[k]·hi(rows[j][k]) over k < words,
/// for four rows read side by side (four streams from memory).
template <class Arch = xsimd::default_arch>
void dot4_bf16(const float* even, const float* odd, const std::uint32_t* const rows[4],
               std::size_t words, float out[4]) {
  using batch = xsimd::batch<float, Arch>;
  using ubatch = xsimd::batch<std::uint32_t, Arch>;
  constexpr std::size_t W = batch::size;
  const ubatch high_half(0xFFFF0000u);
  batch acc_even[4] = {batch(0.0f), batch(0.0f), batch(0.0f), batch(0.0f)};
  batch acc_odd[4] = {batch(0.0f), batch(0.0f), batch(0.0f), batch(0.0f)};
  const std::size_t vec_end = words - words % W;
  std::size_t k = 0;
  for (; k < vec_end; k += W) {
    const batch e = batch::load_unaligned(even + k), o = batch::load_unaligned(odd + k);
    for (std::size_t j = 0; j < 4; ++j) {
      const ubatch w = ubatch::load_unaligned(rows[j] + k);
      acc_even[j] = multiply_add(e, xsimd::bitwise_cast<batch>(w << 16), acc_even[j]);
      acc_odd[j] = multiply_add(o, xsimd::bitwise_cast<batch>(w & high_half), acc_odd[j]);
    }
  }
  for (std::size_t j = 0; j < 4; ++j) {
    float sum = xsimd::hadd(acc_even[j] + acc_odd[j]);
    for (std::size_t t = k; t < words; ++t) {
      sum += even[t] * from_bfloat16(static_cast<std::uint16_t>(rows[j][t])) +
             odd[t] * from_bfloat16(static_cast<std::uint16_t>(rows[j][t] >> 16));
    }
    out[j] = sum;
  }
}

/// dot4_bf16 for one row.
template <class Arch = xsimd::default_arch>
float dot_bf16(const float* even, const float* odd, const std::uint32_t* row, std::size_t words) {
  const std::uint32_t* const rows[4] = {row, row, row, row};
  float out[4];
  dot4_bf16<Arch>(even, odd, rows, words, out);
  return out[0];
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
