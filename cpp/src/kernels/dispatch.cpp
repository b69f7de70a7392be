// Run-time choice of the kernels' instruction set; see dispatch.hpp.
#include "kernels/dispatch.hpp"

#include <memory>
#include <new>

#include <xsimd/xsimd.hpp>

#include "kernels/matmul_transposed_b.hpp"

namespace attnscope::kernels {

namespace {

// Best first. ATTN_DISPATCH is set by CMake for portable native builds only,
// where kernels_avx2.cpp and kernels_avx512.cpp hold those instantiations.
#if defined(ATTN_DISPATCH)
using DispatchArchs = xsimd::arch_list<xsimd::avx512bw, xsimd::fma3<xsimd::avx2>, xsimd::sse2>;
#else
using DispatchArchs = xsimd::arch_list<xsimd::default_arch>;
#endif

// matmul_best packs B for products at least this tall and wide.
constexpr std::size_t kPackedMinRows = 16;
constexpr std::size_t kPackedMinColumns = 32;

// The dispatcher reads the CPU features once, when first used.
template <class Kernel>
auto& dispatcher() {
  static auto d = xsimd::dispatch<DispatchArchs>(Kernel{});
  return d;
}

}  // namespace

bool flash_in_range_best(const float* q, const float* packed_keys, std::size_t rows,
                         std::size_t keys, std::size_t d_k, float scale, const HeadMask& mask,
                         float* scratch) {
  return dispatcher<FlashInRangeKernel>()(q, packed_keys, rows, keys, d_k, scale, mask, scratch);
}

void flash_attention_rows_best(const float* q, const float* packed_keys, const float* packed_values,
                               std::size_t keys, std::size_t d_k, std::size_t d_v, float scale,
                               const HeadMask& mask, float* out, std::uint8_t* fully_masked,
                               const FlashRowRange& rows, FlashWorkspace& ws) {
  // Sized here: the dispatched call is noexcept and must not allocate.
  size_workspace(ws, d_k, d_v);
  dispatcher<FlashAttentionRowsKernel>()(q, packed_keys, packed_values, keys, d_k, d_v, scale, mask,
                                         out, fully_masked, rows, ws);
}

bool decode_attention_best(const float* q, const float* keys, const float* values, std::size_t rows,
                           std::size_t Tk, std::size_t d_k, std::size_t d_v, float scale,
                           const HeadMask& mask, float* out, std::uint8_t* fully_masked,
                           float* scores_t, float* lanes_scratch, float* key_norm2_max) noexcept {
  return dispatcher<DecodeAttentionKernel>()(q, keys, values, rows, Tk, d_k, d_v, scale, mask, out,
                                             fully_masked, scores_t, lanes_scratch, key_norm2_max);
}

void matmul_best(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c,
                 std::size_t ldc, std::size_t m, std::size_t k, std::size_t n, bool accumulate) {
  // Packing B pays once enough row blocks reuse it (measured in wasm:
  // docs/performance/journal.md). The scratch is left uninitialised
  // (the packing overwrites it); without memory for it, the product runs
  // unpacked.
  std::unique_ptr<float[]> scratch;
  if (m >= kPackedMinRows && n >= kPackedMinColumns) {
    scratch.reset(new (std::nothrow) float[matmul_packed_scratch(k, n)]);
  }
  dispatcher<MatmulKernel>()(a, lda, b, ldb, c, ldc, m, k, n, accumulate, scratch.get());
}

void matmul_panels_best(const float* a, std::size_t lda, const PanelMatrix& b, std::size_t j0,
                        std::size_t j1, float* c, std::size_t ldc, std::size_t m, bool accumulate) {
  dispatcher<MatmulPanelsKernel>()(a, lda, b, j0, j1, c, ldc, m, accumulate);
}

std::size_t matmul_panel_width_best() { return dispatcher<PanelWidthKernel>()(); }

void matmul_transposed_b_best(const float* a, std::size_t lda, const float* b, std::size_t ldb,
                              float* c, std::size_t ldc, std::size_t m, std::size_t k,
                              std::size_t n) {
  // Left uninitialised: the product writes every float of it before reading it.
  const std::unique_ptr<float[]> scratch(new float[matmul_transposed_b_scratch(m, k)]);
  dispatcher<MatmulTransposedBKernel>()(a, lda, b, ldb, c, ldc, m, k, n, scratch.get());
}

void softmax_rows_best(const float* x, float* y, std::size_t rows, std::size_t n,
                       unsigned char* has_keys) {
  dispatcher<SoftmaxRowsKernel>()(x, y, rows, n, has_keys);
}

const char* best_arch_name() { return dispatcher<ArchNameKernel>()(); }

}  // namespace attnscope::kernels
