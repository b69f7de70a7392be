// The hot entry points, picked at run time for the best instruction set the
// CPU has (xsimd::dispatch). Each instruction set's instantiation lives in its
// own translation unit compiled with that set's flags (kernels_*.cpp), so the
// library itself stays portable: the default native build runs on any x86-64
// and uses AVX2+FMA or AVX-512 where present. Under Emscripten, and with
// ATTN_NATIVE_ARCH, there is one path: xsimd::default_arch.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/flash_attention.hpp"
#include "kernels/mask_row.hpp"
#include "kernels/panel_matrix.hpp"

namespace attnscope::kernels {

/// flash_in_range for `rows` query rows (one head, or a GQA group's heads
/// stacked) against `keys` keys; see flash_attention.hpp. `scratch` holds
/// kKeyTile floats.
bool flash_in_range_best(const float* q, const float* packed_keys, std::size_t rows,
                         std::size_t keys, std::size_t d_k, float scale, const HeadMask& mask,
                         float* scratch);

/// flash_attention_rows: the query rows `rows` of such a head against `keys`
/// keys; see flash_attention.hpp.
void flash_attention_rows_best(const float* q, const float* packed_keys, const float* packed_values,
                               std::size_t keys, std::size_t d_k, std::size_t d_v, float scale,
                               const HeadMask& mask, float* out, std::uint8_t* fully_masked,
                               const FlashRowRange& rows, FlashWorkspace& ws);

/// decode_attention (a few query rows against keys and values read in
/// place); see decode_attention.hpp. Returns whether every score was finite;
/// key_norm2_max (optional): the largest float sum of squares of a key row.
/// noexcept (it allocates nothing): under Emscripten a call that may throw
/// goes through a JavaScript invoke_ wrapper, whose presence would then
/// depend on each wasm flavour's inlining, and the flavours share one loader.
bool decode_attention_best(const float* q, const float* keys, const float* values, std::size_t rows,
                           std::size_t Tk, std::size_t d_k, std::size_t d_v, float scale,
                           const HeadMask& mask, float* out, std::uint8_t* fully_masked,
                           float* scores_t, float* lanes_scratch,
                           float* key_norm2_max = nullptr) noexcept;

/// matmul (c = a·b, or c += a·b when accumulate); see matmul.hpp.
void matmul_best(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c,
                 std::size_t ldc, std::size_t m, std::size_t k, std::size_t n,
                 bool accumulate = false);

/// matmul_panels: columns [j0, j1) of c = a·b (or c += a·b) for b stored in
/// panels of matmul_panel_width_best() columns; see matmul_panels.hpp.
void matmul_panels_best(const float* a, std::size_t lda, const PanelMatrix& b, std::size_t j0,
                        std::size_t j1, float* c, std::size_t ldc, std::size_t m, bool accumulate);

/// The panel width matmul_panels_best reads: one register tile's width for
/// the instruction set the CPU has.
std::size_t matmul_panel_width_best();

/// matmul_transposed_b (c = a·bᵀ, b stored as n rows of k); see
/// matmul_transposed_b.hpp.
void matmul_transposed_b_best(const float* a, std::size_t lda, const float* b, std::size_t ldb,
                              float* c, std::size_t ldc, std::size_t m, std::size_t k,
                              std::size_t n);

/// softmax_rows; see softmax_rows.hpp.
void softmax_rows_best(const float* x, float* y, std::size_t rows, std::size_t n,
                       unsigned char* has_keys);

/// Name of the instruction set the entry points above run with ("avx512bw",
/// "fma3+avx2", "sse2", ...).
const char* best_arch_name();

// One functor per entry point: xsimd::dispatch calls operator()(Arch{}, ...)
// for the chosen Arch; each kernels_<arch>.cpp defines its instantiation.
struct FlashInRangeKernel {
  template <class Arch>
  bool operator()(Arch, const float* q, const float* packed_keys, std::size_t rows,
                  std::size_t keys, std::size_t d_k, float scale, const HeadMask& mask,
                  float* scratch) const;
};
struct FlashAttentionRowsKernel {
  template <class Arch>
  void operator()(Arch, const float* q, const float* packed_keys, const float* packed_values,
                  std::size_t keys, std::size_t d_k, std::size_t d_v, float scale,
                  const HeadMask& mask, float* out, std::uint8_t* fully_masked,
                  const FlashRowRange& rows, FlashWorkspace& ws) const;
};
struct DecodeAttentionKernel {
  template <class Arch>
  bool operator()(Arch, const float* q, const float* keys, const float* values, std::size_t rows,
                  std::size_t Tk, std::size_t d_k, std::size_t d_v, float scale,
                  const HeadMask& mask, float* out, std::uint8_t* fully_masked, float* scores_t,
                  float* lanes_scratch, float* key_norm2_max) const noexcept;
};
struct MatmulKernel {
  template <class Arch>
  void operator()(Arch, const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c,
                  std::size_t ldc, std::size_t m, std::size_t k, std::size_t n, bool accumulate,
                  float* scratch) const;
};
struct MatmulPanelsKernel {
  template <class Arch>
  void operator()(Arch, const float* a, std::size_t lda, const PanelMatrix& b, std::size_t j0,
                  std::size_t j1, float* c, std::size_t ldc, std::size_t m, bool accumulate) const;
};
struct PanelWidthKernel {
  template <class Arch>
  std::size_t operator()(Arch) const;
};
struct MatmulTransposedBKernel {
  template <class Arch>
  void operator()(Arch, const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c,
                  std::size_t ldc, std::size_t m, std::size_t k, std::size_t n,
                  float* scratch) const;
};
struct SoftmaxRowsKernel {
  template <class Arch>
  void operator()(Arch, const float* x, float* y, std::size_t rows, std::size_t n,
                  unsigned char* has_keys) const;
};
struct ArchNameKernel {
  template <class Arch>
  const char* operator()(Arch) const;
};

}  // namespace attnscope::kernels
