// The traced path: every (B, H, Tq, Tk) intermediate is written out so it can
// be displayed — scores, scaled, masked (-inf where masked), weights.
#include <algorithm>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "attention_internal.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/mask_row.hpp"
#include "kernels/matmul.hpp"
#include "kernels/pack_keys.hpp"
#include "kernels/softmax_rows.hpp"
#include "parallel_kernels.hpp"

namespace attnscope::detail {

namespace {

/// Query rows [i0, i1) of one head (batch b, head h): their scores, scaled
/// and masked scores and weights into the trace, their output into out.
/// keys_t holds every key/value head's Kᵀ (d_k × Tk each). Every step goes
/// by rows (the products, the mask, the softmax) or by element (the
/// scaling), so a row's numbers do not depend on the block that holds it.
/// The fast path's micro-kernel and scaling: both paths compute the same
/// float scores and scaled scores (each score the same sum in the same
/// order, whatever the layout of the keys).
void traced_rows(const float* q, const float* keys_t, const float* v, const AttentionDims& dims,
                 float scale, const ScoreTerms& terms, std::size_t b, std::size_t h, std::size_t i0,
                 std::size_t i1, float* out, std::uint8_t* fully_masked,
                 const TraceBuffers& trace) {
  using Arch = xsimd::default_arch;
  const std::size_t Tq = dims.q_len, Tk = dims.k_len, d_k = dims.d_k, d_v = dims.d_v;
  const std::size_t head = b * dims.heads + h;
  const std::size_t kv_head = b * dims.kv_heads + h / dims.group();
  const std::size_t rows = i1 - i0, count = rows * Tk;
  const float* kh_t = keys_t + kv_head * d_k * Tk;
  const std::size_t first = head * Tq * Tk + i0 * Tk;
  float* scores = trace.scores + first;
  float* scaled = trace.scaled + first;
  float* masked = trace.masked + first;
  float* weights = trace.weights + first;
  // A key tile at a time, so that its packed copy stays in cache for every
  // query.
  for (std::size_t k0 = 0; k0 < Tk; k0 += kernels::kKeyTile) {
    kernels::matmul_best(q + (head * Tq + i0) * d_k, d_k, kh_t + k0, Tk, scores + k0, Tk, rows, d_k,
                         std::min(kernels::kKeyTile, Tk - k0));
  }
  std::copy(scores, scores + count, scaled);
  kernels::scale_row<Arch>(scaled, count, scale);
  std::copy(scaled, scaled + count, masked);
  const kernels::HeadMask hm = head_mask(terms, dims, b, h);
  for (std::size_t i = i0; i < i1; ++i) kernels::mask_row(masked + (i - i0) * Tk, i, 0, Tk, hm);
  std::vector<std::uint8_t> has_keys(rows);
  kernels::softmax_rows_best(masked, weights, rows, Tk, has_keys.data());
  // Fully masked rows have zero weights, so their output is zero too.
  kernels::matmul_best(weights, Tk, v + kv_head * Tk * d_v, d_v, out + (head * Tq + i0) * d_v, d_v,
                       rows, Tk, d_v);
  for (std::size_t i = 0; i < rows; ++i) fully_masked[head * Tq + i0 + i] = has_keys[i] ? 0 : 1;
}

}  // namespace

std::size_t attention_traced(const float* q, const float* k, const float* v,
                             const AttentionDims& dims, float scale, const ScoreTerms& terms,
                             float* out, std::uint8_t* fully_masked, const TraceBuffers& trace) {
  const std::size_t Tq = dims.q_len, Tk = dims.k_len, d_k = dims.d_k;
  const std::size_t heads = dims.batch * dims.heads, kv_heads = dims.batch * dims.kv_heads;
  // Each key/value head's keys transposed once, for every block of every
  // query head that reads them.
  std::vector<float> keys_t(kv_heads * d_k * Tk);
  parallel_ranges(kv_heads, 1, kv_heads * Tk * d_k, [&](std::size_t first, std::size_t last) {
    for (std::size_t kv = first; kv < last; ++kv) {
      kernels::transpose_keys(k + kv * Tk * d_k, Tk, d_k, keys_t.data() + kv * d_k * Tk);
    }
  });
  // Blocks of query rows of every head, on the pool.
  const auto head_rows = [&](std::size_t head, std::size_t i0, std::size_t i1) {
    traced_rows(q, keys_t.data(), v, dims, scale, terms, head / dims.heads, head % dims.heads, i0,
                i1, out, fully_masked, trace);
  };
  parallel_row_blocks(heads, Tq, heads * Tq * Tk * (d_k + dims.d_v), head_rows);
  return static_cast<std::size_t>(std::count(fully_masked, fully_masked + heads * Tq, 1));
}

}  // namespace attnscope::detail
