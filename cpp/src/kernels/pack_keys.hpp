// Laying keys out for the matmul micro-kernel: Q·Kᵀ wants keys along the
// vector lanes, i.e. Kᵀ. Kᵀ with a row stride of T floats would make the
// kernel walk d_k rows T·4 bytes apart — for T a power of two those rows all
// land in the same few cache sets and evict each other. So keys are packed
// in tiles of `tile` keys: tile t is a dense d_k × tile block of Kᵀ.
#pragma once

#include <cstddef>

namespace attnscope::kernels {

/// Floats needed by pack_key_tiles.
inline std::size_t packed_keys_size(std::size_t T, std::size_t d_k, std::size_t tile) {
  return (T + tile - 1) / tile * tile * d_k;
}

/// keys (T × d_k) → ceil(T/tile) blocks of d_k × tile, block t holding
/// keys [t·tile, t·tile + tile) transposed; missing keys of the last block
/// are zero. Block t starts at dst + t·d_k·tile and has row stride `tile`.
inline void pack_key_tiles(const float* keys, std::size_t T, std::size_t d_k, std::size_t tile,
                           float* dst) {
  for (std::size_t k0 = 0; k0 < T; k0 += tile) {
    float* block = dst + (k0 / tile) * d_k * tile;
    const std::size_t cols = T - k0 < tile ? T - k0 : tile;
    for (std::size_t j = 0; j < cols; ++j) {
      const float* key = keys + (k0 + j) * d_k;
      for (std::size_t p = 0; p < d_k; ++p) block[p * tile + j] = key[p];
    }
    for (std::size_t p = 0; p < d_k; ++p) {
      for (std::size_t j = cols; j < tile; ++j) block[p * tile + j] = 0.0f;
    }
  }
}

}  // namespace attnscope::kernels
