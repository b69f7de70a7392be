// The types that cross the dispatch boundary (dispatch.hpp): the callers,
// compiled with the library's default flags, build them and every
// kernels_<arch>.cpp reads them, so they must be one type in every
// translation unit and live outside the per-instruction-set namespace
// (isa_namespace.hpp). Plain data only, with inline members small enough to
// need no instruction set of their own.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

// The members below are compiled into every translation unit, AVX ones
// included; forced inline (even in unoptimised builds), they are never emitted
// as a weak copy that the linker could hand from an AVX object to a baseline
// caller (tests/cpp/check_isa_symbols.cmake checks it).
#if defined(__GNUC__) || defined(__clang__)
#define ATTN_BOUNDARY_INLINE __attribute__((always_inline)) inline
#elif defined(_MSC_VER)
#define ATTN_BOUNDARY_INLINE __forceinline
#else
#define ATTN_BOUNDARY_INLINE inline
#endif

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

  ATTN_BOUNDARY_INLINE std::size_t head_of(std::size_t row) const {
    return queries_per_head ? row / queries_per_head : 0;
  }
  ATTN_BOUNDARY_INLINE std::size_t query_of(std::size_t row) const {
    return queries_per_head ? row % queries_per_head : row;
  }
  /// pos(i) = Tk − Tq + i.
  ATTN_BOUNDARY_INLINE std::size_t position(std::size_t row) const {
    return query_offset + query_of(row);
  }
  /// Whether anything beyond causal and padding needs a per-element pass.
  ATTN_BOUNDARY_INLINE bool has_dense_terms() const {
    return additive || allowed || bias || alibi_slopes;
  }

  /// One past the last key row `row` may see at all (causal, padding, and the
  /// window's far side, which sinks may extend).
  ATTN_BOUNDARY_INLINE std::size_t key_end(std::size_t row) const {
    const std::size_t pos = position(row);
    std::size_t end = causal ? pos + 1 : seq_len;
    if (window) end = std::min(end, std::max(pos + window, sinks));
    return std::min(end, key_length);
  }
  /// First key inside the window's near side (keys before it are hidden
  /// unless they are sinks); 0 without a window.
  ATTN_BOUNDARY_INLINE std::size_t window_begin(std::size_t row) const {
    const std::size_t pos = position(row);
    return window && pos + 1 > window ? pos + 1 - window : 0;
  }
};

/// The query rows [begin, end) that one flash_attention_rows call computes
/// (begin a multiple of kQueryTile, so that every 16-row tile is the one the
/// whole call would form), and whether the in-range exp pass applies, decided
/// once for all rows of the head (flash_in_range): two calls that split a
/// head's rows then give the rows of one call bit for bit.
struct FlashRowRange {
  std::size_t begin = 0, end = 0;
  bool in_range = false;
};

/// Scratch buffers reused across heads (sized on first use).
struct FlashWorkspace {
  std::vector<float> queries;  // kQueryBlock × d_k, as row panels (pack_row_panels)
  std::vector<float> scores;   // kQueryTile × kKeyTile
  std::vector<float> weights;  // kQueryTile × kKeyTile, unnormalised
  std::vector<float> partial;  // kQueryBlock × d_v, unnormalised output
  std::vector<float> running_max, running_sum;  // kQueryBlock each
  /// When set, each query row's log-sum-exp of its scaled, masked scores
  /// (−inf for a fully masked row), indexed as fully_masked: what the
  /// flash backward needs to recompute the weights.
  float* log_sum_exp = nullptr;
};

}  // namespace attnscope::kernels
