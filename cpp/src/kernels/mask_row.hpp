// Masking one row of scaled scores: masked = scaled + bias + additive, then
// -inf wherever a key may not be attended (causal, padding, window, boolean
// mask). Shared by the traced path (whole rows) and the flash kernel (tiles).
//
// A row is one query of one head. The flash kernel may stack the query heads
// that share a key/value head (GQA) as one matrix of rows: row r is then query
// r % queries_per_head of the group's head r / queries_per_head, which is why
// the per-head masks carry a stride between heads.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "kernels/boundary_types.hpp"
#include "kernels/isa_namespace.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {

/// Masks row[0..n) holding keys [first_key, first_key + n) of `row`.
/// Arch only names the instruction set the caller was compiled for: each
/// dispatched kernel gets its own copy, so the linker can never hand an
/// AVX-512 build of this function to the SSE2 path (one definition rule).
template <class Arch = void>
void mask_row(float* row, std::size_t query, std::size_t first_key, std::size_t n,
              const HeadMask& mask) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const std::size_t head = mask.head_of(query);
  const std::size_t i = mask.query_of(query);
  if (mask.alibi_slopes) {
    // Distances in float are exact below 2^24 keys; written on floats so
    // that the loop vectorises.
    const float slope = mask.alibi_slopes[head];
    const float offset = static_cast<float>(mask.position(query)) - static_cast<float>(first_key);
    const std::int32_t count = static_cast<std::int32_t>(n);  // rows of Tk < 2^24 keys
    for (std::int32_t j = 0; j < count; ++j) {
      row[j] += -slope * std::fabs(offset - static_cast<float>(j));
    }
  }
  if (mask.bias) {
    const float* add = mask.bias + head * mask.bias_head_stride + i * mask.seq_len + first_key;
    for (std::size_t j = 0; j < n; ++j) row[j] += add[j];
  }
  if (mask.additive) {
    const float* add =
        mask.additive + head * mask.additive_head_stride + i * mask.seq_len + first_key;
    for (std::size_t j = 0; j < n; ++j) row[j] += add[j];
  }
  if (mask.allowed) {
    const std::uint8_t* allowed =
        mask.allowed + head * mask.allowed_head_stride + i * mask.seq_len + first_key;
    for (std::size_t j = 0; j < n; ++j) {
      if (!allowed[j]) row[j] = kNegInf;
    }
  }
  // Keys in [sinks, window_begin) are outside the window.
  const std::size_t begin = mask.window_begin(query);
  if (begin > mask.sinks && begin > first_key) {
    const std::size_t from = std::max(mask.sinks, first_key) - first_key;
    const std::size_t to = std::min(begin - first_key, n);
    if (from < to) std::fill(row + from, row + to, kNegInf);
  }
  const std::size_t end = mask.key_end(query);
  if (end < first_key + n) {
    const std::size_t from = end > first_key ? end - first_key : 0;
    std::fill(row + from, row + n, kNegInf);
  }
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
