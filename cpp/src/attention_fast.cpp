// The fast path: per (batch, key/value head), the tiled online-softmax
// kernel. Only O(T·d) scratch is allocated; no Tq×Tk buffer exists.
//
// Each key/value head is packed once, and the query heads that read it (its
// GQA group) go through the kernel together, stacked as G·Tq rows: every
// key tile then serves the whole group from cache. In a decode step
// (Tq = 1) that is what makes GQA cheaper than MHA: the keys and values are
// streamed from memory once per group, not once per query head.
#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <memory>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "attention_internal.hpp"
#include "attnscope/matmul_tile.hpp"
#include "kernels/decode_attention.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/flash_attention.hpp"
#include "kernels/pack_keys.hpp"
#include "kernels/scan.hpp"
#include "kernels/softmax_rows.hpp"
#include "thread_pool.hpp"

namespace attnscope::detail {

namespace {

// The flash kernel sums unnormalised weights (each below
// kMaxUnnormalisedWeight) times values, so a partial sum can reach
// 256·T·max|v| before the final division. For values that close to FLT_MAX,
// run on values scaled by an exact power of two instead.
int value_exponent_shift(const float* v, std::size_t n, std::size_t T) {
  const double growth = double(kernels::kMaxUnnormalisedWeight) * double(2 * T);
  if (double(kernels::max_abs(v, n)) * growth <= double(FLT_MAX)) return 0;
  return static_cast<int>(std::ceil(std::log2(growth)));
}

// A decode step: few rows per key/value head, read in place; the key/value
// heads are shared among the threads.
std::size_t attention_decode(const float* q, const float* k, const float* v,
                             const AttentionDims& dims, float scale, const ScoreTerms& terms,
                             float* out, std::uint8_t* fully_masked, bool* scores_finite,
                             float* key_norm2_max) {
  const std::size_t Tq = dims.q_len, Tk = dims.k_len, d_k = dims.d_k, d_v = dims.d_v;
  const std::size_t group = dims.group(), rows = group * Tq;
  const std::size_t kv_heads = dims.batch * dims.kv_heads;
  const std::size_t slots = std::min(parallel_slots(), kv_heads);
  // Scratch per thread, sized once per call: the scores of one group's rows
  // against every key, and its queries and outputs with the rows in the lanes.
  // The kernel writes every float of it before reading it: not zeroed first.
  const std::size_t scores_size = kernels::decode_scores_size(Tk);
  const std::size_t lanes_size = kernels::decode_lanes_size(d_k, d_v);
  const std::unique_ptr<float[]> scratch = allocate_uninitialised(
      {slots, scores_size + lanes_size}, "attention: scores of a decode step");
  std::vector<std::uint8_t> finite(kv_heads, 1);
  parallel_for(kv_heads, slots, [&](std::size_t kv_head, std::size_t slot) {
    const std::size_t b = kv_head / dims.kv_heads, kv = kv_head % dims.kv_heads;
    const std::size_t first_head = b * dims.heads + kv * group;
    finite[kv_head] = kernels::decode_attention_best(
        q + first_head * Tq * d_k, k + kv_head * Tk * d_k, v + kv_head * Tk * d_v, rows, Tk, d_k,
        d_v, scale, head_mask(terms, dims, b, kv * group, group), out + first_head * Tq * d_v,
        fully_masked + first_head * Tq, scratch.get() + slot * (scores_size + lanes_size),
        scratch.get() + slot * (scores_size + lanes_size) + scores_size,
        key_norm2_max ? key_norm2_max + kv_head : nullptr);
  });
  *scores_finite = std::count(finite.begin(), finite.end(), 0) == 0;
  return std::count(fully_masked, fully_masked + dims.batch * dims.heads * Tq, 1);
}

// Rows per task of the flash path: the whole group on one thread; with more,
// at least four tasks per thread, in whole 16-row tiles, and at most one
// 128-row block (the rows that share each key tile from cache,
// flash_attention.hpp). Small tasks even out uneven causal blocks and a
// thread that starts late or is slowed by another program: the last task to
// finish then holds the others up by at most one block.
std::size_t rows_per_task(std::size_t rows, std::size_t kv_heads, std::size_t slots) {
  if (slots <= 1) return rows;
  const std::size_t tasks_per_head =
      std::max<std::size_t>(1, (4 * slots + kv_heads - 1) / kv_heads);
  const auto round_up = [](std::size_t n, std::size_t to) { return (n + to - 1) / to * to; };
  const std::size_t chunk =
      round_up((rows + tasks_per_head - 1) / tasks_per_head, kernels::kQueryTile);
  return std::min({chunk, kernels::kQueryBlock, round_up(rows, kernels::kQueryTile)});
}

// Multiply-adds of a call (8 heads at T = 256, d = 64: a few milliseconds)
// from which the flash path decides the register tile's height if nothing
// has yet (attnscope/matmul_tile.hpp): the measurement, once, takes some tens
// of milliseconds, small beside the calls it speeds up, and the shorter calls
// of a page's first screen do not wait for it.
constexpr double kWorkWorthMeasuring = double(std::size_t{1} << 26);

}  // namespace

bool takes_flash_path(const AttentionDims& dims, bool with_log_sum_exp) {
  // The decode kernel keeps no log-sum-exp; the flash kernel takes few rows too.
  return dims.group() * dims.q_len > kernels::kDecodeMaxRows || with_log_sum_exp;
}

bool decode_reads_every_key(const AttentionDims& dims, const Mask& mask) {
  if (dims.group() * dims.q_len > kernels::kDecodeMaxRows) return false;
  if (!mask.additive.empty() || !mask.allowed.empty()) return false;
  for (std::size_t length : mask.lengths) {
    if (length < dims.k_len) return false;
  }
  // With causal masking the last query row still sees every key.
  return !mask.window || *mask.window >= static_cast<std::int64_t>(dims.k_len);
}

// Each key/value head is packed (its keys in tiles, its values in panels,
// every head into its own buffer, so they take as much memory as k and v)
// by the first of its tasks to run, which also scans its inputs and decides
// whether its tiles take the in-range exp pass. The rows are split into blocks
// of one head group; every row goes through the same kernel code whichever
// task holds it (tasks start on whole 16-row tiles and share the head's
// packing and in-range decision), so the output does not depend on the thread
// count. Packing in the tasks keeps the call to one parallel call: one
// wake-up of the pool, not two.
std::size_t attention_fast(const float* q, const float* k, const float* v,
                           const AttentionDims& dims, float scale, const ScoreTerms& terms,
                           float* out, std::uint8_t* fully_masked, bool* scores_finite,
                           float* log_sum_exp, float* key_norm2_max, InputScan* scan) {
  *scores_finite = true;
  using Arch = xsimd::default_arch;
  const std::size_t Tq = dims.q_len, Tk = dims.k_len, d_k = dims.d_k, d_v = dims.d_v;
  const std::size_t group = dims.group(), rows = group * Tq;
  if (!takes_flash_path(dims, log_sum_exp != nullptr)) {
    return attention_decode(q, k, v, dims, scale, terms, out, fully_masked, scores_finite,
                            key_norm2_max);
  }
  const std::size_t kv_heads = dims.batch * dims.kv_heads;
  const std::size_t keys_size = kernels::packed_keys_size(Tk, d_k, kernels::kKeyTile);
  const std::size_t values_size = kernels::packed_values_size(Tk, d_v);
  // Not zeroed: the packing writes every float of them, padding included.
  const std::unique_ptr<float[]> packed_keys =
      allocate_uninitialised({kv_heads * keys_size}, "attention: packed keys");
  const std::unique_ptr<float[]> packed_values =
      allocate_uninitialised({kv_heads * values_size}, "attention: packed values");
  const std::size_t slots = parallel_slots();
  const double work = double(kv_heads) * double(rows) * double(Tk) * double(d_k + d_v);
  if (work >= kWorkWorthMeasuring) measure_matmul_tile_rows_once();
  std::vector<kernels::FlashWorkspace> workspaces(slots);
  for (kernels::FlashWorkspace& ws : workspaces) kernels::size_workspace(ws, d_k, d_v);
  const auto mask_of = [&](std::size_t kv_head) {
    const std::size_t b = kv_head / dims.kv_heads, kv = kv_head % dims.kv_heads;
    return head_mask(terms, dims, b, kv * group, group);
  };
  const auto queries_of = [&](std::size_t kv_head) { return q + kv_head * rows * d_k; };

  struct PackedHead {
    const float* keys;
    const float* values;
    int shift;  // the values were scaled by 2^-shift
    bool in_range;
  };
  const auto pack_head = [&](std::size_t kv_head, float* head_keys, float* head_values,
                             std::size_t slot) {
    const float* values = v + kv_head * Tk * d_v;
    kernels::pack_value_panels(values, Tk, d_v, head_values);
    const int shift = value_exponent_shift(values, Tk * d_v, Tk);
    if (shift) kernels::scale_row<Arch>(head_values, values_size, std::ldexp(1.0f, -shift));
    kernels::pack_key_tiles(k + kv_head * Tk * d_k, Tk, d_k, kernels::kKeyTile, head_keys);
    const bool in_range =
        kernels::flash_in_range_best(queries_of(kv_head), head_keys, rows, Tk, d_k, scale,
                                     mask_of(kv_head), workspaces[slot].scores.data());
    return PackedHead{head_keys, head_values, shift, in_range};
  };
  enum : int { kUnpacked, kPacking, kPacked };
  std::vector<std::atomic<int>> state(kv_heads);  // value-initialised: kUnpacked
  std::vector<PackedHead> heads(kv_heads);
  // A slot's own copy of one head, made only when a task finds its head being
  // packed by another: waiting instead could wait for a thread the system has
  // queued behind this one on its CPU.
  std::vector<std::unique_ptr<float[]>> own(slots);
  const auto head_for = [&](std::size_t kv_head, std::size_t slot) {
    int seen = state[kv_head].load(std::memory_order_acquire);
    if (seen == kUnpacked &&
        state[kv_head].compare_exchange_strong(seen, kPacking, std::memory_order_acquire)) {
      if (scan) scan_head_inputs(q, k, v, dims, kv_head, *scan);
      heads[kv_head] = pack_head(kv_head, packed_keys.get() + kv_head * keys_size,
                                 packed_values.get() + kv_head * values_size, slot);
      state[kv_head].store(kPacked, std::memory_order_release);
      return heads[kv_head];
    }
    if (seen == kPacked) return heads[kv_head];
    if (!own[slot]) {
      own[slot] = allocate_uninitialised({keys_size + values_size},
                                         "attention: a task's own copy of a packed head");
    }
    return pack_head(kv_head, own[slot].get(), own[slot].get() + keys_size, slot);
  };

  // Tasks go last blocks first: under a causal mask those are the longest,
  // and starting them first keeps the threads' finishing times close.
  const std::size_t chunk = rows_per_task(rows, kv_heads, slots);
  const std::size_t chunks = (rows + chunk - 1) / chunk;
  parallel_for(kv_heads * chunks, slots, [&](std::size_t task, std::size_t slot) {
    const std::size_t kv_head = task % kv_heads;
    const PackedHead head = head_for(kv_head, slot);
    const std::size_t begin = (chunks - 1 - task / kv_heads) * chunk;
    const kernels::FlashRowRange range{begin, std::min(rows, begin + chunk), head.in_range};
    float* head_out = out + kv_head * rows * d_v;
    workspaces[slot].log_sum_exp = log_sum_exp ? log_sum_exp + kv_head * rows : nullptr;
    kernels::flash_attention_rows_best(queries_of(kv_head), head.keys, head.values, Tk, d_k, d_v,
                                       scale, mask_of(kv_head), head_out,
                                       fully_masked + kv_head * rows, range, workspaces[slot]);
    if (head.shift) {
      kernels::scale_row<Arch>(head_out + range.begin * d_v, (range.end - range.begin) * d_v,
                               std::ldexp(1.0f, head.shift));
    }
  });
  return std::count(fully_masked, fully_masked + kv_heads * rows, 1);
}

}  // namespace attnscope::detail
