// attention(): validation of q, k, v and the options, then the traced or
// the fast path. Checks shared with self_attention are in attention_checks.cpp.
#include <cmath>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "allocate.hpp"
#include "attention_internal.hpp"
#include "checks.hpp"

namespace attnscope {

float Scale::factor_for(std::size_t d_k) const {
  switch (mode) {
    case Mode::InvSqrtDk:
      return static_cast<float>(1.0 / std::sqrt(static_cast<double>(d_k)));
    case Mode::None:
      return 1.0f;
    case Mode::Custom:
      return factor;
  }
  return 1.0f;
}

namespace {

using detail::check_finite;
using detail::check_tensor;

constexpr const char* kFn = "attention";

// "(B=2, Hkv, Tk, d_k=4)": the leading dims named for a tensor of `rank`,
// with the values of those that are fixed given (0 = free).
std::string expected_shape(std::size_t rank, const char* const* names, const std::size_t* values) {
  std::string s = "(";
  const std::size_t skip = 4 - rank;  // rank 3 has no B, rank 2 neither B nor H
  for (std::size_t i = skip; i < 4; ++i) {
    if (i > skip) s += ", ";
    s += names[i];
    if (values[i]) s += "=" + std::to_string(values[i]);
  }
  return s + ")";
}

// k is (B, Hkv, Tk, d_k) with q's B and d_k; v (B, Hkv, Tk, d_v) with k's
// B, Hkv and Tk. Also checks that H is a multiple of Hkv and Tq <= Tk.
void check_key_value_shapes(const TensorView& q, const TensorView& k, const TensorView& v) {
  const std::size_t rank = q.rank();
  const std::size_t skip = 4 - rank;
  auto dim = [&](const TensorView& t, std::size_t i) { return i < skip ? 1 : t.shape[i - skip]; };
  static const char* const kNames[] = {"B", "Hkv", "Tk", "d_k"};
  static const char* const kValueNames[] = {"B", "Hkv", "Tk", "d_v"};
  bool k_ok = k.rank() == rank && dim(k, 0) == dim(q, 0) && dim(k, 3) == dim(q, 3);
  if (!k_ok) {
    const std::size_t fixed[] = {dim(q, 0), 0, 0, dim(q, 3)};
    throw Error(std::string(kFn) + ": k has shape " + shape_to_string(k.shape) + ", expected " +
                expected_shape(rank, kNames, fixed) + " with B and d_k from q");
  }
  if (dim(q, 1) % dim(k, 1) != 0) {
    throw Error(std::string(kFn) + ": q has H=" + std::to_string(dim(q, 1)) +
                " heads and k has Hkv=" + std::to_string(dim(k, 1)) +
                ", expected H to be a multiple of Hkv");
  }
  if (dim(q, 2) > dim(k, 2)) {
    throw Error(std::string(kFn) + ": q has Tq=" + std::to_string(dim(q, 2)) +
                " queries and k has Tk=" + std::to_string(dim(k, 2)) + " keys, expected Tq <= Tk");
  }
  const bool v_ok = v.rank() == rank && dim(v, 0) == dim(k, 0) && dim(v, 1) == dim(k, 1) &&
                    dim(v, 2) == dim(k, 2);
  if (!v_ok) {
    const std::size_t fixed[] = {dim(k, 0), dim(k, 1), dim(k, 2), 0};
    throw Error(std::string(kFn) + ": v has shape " + shape_to_string(v.shape) + ", expected " +
                expected_shape(rank, kValueNames, fixed) + " to match k");
  }
}

// q's rank, and k's and v's shapes against it.
void check_shapes(const TensorView& q, const TensorView& k, const TensorView& v) {
  check_tensor(q, kFn, "q");
  if (q.rank() < 2 || q.rank() > 4) {
    throw Error(std::string(kFn) + ": q has shape " + shape_to_string(q.shape) +
                ", expected (B, H, Tq, d_k), (H, Tq, d_k) or (Tq, d_k)");
  }
  check_tensor(k, kFn, "k");
  check_tensor(v, kFn, "v");
  check_key_value_shapes(q, k, v);
}

// The values of q, k and v, in that order: the first error a call with
// several bad inputs gets.
void check_inputs_finite(const TensorView& q, const TensorView& k, const TensorView& v) {
  check_finite(q, kFn, "q");
  check_finite(k, kFn, "k");
  check_finite(v, kFn, "v");
}

AttentionResult run_checked(const TensorView& q, const TensorView& k, const TensorView& v,
                            const AttentionOptions& options, bool with_log_sum_exp,
                            const detail::AttentionDims& dims,
                            const detail::DeferredChecks* deferred);

AttentionResult attention_impl(const TensorView& q, const TensorView& k, const TensorView& v,
                               const AttentionOptions& options, bool with_log_sum_exp = false) {
  check_shapes(q, k, v);
  const detail::AttentionDims dims = detail::attention_dims(q, k, v);
  const bool fast = !options.trace;
  const bool defer_checks =
      fast && !with_log_sum_exp && detail::decode_reads_every_key(dims, options.mask);
  // The flash path scans q, k and v as its packing step reads them, on the
  // pool's threads (detail::InputScan); with rope it reads them rotated.
  const bool scan_inputs = fast && !defer_checks && !options.rope.enabled &&
                           detail::takes_flash_path(dims, with_log_sum_exp);
  if (!scan_inputs) {
    check_finite(q, kFn, "q");
    if (!defer_checks) {
      check_finite(k, kFn, "k");
      check_finite(v, kFn, "v");
    }
    const detail::DeferredChecks deferred{k, v};
    return run_checked(q, k, v, options, with_log_sum_exp, dims,
                       defer_checks ? &deferred : nullptr);
  }
  detail::InputScan scan(dims);
  const detail::DeferredChecks deferred{k, v, q, &scan};
  try {
    return run_checked(q, k, v, options, with_log_sum_exp, dims, &deferred);
  } catch (...) {
    // Whatever failed before the scan was read (a mask, the scale, memory)
    // comes after the inputs' values, as when they are checked first.
    check_inputs_finite(q, k, v);
    throw;
  }
}

AttentionResult run_checked(const TensorView& q, const TensorView& k, const TensorView& v,
                            const AttentionOptions& options, bool with_log_sum_exp,
                            const detail::AttentionDims& dims,
                            const detail::DeferredChecks* deferred) {
  const float scale = detail::resolve_scale(options.scale, dims.d_k, kFn);

  const Shape prefix(q.shape.begin(), q.shape.end() - 2);
  Shape out_shape = prefix;
  out_shape.push_back(dims.q_len);
  Shape square_shape = out_shape;
  out_shape.push_back(dims.d_v);
  square_shape.push_back(dims.k_len);

  AttentionResult result;
  result.output = detail::allocate_zeros(out_shape, "attention: output");
  result.fully_masked.assign(dims.batch * dims.heads * dims.q_len, 0);
  if (with_log_sum_exp) {
    result.log_sum_exp =
        detail::allocate_zeros(Shape(q.shape.begin(), q.shape.end() - 1), "attention: log-sum-exp");
  }
  std::optional<AttentionTrace> trace;
  if (options.trace) trace.emplace();
  result.fully_masked_count = detail::run_attention(
      q.data, k.data, v.data, dims, options, scale, square_shape, q.shape, k.shape,
      result.output.data.data(), result.fully_masked.data(), trace ? &*trace : nullptr, kFn,
      deferred, with_log_sum_exp ? result.log_sum_exp.data.data() : nullptr);
  result.trace = std::move(trace);
  detail::check_result_finite(result.output, kFn, "the output");
  return result;
}

}  // namespace

namespace detail {

RotatedQueriesKeys check_attention_inputs(const TensorView& q, const TensorView& k,
                                          const TensorView& v, const AttentionOptions& options) {
  check_shapes(q, k, v);
  check_inputs_finite(q, k, v);
  const AttentionDims dims = attention_dims(q, k, v);
  const float scale = resolve_scale(options.scale, dims.d_k, kFn);
  const ScoreTerms terms = checked_score_terms(options, dims, kFn);
  if (!options.rope.enabled) {
    check_score_range(q.data, k.data, dims, scale, terms, kFn);
    return {};
  }
  // The scores are those of q and k rotated.
  RotatedQueriesKeys rotated = rotate_queries_keys(q.data, k.data, dims, options.rope.base, kFn);
  check_score_range(rotated.q.data(), rotated.k.data(), dims, scale, terms, kFn);
  return rotated;
}

AttentionDims attention_dims(const TensorView& q, const TensorView& k, const TensorView& v) {
  const std::size_t rank = q.rank();
  AttentionDims dims;
  dims.batch = rank == 4 ? q.shape[0] : 1;
  dims.heads = rank >= 3 ? q.shape[rank - 3] : 1;
  dims.kv_heads = rank >= 3 ? k.shape[rank - 3] : 1;
  dims.q_len = q.shape[rank - 2];
  dims.k_len = k.shape[rank - 2];
  dims.d_k = q.shape[rank - 1];
  dims.d_v = v.shape[rank - 1];
  return dims;
}

}  // namespace detail

AttentionResult attention(const Tensor& q, const Tensor& k, const Tensor& v,
                          const AttentionOptions& options) {
  return attention(TensorView(q), TensorView(k), TensorView(v), options);
}

AttentionResult attention(const TensorView& q, const TensorView& k, const TensorView& v,
                          const AttentionOptions& options) {
  try {
    return attention_impl(q, k, v, options);
  } catch (const std::bad_alloc&) {
    throw ResourceError(std::string(kFn) + ": out of memory");
  }
}

AttentionResult attention_with_log_sum_exp(const TensorView& q, const TensorView& k,
                                           const TensorView& v, const AttentionOptions& options) {
  if (options.trace) {
    throw Error(std::string(kFn) +
                ": the log-sum-exp comes from the fast path, expected options.trace = false");
  }
  try {
    return attention_impl(q, k, v, options, /*with_log_sum_exp=*/true);
  } catch (const std::bad_alloc&) {
    throw ResourceError(std::string(kFn) + ": out of memory");
  }
}

}  // namespace attnscope
