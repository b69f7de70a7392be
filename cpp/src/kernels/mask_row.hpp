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

namespace attnscope::kernels {

/// The masks of one (batch, head) pair, or of a group of heads, resolved to
/// raw pointers. Defaults describe one head with Tq = Tk = seq_len.
struct HeadMask {
  std::size_t seq_len = 0;                // Tk: columns of the masks (their row stride)
  bool causal = false;                    // query at position p sees keys j <= p
  std::size_t key_length = 0;             // keys j >= key_length are padding
  const float* additive = nullptr;        // Tq×Tk per head, or null
  const std::uint8_t* allowed = nullptr;  // Tq×Tk per head (0 = masked), or null

  /// Position of query 0 among the keys: Tk − Tq (bottom-right alignment).
  std::size_t query_offset = 0;
  /// Rows per head when heads are stacked (Tq); 0 = one head, row = query.
  std::size_t queries_per_head = 0;
  /// Floats (or bytes) from one head's additive / allowed / bias rows to the
  /// next head's: Tq·Tk for per-head masks, 0 for masks the heads share.
  std::size_t additive_head_stride = 0;
  std::size_t allowed_head_stride = 0;
  std::size_t bias_head_stride = 0;
  /// A per-head additive bias, Tq×Tk per head, added before `additive`; or null.
  const float* bias = nullptr;
  /// ALiBi slope of each head (−slope·|pos − j| is added), or null.
  const float* alibi_slopes = nullptr;
  /// Sliding window: keys with |pos − j| >= window are hidden; 0 = none.
  std::size_t window = 0;
  /// Keys j < sinks are exempt from the window (not from causal or padding).
  std::size_t sinks = 0;

  std::size_t head_of(std::size_t row) const {
    return queries_per_head ? row / queries_per_head : 0;
  }
  std::size_t query_of(std::size_t row) const {
    return queries_per_head ? row % queries_per_head : row;
  }
  /// pos(i) = Tk − Tq + i.
  std::size_t position(std::size_t row) const { return query_offset + query_of(row); }
  /// Whether anything beyond causal and padding needs a per-element pass.
  bool has_dense_terms() const { return additive || allowed || bias || alibi_slopes; }

  /// One past the last key row `row` may see at all (causal, padding, and the
  /// window's far side, which sinks may extend).
  std::size_t key_end(std::size_t row) const {
    const std::size_t pos = position(row);
    std::size_t end = causal ? pos + 1 : seq_len;
    if (window) end = std::min(end, std::max(pos + window, sinks));
    return std::min(end, key_length);
  }
  /// First key inside the window's near side (keys before it are hidden
  /// unless they are sinks); 0 without a window.
  std::size_t window_begin(std::size_t row) const {
    const std::size_t pos = position(row);
    return window && pos + 1 > window ? pos + 1 - window : 0;
  }
};

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

}  // namespace attnscope::kernels
