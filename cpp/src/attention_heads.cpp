// self_attention(): projections Q = X·W_Q (+ b_Q), K, V; split into heads;
// attention per head; concat; optional output projection W_O (+ b_O).
#include <algorithm>
#include <new>
#include <string>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "attention_internal.hpp"
#include "kernels/matmul.hpp"
#include "tensor_checks.hpp"

namespace attnscope {

namespace {

constexpr const char* kFn = "self_attention";

// weight must be (rows, ·) with a column count divisible by heads.
void check_projection(const Tensor& w, const char* name, std::size_t rows, std::size_t heads,
                      const char* width_name) {
  check_tensor(w, kFn, name);
  if (w.rank() != 2 || w.shape[0] != rows) {
    throw Error(std::string(kFn) + ": " + name + " has shape " + shape_to_string(w.shape) +
                ", expected (C=" + std::to_string(rows) + ", " + width_name +
                ") with C from x");
  }
  if (w.shape[1] % heads != 0) {
    throw Error(std::string(kFn) + ": " + name + " has shape " + shape_to_string(w.shape) +
                ", expected its width " + width_name + " to be a multiple of heads=" +
                std::to_string(heads));
  }
  check_finite(w, kFn, name);
}

void check_bias(const Tensor& bias, const char* name, std::size_t width,
                const char* width_name) {
  if (bias.empty()) return;
  check_tensor(bias, kFn, name);
  if (bias.rank() != 1 || bias.shape[0] != width) {
    throw Error(std::string(kFn) + ": " + name + " has shape " + shape_to_string(bias.shape) +
                ", expected (" + width_name + "=" + std::to_string(width) + ",)");
  }
  check_finite(bias, kFn, name);
}

// rows × width = x (rows × C) · w (C × width) (+ bias).
std::vector<float> project(const float* x, std::size_t rows, std::size_t C, const Tensor& w,
                           const Tensor& bias) {
  const std::size_t width = w.shape[1];
  std::vector<float> out = allocate_floats(rows * width, kFn);
  kernels::matmul<xsimd::default_arch>(x, C, w.data.data(), width, out.data(), width, rows, C,
                                       width);
  if (!bias.empty()) {
    for (std::size_t r = 0; r < rows; ++r) {
      float* row = out.data() + r * width;
      for (std::size_t c = 0; c < width; ++c) row[c] += bias.data[c];
    }
  }
  return out;
}

// (B, T, H·d) → (B, H, T, d): head h takes columns [h·d, (h+1)·d).
std::vector<float> split_heads(const std::vector<float>& merged, std::size_t B, std::size_t T,
                               std::size_t H, std::size_t d) {
  std::vector<float> split = allocate_floats(merged.size(), kFn);
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t h = 0; h < H; ++h) {
      for (std::size_t t = 0; t < T; ++t) {
        const float* src = merged.data() + ((b * T + t) * H + h) * d;
        std::copy(src, src + d, split.data() + ((b * H + h) * T + t) * d);
      }
    }
  }
  return split;
}

// (B, H, T, d) → (B, T, H·d), the inverse of split_heads.
std::vector<float> merge_heads(const std::vector<float>& split, std::size_t B, std::size_t T,
                               std::size_t H, std::size_t d) {
  std::vector<float> merged = allocate_floats(split.size(), kFn);
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t h = 0; h < H; ++h) {
      for (std::size_t t = 0; t < T; ++t) {
        const float* src = split.data() + ((b * H + h) * T + t) * d;
        std::copy(src, src + d, merged.data() + ((b * T + t) * H + h) * d);
      }
    }
  }
  return merged;
}

// Shapes drop the leading B when x was one sequence (T, C).
Shape result_shape(bool batched, std::size_t B, Shape rest) {
  if (batched) rest.insert(rest.begin(), B);
  return rest;
}

SelfAttentionResult self_attention_impl(const Tensor& x, const SelfAttentionWeights& weights,
                                        const AttentionOptions& options) {
  check_tensor(x, kFn, "x");
  if (x.rank() != 2 && x.rank() != 3) {
    throw Error(std::string(kFn) + ": x has shape " + shape_to_string(x.shape) +
                ", expected (B, T, C) or (T, C)");
  }
  check_finite(x, kFn, "x");
  const bool batched = x.rank() == 3;
  const std::size_t B = batched ? x.shape[0] : 1;
  const std::size_t T = x.shape[x.rank() - 2];
  const std::size_t C = x.shape[x.rank() - 1];
  const std::size_t H = weights.heads;
  if (H == 0) throw Error(std::string(kFn) + ": heads is 0, expected at least 1");

  check_projection(weights.wq, "wq", C, H, "H*d_k");
  check_projection(weights.wk, "wk", C, H, "H*d_k");
  if (weights.wk.shape != weights.wq.shape) {
    throw Error(std::string(kFn) + ": wk has shape " + shape_to_string(weights.wk.shape) +
                ", expected " + shape_to_string(weights.wq.shape) + " to match wq");
  }
  check_projection(weights.wv, "wv", C, H, "H*d_v");
  const std::size_t qk_width = weights.wq.shape[1];
  const std::size_t v_width = weights.wv.shape[1];
  check_bias(weights.bq, "bq", qk_width, "H*d_k");
  check_bias(weights.bk, "bk", qk_width, "H*d_k");
  check_bias(weights.bv, "bv", v_width, "H*d_v");
  std::size_t out_width = v_width;
  if (!weights.wo.empty()) {
    check_tensor(weights.wo, kFn, "wo");
    if (weights.wo.rank() != 2 || weights.wo.shape[0] != v_width) {
      throw Error(std::string(kFn) + ": wo has shape " + shape_to_string(weights.wo.shape) +
                  ", expected (H*d_v=" + std::to_string(v_width) + ", C_out) with H*d_v from wv");
    }
    check_finite(weights.wo, kFn, "wo");
    out_width = weights.wo.shape[1];
    check_bias(weights.bo, "bo", out_width, "C_out");
  } else if (!weights.bo.empty()) {
    throw Error(std::string(kFn) + ": bo has shape " + shape_to_string(weights.bo.shape) +
                " but wo is absent; an output bias needs wo");
  }

  detail::AttentionDims dims;
  dims.batch = B;
  dims.heads = H;
  dims.seq_len = T;
  dims.d_k = qk_width / H;
  dims.d_v = v_width / H;
  const float scale = detail::resolve_scale(options.scale, dims.d_k, kFn);
  detail::validate_mask(options.mask, dims, kFn);

  const std::size_t rows = B * T;
  checked_element_count({rows, std::max({qk_width, v_width, out_width})},
                        "self_attention: projections (B*T, width)");
  if (options.trace) {
    checked_element_count({B, H, T, T}, "self_attention: trace tensors (B, H, T, T)");
  }

  const float* xs = x.data.data();
  std::vector<float> q = split_heads(project(xs, rows, C, weights.wq, weights.bq), B, T, H, dims.d_k);
  std::vector<float> k = split_heads(project(xs, rows, C, weights.wk, weights.bk), B, T, H, dims.d_k);
  std::vector<float> v = split_heads(project(xs, rows, C, weights.wv, weights.bv), B, T, H, dims.d_v);

  detail::check_score_range(q.data(), k.data(), dims, scale, options.mask, kFn);

  SelfAttentionResult result;
  std::vector<float> heads_out = allocate_floats(B * H * T * dims.d_v, kFn);
  result.fully_masked.assign(B * H * T, 0);
  const Shape square = result_shape(batched, B, {H, T, T});
  if (options.trace) {
    SelfAttentionTrace trace;
    trace.scores = zeros_for(square, "self_attention: trace");
    trace.scaled = zeros_for(square, "self_attention: trace");
    trace.masked = zeros_for(square, "self_attention: trace");
    trace.weights = zeros_for(square, "self_attention: trace");
    const detail::TraceBuffers buffers{trace.scores.data.data(), trace.scaled.data.data(),
                                       trace.masked.data.data(), trace.weights.data.data()};
    result.fully_masked_count =
        detail::attention_traced(q.data(), k.data(), v.data(), dims, scale, options.mask,
                                 heads_out.data(), result.fully_masked.data(), buffers);
    result.trace = std::move(trace);
  } else {
    result.fully_masked_count =
        detail::attention_fast(q.data(), k.data(), v.data(), dims, scale, options.mask,
                               heads_out.data(), result.fully_masked.data());
  }

  std::vector<float> concat = merge_heads(heads_out, B, T, H, dims.d_v);
  if (weights.wo.empty()) {
    result.output = Tensor(result_shape(batched, B, {T, v_width}), concat);
  } else {
    result.output = Tensor(result_shape(batched, B, {T, out_width}),
                           project(concat.data(), rows, v_width, weights.wo, weights.bo));
  }
  detail::check_output_finite(result.output, kFn);

  if (result.trace) {
    SelfAttentionTrace& trace = *result.trace;
    trace.q = Tensor(result_shape(batched, B, {H, T, dims.d_k}), std::move(q));
    trace.k = Tensor(result_shape(batched, B, {H, T, dims.d_k}), std::move(k));
    trace.v = Tensor(result_shape(batched, B, {H, T, dims.d_v}), std::move(v));
    trace.head_outputs = Tensor(result_shape(batched, B, {H, T, dims.d_v}), std::move(heads_out));
    trace.concat = Tensor(result_shape(batched, B, {T, v_width}), std::move(concat));
  }
  return result;
}

}  // namespace

SelfAttentionResult self_attention(const Tensor& x, const SelfAttentionWeights& weights,
                                   const AttentionOptions& options) {
  try {
    return self_attention_impl(x, weights, options);
  } catch (const std::bad_alloc&) {
    throw ResourceError(std::string(kFn) + ": out of memory");
  }
}

}  // namespace attnscope
