// Laying keys and values out for the flash kernel's products.
//
// Q·Kᵀ wants keys along the vector lanes, i.e. Kᵀ, and P·V walks down the
// values of a key tile; in both the micro-kernel streams B one row per step
// of the shared dimension. Read in place, those rows are 512 bytes apart
// (Kᵀ of a 128-key tile) or 256 bytes (values of width 64), so a tile's
// rows fall in a few cache sets and evict each other. Packed as panels of
// kPanelWidth columns (one 64-byte line per row), the rows a micro-kernel
// reads follow each other in memory, which made both the standalone tile
// products and the flash kernel's faster in wasm (docs/performance/journal.md,
// "B panels").
//
// The packing runs in attention_fast.cpp, compiled for the baseline
// instruction set only, before the dispatched kernel: hence plain inline
// functions on xsimd's default arch here (see transpose_4x4 for why code
// that the dispatched kernels share takes their Arch instead).
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>

#include <xsimd/xsimd.hpp>

#include "kernels/isa_namespace.hpp"
#include "kernels/matmul.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {

/// Columns per panel of packed keys and values: 16 floats, one cache line
/// per row. A multiple of every batch width (4, 8, 16).
inline constexpr std::size_t kPanelWidth = 16;

/// How the packed layouts below are read (matmul_with).
using Panels = PanelsB<kPanelWidth>;

/// Floats needed by pack_key_tiles.
inline std::size_t packed_keys_size(std::size_t T, std::size_t d_k, std::size_t tile) {
  return (T + tile - 1) / tile * tile * d_k;
}

/// keys (T × d_k) → ceil(T/tile) blocks of d_k × tile floats, block t
/// holding keys [t·tile, t·tile + tile) transposed, as panels: key j of the
/// block, component p, at block + (j / kPanelWidth)·d_k·kPanelWidth +
/// p·kPanelWidth + j % kPanelWidth (key_tile_panels reads it so). Missing
/// keys of the last block are zero. tile is a multiple of kPanelWidth.
inline void pack_key_tiles(const float* keys, std::size_t T, std::size_t d_k, std::size_t tile,
                           float* dst) {
  assert(tile % kPanelWidth == 0);
  const std::size_t panel_size = d_k * kPanelWidth;
  for (std::size_t k0 = 0; k0 < T; k0 += tile) {
    float* block = dst + (k0 / tile) * d_k * tile;
    // Four keys at a time: 4 × 4 blocks of keys and components, then the
    // components past the last block, and keys past T as zeros.
    for (std::size_t j = 0; j < tile; j += 4) {
      float* columns = block + (j / kPanelWidth) * panel_size + j % kPanelWidth;
      const std::size_t first = k0 + j;  // the first of the four keys
      std::size_t p = 0;
      if (first + 4 <= T) {
        for (; p + 4 <= d_k; p += 4) {
          transpose_4x4<xsimd::default_arch>(keys + first * d_k + p, d_k, columns + p * kPanelWidth,
                                             kPanelWidth);
        }
      }
      for (; p < d_k; ++p) {
        for (std::size_t r = 0; r < 4; ++r) {
          columns[p * kPanelWidth + r] = first + r < T ? keys[(first + r) * d_k + p] : 0.0f;
        }
      }
    }
  }
}

/// The block of pack_key_tiles output that starts at `block`, as matmul_with
/// reads it: d_k × tile, keys as columns.
inline Panels key_tile_panels(const float* block, std::size_t d_k) {
  return {block, d_k * kPanelWidth};
}

/// keys (T × d_k) → keys_t (d_k × T): Kᵀ whole, for a product that packs its
/// B itself (matmul_best).
inline void transpose_keys(const float* keys, std::size_t T, std::size_t d_k, float* keys_t) {
  for (std::size_t j = 0; j < T; ++j) {
    for (std::size_t p = 0; p < d_k; ++p) keys_t[p * T + j] = keys[j * d_k + p];
  }
}

/// Floats needed by pack_value_panels.
inline std::size_t packed_values_size(std::size_t T, std::size_t d_v) {
  return (d_v + kPanelWidth - 1) / kPanelWidth * kPanelWidth * T;
}

/// values (T × d_v) → ceil(d_v / kPanelWidth) panels of T × kPanelWidth
/// floats: component j of value t at dst + (j / kPanelWidth)·T·kPanelWidth +
/// t·kPanelWidth + j % kPanelWidth. The columns past d_v in the last panel
/// are zero.
inline void pack_value_panels(const float* values, std::size_t T, std::size_t d_v, float* dst) {
  for (std::size_t j0 = 0; j0 < d_v; j0 += kPanelWidth) {
    float* panel = dst + (j0 / kPanelWidth) * T * kPanelWidth;
    const std::size_t width = d_v - j0 < kPanelWidth ? d_v - j0 : kPanelWidth;
    for (std::size_t t = 0; t < T; ++t) {
      const float* row = values + t * d_v + j0;
      float* out = panel + t * kPanelWidth;
      if (width == kPanelWidth) {
        // In batches: std::copy of 16 floats is a call to memcpy in wasm.
        using batch = xsimd::batch<float>;
        for (std::size_t j = 0; j < kPanelWidth; j += batch::size) {
          batch::load_unaligned(row + j).store_unaligned(out + j);
        }
      } else {
        std::copy(row, row + width, out);
        std::fill(out + width, out + kPanelWidth, 0.0f);
      }
    }
  }
}

/// Rows [t0, T) of pack_value_panels output for T values, as matmul_with
/// reads them.
inline Panels value_panels(const float* packed, std::size_t T, std::size_t t0) {
  return {packed + t0 * kPanelWidth, T * kPanelWidth};
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
