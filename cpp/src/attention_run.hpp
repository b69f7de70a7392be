// run_attention (declared in attention_internal.hpp): the steps attention()
// and self_attention() share after their own shape checks.
#pragma once

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "attention_internal.hpp"
#include "kernels/scan.hpp"

namespace attnscope::detail {

template <class Trace>
std::size_t run_attention(const float* q, const float* k, const float* v, const AttentionDims& dims,
                          const AttentionOptions& options, float scale, const Shape& square,
                          const Shape& q_shape, const Shape& k_shape, float* out,
                          std::uint8_t* fully_masked, Trace* trace, const char* fn,
                          const DeferredChecks* deferred, float* log_sum_exp) {
  const ScoreTerms terms = checked_score_terms(options, dims, fn);

  RotatedQueriesKeys rotated;
  if (options.rope.enabled) {
    rotated = rotate_queries_keys(q, k, dims, options.rope.base, fn);
    q = rotated.q.data();
    k = rotated.k.data();
  }
  // The score bound, from the keys' norms taken by the decode kernel when
  // given. It is the same whichever path runs, so both accept the same
  // inputs (q and k rotated alike); with deferred checks, an infinite key
  // makes it fail, and is then named as such.
  const auto check_range = [&](const float* key_norm2_max) {
    try {
      check_score_range(q, k, dims, scale, terms, fn, key_norm2_max);
    } catch (const Error&) {
      if (deferred) check_finite(deferred->k, fn, "k");
      throw;
    }
  };
  if (!deferred || trace) check_range(nullptr);

  if (!trace) {
    bool scores_finite = true;
    InputScan* const scan = deferred ? deferred->scan : nullptr;
    // Deferred: the decode kernel takes the keys' norms as it reads them, and
    // the bound is checked after it (+inf: not taken, recomputed from k).
    std::vector<float> key_norm2_max;
    if (deferred && !scan) {
      key_norm2_max.assign(dims.batch * dims.kv_heads, std::numeric_limits<float>::infinity());
    }
    const std::size_t count =
        attention_fast(q, k, v, dims, scale, terms, out, fully_masked, &scores_finite, log_sum_exp,
                       deferred && !scan ? key_norm2_max.data() : nullptr, scan);
    if (scan) {
      // The values first, then the bound, as checked before a call.
      if (std::count(scan->finite.begin(), scan->finite.end(), 0) > 0) {
        check_finite(deferred->q, fn, "q");
        check_finite(deferred->k, fn, "k");
        check_finite(deferred->v, fn, "v");
      }
      check_score_range(q, k, dims, scale, terms, fn, scan->key_norm2_max.data(),
                        scan->query_norm2_max.data());
      return count;
    }
    if (deferred) check_range(key_norm2_max.data());
    const std::size_t out_size = dims.batch * dims.heads * dims.q_len * dims.d_v;
    if (deferred && (!scores_finite || count > 0 || !kernels::all_finite(out, out_size))) {
      // Something went wrong: the checks skipped before name its cause.
      check_finite(deferred->k, fn, "k");
      check_finite(deferred->v, fn, "v");
    }
    return count;
  }
  checked_element_count(square, (std::string(fn) + ": trace tensors (B, H, Tq, Tk)").c_str());
  const std::string what = std::string(fn) + ": trace";
  const TraceBuffers buffers = allocate_square_tensors(*trace, square, what.c_str());
  if (options.bias.any()) {
    trace->bias = allocate_zeros(square, what.c_str());
    fill_bias(terms, dims, trace->bias.data.data());
  }
  const std::size_t count =
      attention_traced(q, k, v, dims, scale, terms, out, fully_masked, buffers);
  if (options.rope.enabled) {
    trace->q_rotated = Tensor(q_shape, std::move(rotated.q));
    trace->k_rotated = Tensor(k_shape, std::move(rotated.k));
  }
  return count;
}

}  // namespace attnscope::detail
