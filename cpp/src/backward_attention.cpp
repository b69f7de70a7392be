// attention_backward(): checks, the forward it needs (traced: the weights;
// flash: the output and log-sum-exp, unless given), then the traced or the
// tiled backward.
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "attention_internal.hpp"
#include "attnscope/backward.hpp"
#include "backward_attention_internal.hpp"
#include "checks.hpp"

namespace attnscope {

namespace {

constexpr const char* kFn = "attention_backward";

// Runs `body` (the forward, or its checks), giving its messages under this
// function's name.
template <class Body>
auto as_backward(Body&& body) -> decltype(body()) {
  const std::string forward_name = "attention:";
  try {
    return body();
  } catch (const ResourceError&) {
    throw;
  } catch (const Error& e) {
    const std::string message = e.what();
    if (message.rfind(forward_name, 0) != 0) throw;
    throw Error(std::string(kFn) + ":" + message.substr(forward_name.size()));
  }
}

void check_shape(const TensorView& t, const Shape& expected, const char* name, const char* what) {
  if (t.shape != expected) {
    throw Error(std::string(kFn) + ": " + name + " has shape " + shape_to_string(t.shape) +
                ", expected " + shape_to_string(expected) + " (" + what + ")");
  }
}

/// A saved forward's output and log-sum-exp, against the shapes of q and v.
void check_saved(const SavedForward& saved, const Shape& output_shape, const Shape& lse_shape) {
  detail::check_tensor(saved.output, kFn, "output");
  check_shape(saved.output, output_shape, "output", "attention()'s output shape");
  detail::check_finite(saved.output, kFn, "output");
  detail::check_tensor(saved.log_sum_exp, kFn, "log_sum_exp");
  check_shape(saved.log_sum_exp, lse_shape, "log_sum_exp", "q's shape without d_k");
  detail::check_finite(saved.log_sum_exp, kFn, "log_sum_exp", /*allow_negative_inf=*/true);
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
                                 const TensorView& d_output, const AttentionOptions& options,
                                 const SavedForward* saved) {
  // The forward (or, given its results, its checks) checks q, k, v and
  // every option; it gives what the backward needs: the weights (traced) or
  // the output and log-sum-exp (flash).
  std::optional<AttentionResult> forward;
  TensorView output, log_sum_exp;
  // With rope the backward runs on q and k rotated as the forward used them:
  // kept by the traced forward, or by the checks of a saved one.
  detail::RotatedQueriesKeys rotated_by_checks;
  if (saved) {
    if (options.trace) {
      throw Error(std::string(kFn) +
                  ": output and log_sum_exp are the fast path's, expected options.trace = false");
    }
    rotated_by_checks =
        as_backward([&] { return detail::check_attention_inputs(q, k, v, options); });
    const Shape lse_shape(q.shape.begin(), q.shape.end() - 1);
    Shape output_shape = lse_shape;
    output_shape.push_back(v.shape.back());
    check_saved(*saved, output_shape, lse_shape);
    output = saved->output;
    log_sum_exp = saved->log_sum_exp;
  } else {
    forward = as_backward([&] {
      return options.trace ? attention(q, k, v, options)
                           : attention_with_log_sum_exp(q, k, v, options);
    });
    output = forward->output;
    log_sum_exp = forward->log_sum_exp;
  }
  detail::check_tensor(d_output, kFn, "d_output");
  check_shape(d_output, output.shape, "d_output", "the output's shape");
  detail::check_finite(d_output, kFn, "d_output");

  const detail::AttentionDims dims = detail::attention_dims(q, k, v);
  const float scale = options.scale.factor_for(dims.d_k);
  const Rope& rope = options.rope;
  const float* queries = q.data;
  const float* keys = k.data;
  if (rope.enabled && options.trace) {
    queries = forward->trace->q_rotated.data.data();
    keys = forward->trace->k_rotated.data.data();
  } else if (rope.enabled) {
    if (!saved) {  // the flash forward does not keep them
      rotated_by_checks = detail::rotate_queries_keys(q.data, k.data, dims, rope.base, kFn);
    }
    queries = rotated_by_checks.q.data();
    keys = rotated_by_checks.k.data();
  }
  AttentionGradients g;
  g.dq = detail::allocate_zeros(q.shape, "attention_backward: dq");
  g.dk = detail::allocate_zeros(k.shape, "attention_backward: dk");
  g.dv = detail::allocate_zeros(v.shape, "attention_backward: dv");
  const detail::AttentionGradientBuffers out{g.dq.data.data(), g.dk.data.data(), g.dv.data.data()};
  if (options.trace) {
    detail::attention_backward_traced(queries, keys, v.data, d_output.data,
                                      forward->trace->weights.data.data(), dims, scale, out);
  } else {
    detail::attention_backward_flash(queries, keys, v.data, output.data, log_sum_exp.data,
                                     d_output.data, dims, scale, detail::score_terms(options, dims),
                                     out);
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
    return backward_impl(q, k, v, d_output, options, nullptr);
  } catch (const std::bad_alloc&) {
    throw ResourceError(std::string(kFn) + ": out of memory");
  }
}

AttentionGradients attention_backward(const TensorView& q, const TensorView& k, const TensorView& v,
                                      const TensorView& d_output, const SavedForward& saved,
                                      const AttentionOptions& options) {
  try {
    return backward_impl(q, k, v, d_output, options, &saved);
  } catch (const std::bad_alloc&) {
    throw ResourceError(std::string(kFn) + ": out of memory");
  }
}

}  // namespace attnscope
