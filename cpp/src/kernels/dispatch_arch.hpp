// Definitions of the dispatched functors, included only by kernels_<arch>.cpp,
// each compiled with its instruction set's flags; ATTN_INSTANTIATE_KERNELS(A)
// emits that TU's instantiations.
#pragma once

#include <xsimd/xsimd.hpp>

#include "kernels/decode_attention.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/flash_attention.hpp"
#include "kernels/matmul.hpp"
#include "kernels/matmul_panels.hpp"
#include "kernels/matmul_transposed_b.hpp"
#include "kernels/softmax_rows.hpp"

namespace attnscope::kernels {

template <class Arch>
bool FlashInRangeKernel::operator()(Arch, const float* q, const float* packed_keys,
                                    std::size_t rows, std::size_t keys, std::size_t d_k,
                                    float scale, const HeadMask& mask, float* scratch) const {
  return flash_in_range<Arch>(q, packed_keys, rows, keys, d_k, scale, mask, scratch);
}

template <class Arch>
void FlashAttentionRowsKernel::operator()(Arch, const float* q, const float* packed_keys,
                                          const float* packed_values, std::size_t keys,
                                          std::size_t d_k, std::size_t d_v, float scale,
                                          const HeadMask& mask, float* out,
                                          std::uint8_t* fully_masked, const FlashRowRange& rows,
                                          FlashWorkspace& ws) const {
  flash_attention_rows<Arch>(q, packed_keys, packed_values, keys, d_k, d_v, scale, mask, out,
                             fully_masked, rows, ws);
}

template <class Arch>
bool DecodeAttentionKernel::operator()(Arch, const float* q, const float* keys, const float* values,
                                       std::size_t rows, std::size_t Tk, std::size_t d_k,
                                       std::size_t d_v, float scale, const HeadMask& mask,
                                       float* out, std::uint8_t* fully_masked, float* scores_t,
                                       float* lanes_scratch, float* key_norm2_max) const noexcept {
  return decode_attention<Arch>(q, keys, values, rows, Tk, d_k, d_v, scale, mask, out, fully_masked,
                                scores_t, lanes_scratch, key_norm2_max);
}

template <class Arch>
void MatmulKernel::operator()(Arch, const float* a, std::size_t lda, const float* b,
                              std::size_t ldb, float* c, std::size_t ldc, std::size_t m,
                              std::size_t k, std::size_t n, bool accumulate, float* scratch) const {
  if (scratch) {
    matmul_packed<Arch>(a, lda, b, ldb, c, ldc, m, k, n, scratch, accumulate);
  } else {
    matmul<Arch>(a, lda, b, ldb, c, ldc, m, k, n, accumulate);
  }
}

template <class Arch>
void MatmulPanelsKernel::operator()(Arch, const float* a, std::size_t lda, const PanelMatrix& b,
                                    std::size_t j0, std::size_t j1, float* c, std::size_t ldc,
                                    std::size_t m, bool accumulate) const {
  matmul_panels<Arch>(a, lda, b, j0, j1, c, ldc, m, accumulate);
}

template <class Arch>
std::size_t PanelWidthKernel::operator()(Arch) const {
  return matmul_panel_width<Arch>();
}

template <class Arch>
void MatmulTransposedBKernel::operator()(Arch, const float* a, std::size_t lda, const float* b,
                                         std::size_t ldb, float* c, std::size_t ldc, std::size_t m,
                                         std::size_t k, std::size_t n, float* scratch) const {
  matmul_transposed_b<Arch>(a, lda, b, ldb, c, ldc, m, k, n, scratch);
}

template <class Arch>
void SoftmaxRowsKernel::operator()(Arch, const float* x, float* y, std::size_t rows, std::size_t n,
                                   unsigned char* has_keys) const {
  softmax_rows<Arch>(x, y, rows, n, has_keys);
}

template <class Arch>
const char* ArchNameKernel::operator()(Arch) const {
  return Arch::name();
}

}  // namespace attnscope::kernels

#define ATTN_INSTANTIATE_KERNELS(A)                                                              \
  template bool attnscope::kernels::FlashInRangeKernel::operator()<A>(                           \
      A, const float*, const float*, std::size_t, std::size_t, std::size_t, float,               \
      const attnscope::kernels::HeadMask&, float*) const;                                        \
  template void attnscope::kernels::FlashAttentionRowsKernel::operator()<A>(                     \
      A, const float*, const float*, const float*, std::size_t, std::size_t, std::size_t, float, \
      const attnscope::kernels::HeadMask&, float*, std::uint8_t*,                                \
      const attnscope::kernels::FlashRowRange&, attnscope::kernels::FlashWorkspace&) const;      \
  template bool attnscope::kernels::DecodeAttentionKernel::operator()<A>(                        \
      A, const float*, const float*, const float*, std::size_t, std::size_t, std::size_t,        \
      std::size_t, float, const attnscope::kernels::HeadMask&, float*, std::uint8_t*, float*,    \
      float*, float*) const;                                                                     \
  template void attnscope::kernels::MatmulKernel::operator()<A>(                                 \
      A, const float*, std::size_t, const float*, std::size_t, float*, std::size_t, std::size_t, \
      std::size_t, std::size_t, bool, float*) const;                                             \
  template void attnscope::kernels::MatmulPanelsKernel::operator()<A>(                           \
      A, const float*, std::size_t, const attnscope::kernels::PanelMatrix&, std::size_t,         \
      std::size_t, float*, std::size_t, std::size_t, bool) const;                                \
  template std::size_t attnscope::kernels::PanelWidthKernel::operator()<A>(A) const;             \
  template void attnscope::kernels::MatmulTransposedBKernel::operator()<A>(                      \
      A, const float*, std::size_t, const float*, std::size_t, float*, std::size_t, std::size_t, \
      std::size_t, std::size_t, float*) const;                                                   \
  template void attnscope::kernels::SoftmaxRowsKernel::operator()<A>(                            \
      A, const float*, float*, std::size_t, std::size_t, unsigned char*) const;                  \
  template const char* attnscope::kernels::ArchNameKernel::operator()<A>(A) const;
