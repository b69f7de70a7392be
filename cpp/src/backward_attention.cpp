// attention_backward(): checks, the forward it needs (traced: the weights;
// flash: the output), then the traced or the tiled backward.
#include <new>
#include <string>
#include <vector>

#include "attention_internal.hpp"
#include "attnscope/backward.hpp"
#include "backward_attention_internal.hpp"
#include "checks.hpp"

namespace attnscope {

namespace {

constexpr const char* kFn = "attention_backward";

// The forward's own messages, under this function's name. The flash form
// also keeps each query's log-sum-exp from it.
AttentionResult forward_for_backward(const TensorView& q, const TensorView& k, const TensorView& v,
                                     const AttentionOptions& options,
                                     std::vector<float>& log_sum_exp) {
  const std::string forward_name = "attention:";
  try {
    if (!options.trace) return detail::attention_with_log_sum_exp(q, k, v, options, log_sum_exp);
    return attention(q, k, v, options);
  } catch (const ResourceError&) {
    throw;
  } catch (const Error& e) {
    const std::string message = e.what();
    if (message.rfind(forward_name, 0) != 0) throw;
    throw Error(std::string(kFn) + ":" + message.substr(forward_name.size()));
  }
}

/// Rotated rows (rope): `heads` heads of `rows` rows of width d, row t at
/// position first + t, as the forward rotated them.
std::vector<float> rotated(const float* x, std::size_t heads, std::size_t rows, std::size_t first,
                           std::size_t d, const Rope& rope) {
  return detail::rotate_rope(x, heads, rows, first, d, rope.base, kFn);
}

/// x_rot = R(θ)·x, so dL/dx = R(θ)ᵀ·dL/dx_rot = R(−θ)·dL/dx_rot. R(−θ) =
/// N·R(θ)·N with N negating the second half of each row (each pair (a, b)
/// becomes (a, −b)), which lets the forward's own rotation, and its angle
/// table, turn the gradient back.
void rotate_back(Tensor& grad, std::size_t heads, std::size_t rows, std::size_t first,
                 std::size_t d, const Rope& rope) {
  const std::size_t half = d / 2;
  auto negate_second_halves = [&](std::vector<float>& x) {
    for (std::size_t at = 0; at < x.size(); at += d) {
      for (std::size_t p = half; p < d; ++p) x[at + p] = -x[at + p];
    }
  };
  negate_second_halves(grad.data);
  grad.data = rotated(grad.data.data(), heads, rows, first, d, rope);
  negate_second_halves(grad.data);
}

AttentionGradients backward_impl(const TensorView& q, const TensorView& k, const TensorView& v,
                                 const TensorView& d_output, const AttentionOptions& options) {
  // The forward checks q, k, v and every option, and gives what the
  // backward needs: the weights (traced) or the output (flash).
  std::vector<float> log_sum_exp;
  const AttentionResult forward = forward_for_backward(q, k, v, options, log_sum_exp);
  detail::check_tensor(d_output, kFn, "d_output");
  if (d_output.shape != forward.output.shape) {
    throw Error(std::string(kFn) + ": d_output has shape " + shape_to_string(d_output.shape) +
                ", expected " + shape_to_string(forward.output.shape) + " (the output's shape)");
  }
  detail::check_finite(d_output, kFn, "d_output");

  const detail::AttentionDims dims = detail::attention_dims(q, k, v);
  const float scale = options.scale.factor_for(dims.d_k);
  // With rope the backward runs on q and k rotated as the forward used them.
  const Rope& rope = options.rope;
  std::vector<float> q_rotated, k_rotated;
  const float* queries = q.data;
  const float* keys = k.data;
  if (rope.enabled && options.trace) {
    // The traced forward keeps q and k as it rotated them.
    queries = forward.trace->q_rotated.data.data();
    keys = forward.trace->k_rotated.data.data();
  } else if (rope.enabled) {
    q_rotated =
        rotated(q.data, dims.batch * dims.heads, dims.q_len, dims.query_offset(), dims.d_k, rope);
    k_rotated = rotated(k.data, dims.batch * dims.kv_heads, dims.k_len, 0, dims.d_k, rope);
    queries = q_rotated.data();
    keys = k_rotated.data();
  }
  AttentionGradients g;
  g.dq = detail::allocate_zeros(q.shape, "attention_backward: dq");
  g.dk = detail::allocate_zeros(k.shape, "attention_backward: dk");
  g.dv = detail::allocate_zeros(v.shape, "attention_backward: dv");
  const detail::AttentionGradientBuffers out{g.dq.data.data(), g.dk.data.data(), g.dv.data.data()};
  if (options.trace) {
    detail::attention_backward_traced(queries, keys, v.data, d_output.data,
                                      forward.trace->weights.data.data(), dims, scale, out);
  } else {
    detail::ScoreTerms terms;
    terms.mask = &options.mask;
    terms.bias = &options.bias.values;
    if (options.bias.alibi) terms.alibi_slopes = detail::alibi_slopes(dims.heads);
    detail::attention_backward_flash(queries, keys, v.data, forward.output.data.data(),
                                     log_sum_exp.data(), d_output.data, dims, scale, terms, out);
  }
  if (rope.enabled) {
    rotate_back(g.dq, dims.batch * dims.heads, dims.q_len, dims.query_offset(), dims.d_k, rope);
    rotate_back(g.dk, dims.batch * dims.kv_heads, dims.k_len, 0, dims.d_k, rope);
  }
  detail::check_result_finite(g.dq, kFn, "dq");
  detail::check_result_finite(g.dk, kFn, "dk");
  detail::check_result_finite(g.dv, kFn, "dv");
  return g;
}

}  // namespace

AttentionGradients attention_backward(const TensorView& q, const TensorView& k, const TensorView& v,
                                      const TensorView& d_output, const AttentionOptions& options) {
  try {
    return backward_impl(q, k, v, d_output, options);
  } catch (const std::bad_alloc&) {
    throw ResourceError(std::string(kFn) + ": out of memory");
  }
}

}  // namespace attnscope
