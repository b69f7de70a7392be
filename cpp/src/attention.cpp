// attention(): validation of q, k, v and the options, then the traced or
// the fast path. Checks shared with self_attention are in attention_checks.cpp.
#include <cmath>
#include <new>
#include <string>

#include "attention_internal.hpp"
#include "tensor_checks.hpp"

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

constexpr const char* kFn = "attention";

// "(B=2, H=1, T=3, d_k=4)" for the leading dims of q and the given last dim.
std::string expected_like_q(const Shape& q_shape, const std::string& last) {
  static const char* const kNames4[] = {"B", "H", "T"};
  static const char* const kNames3[] = {"H", "T"};
  static const char* const kNames2[] = {"T"};
  const char* const* names =
      q_shape.size() == 4 ? kNames4 : (q_shape.size() == 3 ? kNames3 : kNames2);
  std::string s = "(";
  for (std::size_t i = 0; i + 1 < q_shape.size(); ++i) {
    s += std::string(names[i]) + "=" + std::to_string(q_shape[i]) + ", ";
  }
  return s + last + ")";
}

void check_like_q(const TensorView& t, const char* name, const TensorView& q, bool same_last) {
  bool ok = t.rank() == q.rank();
  for (std::size_t i = 0; ok && i + 1 < q.rank(); ++i) ok = t.shape[i] == q.shape[i];
  if (ok && same_last) ok = t.shape.back() == q.shape.back();
  if (!ok) {
    const std::string last =
        same_last ? "d_k=" + std::to_string(q.shape.back()) : std::string("d_v");
    throw Error(std::string(kFn) + ": " + name + " has shape " + shape_to_string(t.shape) +
                ", expected " + expected_like_q(q.shape, last) + " to match q");
  }
}

AttentionResult attention_impl(const TensorView& q, const TensorView& k, const TensorView& v,
                               const AttentionOptions& options) {
  check_tensor(q, kFn, "q");
  if (q.rank() < 2 || q.rank() > 4) {
    throw Error(std::string(kFn) + ": q has shape " + shape_to_string(q.shape) +
                ", expected (B, H, T, d_k), (H, T, d_k) or (T, d_k)");
  }
  check_tensor(k, kFn, "k");
  check_like_q(k, "k", q, /*same_last=*/true);
  check_tensor(v, kFn, "v");
  check_like_q(v, "v", q, /*same_last=*/false);
  check_finite(q, kFn, "q");
  check_finite(k, kFn, "k");
  check_finite(v, kFn, "v");

  const std::size_t rank = q.rank();
  detail::AttentionDims dims;
  dims.batch = rank == 4 ? q.shape[0] : 1;
  dims.heads = rank >= 3 ? q.shape[rank - 3] : 1;
  dims.seq_len = q.shape[rank - 2];
  dims.d_k = q.shape[rank - 1];
  dims.d_v = v.shape[rank - 1];
  const float scale = detail::resolve_scale(options.scale, dims.d_k, kFn);
  detail::validate_mask(options.mask, dims, kFn);
  detail::check_score_range(q.data, k.data, dims, scale, options.mask, kFn);

  const Shape prefix(q.shape.begin(), q.shape.end() - 2);
  Shape out_shape = prefix;
  out_shape.push_back(dims.seq_len);
  out_shape.push_back(dims.d_v);
  Shape square_shape = prefix;
  square_shape.push_back(dims.seq_len);
  square_shape.push_back(dims.seq_len);

  if (options.trace) checked_element_count(square_shape, "attention: trace tensors (B, H, T, T)");

  AttentionResult result;
  result.output = zeros_for(out_shape, "attention: output");
  result.fully_masked.assign(dims.batch * dims.heads * dims.seq_len, 0);
  if (options.trace) {
    AttentionTrace trace;
    const detail::TraceBuffers buffers =
        detail::allocate_square_tensors(trace, square_shape, "attention: trace");
    result.fully_masked_count = detail::attention_traced(
        q.data, k.data, v.data, dims, scale, options.mask, result.output.data.data(),
        result.fully_masked.data(), buffers);
    result.trace = std::move(trace);
  } else {
    result.fully_masked_count = detail::attention_fast(
        q.data, k.data, v.data, dims, scale, options.mask, result.output.data.data(),
        result.fully_masked.data());
  }
  detail::check_output_finite(result.output, kFn);
  return result;
}

}  // namespace

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

}  // namespace attnscope
