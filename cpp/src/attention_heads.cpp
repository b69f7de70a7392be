// self_attention(): projections Q = X·W_Q (+ b_Q), K, V, one head at a time;
// attention per head; concat; optional output projection W_O (+ b_O).
#include <algorithm>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "allocate.hpp"
#include "attention_internal.hpp"
#include "checks.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/matmul.hpp"
#include "parallel_kernels.hpp"

namespace attnscope {

namespace {

using detail::check_finite;
using detail::check_optional_vector;
using detail::check_tensor;

constexpr const char* kFn = "self_attention";
// Biases are written "(H*d_k=6,)" in this function's messages.
constexpr auto kBiasShape = detail::VectorShapeText::Tuple;

// weight must be (rows, ·) with a column count divisible by heads.
void check_projection(const Tensor& w, const char* name, std::size_t rows, std::size_t heads,
                      const char* width_name) {
  check_tensor(w, kFn, name);
  if (w.rank() != 2 || w.shape[0] != rows) {
    throw Error(std::string(kFn) + ": " + name + " has shape " + shape_to_string(w.shape) +
                ", expected (C=" + std::to_string(rows) + ", " + width_name + ") with C from x");
  }
  if (w.shape[1] % heads != 0) {
    throw Error(std::string(kFn) + ": " + name + " has shape " + shape_to_string(w.shape) +
                ", expected its width " + width_name +
                " to be a multiple of heads=" + std::to_string(heads));
  }
  check_finite(w, kFn, name);
}

// Q, K or V straight into the per-head layout (B, H, T, d): head h of
// batch b is x_b (T × C) · columns [h·d, (h+1)·d) of w (+ bias), so no
// (B, T, H·d) intermediate has to be split afterwards. Blocks of rows of
// every head run on the pool: each row is the same sum whichever block
// holds it (parallel_kernels.hpp).
std::vector<float> project_heads(const float* x, std::size_t B, std::size_t T, std::size_t C,
                                 const Tensor& w, const Tensor& bias, std::size_t H,
                                 std::size_t d) {
  const std::size_t width = H * d;
  std::vector<float> out = detail::allocate_zeros({B * H * T * d}, kFn).data;
  const auto project_rows = [&](std::size_t bh, std::size_t t0, std::size_t t1) {
    const std::size_t b = bh / H, h = bh % H;
    float* head = out.data() + (bh * T + t0) * d;
    kernels::matmul_best(x + (b * T + t0) * C, C, w.data.data() + h * d, width, head, d, t1 - t0, C,
                         d);
    if (bias.empty()) return;
    const float* head_bias = bias.data.data() + h * d;
    for (std::size_t t = 0; t < t1 - t0; ++t) {
      for (std::size_t c = 0; c < d; ++c) head[t * d + c] += head_bias[c];
    }
  };
  detail::parallel_row_blocks(B * H, T, B * T * C * width, project_rows);
  return out;
}

// concat · W_O (+ b_O) without building concat: the rows [h·d_v, (h+1)·d_v)
// of W_O meet head h, so each head's output is multiplied in and summed.
// Accumulating head after head adds the terms in the same order as one
// product over the concatenated width. Blocks of rows run on the pool.
std::vector<float> output_projection(const std::vector<float>& heads_out, std::size_t B,
                                     std::size_t T, std::size_t H, std::size_t d_v,
                                     const Tensor& wo, const Tensor& bo) {
  const std::size_t c_out = wo.shape[1];
  std::vector<float> out = detail::allocate_zeros({B * T * c_out}, kFn).data;
  const auto output_rows = [&](std::size_t b, std::size_t t0, std::size_t t1) {
    float* rows = out.data() + (b * T + t0) * c_out;
    for (std::size_t h = 0; h < H; ++h) {
      kernels::matmul_best(heads_out.data() + ((b * H + h) * T + t0) * d_v, d_v,
                           wo.data.data() + h * d_v * c_out, c_out, rows, c_out, t1 - t0, d_v,
                           c_out, /*accumulate=*/h > 0);
    }
    if (bo.empty()) return;
    for (std::size_t t = 0; t < t1 - t0; ++t) {
      for (std::size_t c = 0; c < c_out; ++c) rows[t * c_out + c] += bo.data[c];
    }
  };
  detail::parallel_row_blocks(B, T, B * T * H * d_v * c_out, output_rows);
  return out;
}

// (B, H, T, d) → (B, T, H·d): heads side by side.
std::vector<float> merge_heads(const std::vector<float>& split, std::size_t B, std::size_t T,
                               std::size_t H, std::size_t d) {
  std::vector<float> merged = detail::allocate_zeros({split.size()}, kFn).data;
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
  const std::size_t Hkv = weights.kv_heads ? weights.kv_heads : H;
  if (H % Hkv != 0) {
    throw Error(std::string(kFn) + ": kv_heads is " + std::to_string(Hkv) +
                ", expected a divisor of heads=" + std::to_string(H));
  }
  const bool grouped = Hkv != H;

  check_projection(weights.wq, "wq", C, H, "H*d_k");
  check_projection(weights.wk, "wk", C, Hkv, grouped ? "Hkv*d_k" : "H*d_k");
  const std::size_t d_k = weights.wq.shape[1] / H;
  if (weights.wk.shape[1] != Hkv * d_k) {
    throw Error(std::string(kFn) + ": wk has shape " + shape_to_string(weights.wk.shape) +
                ", expected " + shape_to_string({C, Hkv * d_k}) + " to match wq" +
                (grouped ? " and kv_heads=" + std::to_string(Hkv) : std::string()));
  }
  check_projection(weights.wv, "wv", C, Hkv, grouped ? "Hkv*d_v" : "H*d_v");
  const std::size_t qk_width = weights.wq.shape[1];
  const std::size_t k_width = weights.wk.shape[1];
  const std::size_t v_width = weights.wv.shape[1];
  const std::size_t d_v = v_width / Hkv;
  const std::size_t heads_width = H * d_v;  // concat of the heads' outputs
  check_optional_vector(weights.bq, qk_width, kFn, "bq", "H*d_k", kBiasShape);
  check_optional_vector(weights.bk, k_width, kFn, "bk", grouped ? "Hkv*d_k" : "H*d_k", kBiasShape);
  check_optional_vector(weights.bv, v_width, kFn, "bv", grouped ? "Hkv*d_v" : "H*d_v", kBiasShape);
  std::size_t out_width = heads_width;
  if (!weights.wo.empty()) {
    check_tensor(weights.wo, kFn, "wo");
    if (weights.wo.rank() != 2 || weights.wo.shape[0] != heads_width) {
      throw Error(std::string(kFn) + ": wo has shape " + shape_to_string(weights.wo.shape) +
                  ", expected (H*d_v=" + std::to_string(heads_width) +
                  ", C_out) with H*d_v from wv");
    }
    check_finite(weights.wo, kFn, "wo");
    out_width = weights.wo.shape[1];
    check_optional_vector(weights.bo, out_width, kFn, "bo", "C_out", kBiasShape);
  } else if (!weights.bo.empty()) {
    throw Error(std::string(kFn) + ": bo has shape " + shape_to_string(weights.bo.shape) +
                " but wo is absent; an output bias needs wo");
  }

  detail::AttentionDims dims;
  dims.batch = B;
  dims.heads = H;
  dims.kv_heads = Hkv;
  dims.q_len = T;
  dims.k_len = T;
  dims.d_k = d_k;
  dims.d_v = d_v;
  const float scale = detail::resolve_scale(options.scale, dims.d_k, kFn);
  // Checked before the projections so that bad options cost nothing.
  detail::validate_mask(options.mask, dims, kFn);
  detail::validate_bias(options.bias, dims, kFn);
  detail::validate_rope(options.rope, dims, kFn);

  checked_element_count({B * T, std::max({qk_width, heads_width, out_width})},
                        "self_attention: projections (B*T, width)");
  if (options.trace) {
    checked_element_count({B, H, T, T}, "self_attention: trace tensors (B, H, T, T)");
  }

  const float* xs = x.data.data();
  std::vector<float> q = project_heads(xs, B, T, C, weights.wq, weights.bq, H, d_k);
  std::vector<float> k = project_heads(xs, B, T, C, weights.wk, weights.bk, Hkv, d_k);
  std::vector<float> v = project_heads(xs, B, T, C, weights.wv, weights.bv, Hkv, d_v);

  SelfAttentionResult result;
  std::vector<float> heads_out = detail::allocate_zeros({B * H * T * d_v}, kFn).data;
  result.fully_masked.assign(B * H * T, 0);
  const Shape square = result_shape(batched, B, {H, T, T});
  const Shape q_shape = result_shape(batched, B, {H, T, d_k});
  const Shape k_shape = result_shape(batched, B, {Hkv, T, d_k});
  std::optional<SelfAttentionTrace> trace;
  if (options.trace) trace.emplace();
  result.fully_masked_count = detail::run_attention(
      q.data(), k.data(), v.data(), dims, options, scale, square, q_shape, k_shape,
      heads_out.data(), result.fully_masked.data(), trace ? &*trace : nullptr, kFn);
  result.trace = std::move(trace);

  std::vector<float> concat;
  if (weights.wo.empty() || options.trace) concat = merge_heads(heads_out, B, T, H, d_v);
  if (weights.wo.empty()) {
    result.output = Tensor(result_shape(batched, B, {T, heads_width}), concat);
  } else {
    result.output = Tensor(result_shape(batched, B, {T, out_width}),
                           output_projection(heads_out, B, T, H, d_v, weights.wo, weights.bo));
  }
  detail::check_result_finite(result.output, kFn, "the output");

  if (result.trace) {
    SelfAttentionTrace& t = *result.trace;
    t.q = Tensor(q_shape, std::move(q));
    t.k = Tensor(k_shape, std::move(k));
    t.v = Tensor(result_shape(batched, B, {Hkv, T, d_v}), std::move(v));
    t.head_outputs = Tensor(result_shape(batched, B, {H, T, d_v}), std::move(heads_out));
    t.concat = Tensor(result_shape(batched, B, {T, heads_width}), std::move(concat));
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
