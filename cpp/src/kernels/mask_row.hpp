// Masking one row of scaled scores: masked = scaled + additive, then -inf
// wherever a key may not be attended (causal, padding, boolean mask).
// Shared by the traced path (whole rows) and the flash kernel (tiles).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace attnscope::kernels {

/// The masks of one (batch, head) pair, resolved to raw pointers.
struct HeadMask {
  std::size_t seq_len = 0;               // T: rows and columns of the T×T masks
  bool causal = false;                   // query i sees keys j <= i
  std::size_t key_length = 0;            // keys j >= key_length are padding
  const float* additive = nullptr;       // T×T, or null
  const std::uint8_t* allowed = nullptr; // T×T (0 = masked), or null

  /// One past the last key query i may see at all (causal and padding).
  std::size_t key_end(std::size_t query) const {
    const std::size_t causal_end = causal ? query + 1 : seq_len;
    return std::min(causal_end, key_length);
  }
};

/// Masks row[0..n) holding keys [first_key, first_key + n) of `query`.
/// Arch only names the instruction set the caller was compiled for: each
/// dispatched kernel gets its own copy, so the linker can never hand an
/// AVX-512 build of this function to the SSE2 path (one definition rule).
template <class Arch = void>
void mask_row(float* row, std::size_t query, std::size_t first_key, std::size_t n,
                     const HeadMask& mask) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  if (mask.additive) {
    const float* add = mask.additive + query * mask.seq_len + first_key;
    for (std::size_t j = 0; j < n; ++j) row[j] += add[j];
  }
  if (mask.allowed) {
    const std::uint8_t* allowed = mask.allowed + query * mask.seq_len + first_key;
    for (std::size_t j = 0; j < n; ++j) {
      if (!allowed[j]) row[j] = kNegInf;
    }
  }
  const std::size_t end = mask.key_end(query);
  if (end < first_key + n) {
    const std::size_t from = end > first_key ? end - first_key : 0;
    std::fill(row + from, row + n, kNegInf);
  }
}

}  // namespace attnscope::kernels
