// The pass through GPT-2's blocks shared by a whole forward and a cached
// step: embeddings, then per block LayerNorm, the causal attention of each
// head (the library's attention(), traced or fast), the output projection
// and the MLP, each added to the residual stream; then the final LayerNorm.
#include <algorithm>
#include <string>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "allocate.hpp"
#include "attnscope/attention.hpp"
#include "checks.hpp"
#include "gpt2_internal.hpp"
#include "kernels/activation.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/dot.hpp"
#include "kernels/layer_norm.hpp"
#include "kernels/panel_matrix.hpp"
#include "parallel_kernels.hpp"
#include "thread_pool.hpp"

namespace attnscope::detail {

namespace {

using Arch = xsimd::default_arch;
constexpr float kLayerNormEps = 1e-5f;
constexpr const char* kFn = "gpt2";

/// Up to this many rows (a decode step), products stream W row by row.
constexpr std::size_t kVectorRows = 2;

/// Elements per task of GELU: a multiple of every batch width.
constexpr std::size_t kGeluGrain = 4096;

/// y (rows, out) = x (rows, in) · w (in, out) + b, w in panels of `panels`
/// columns (0: in row order).
void linear_rows(const float* x, std::size_t rows, std::size_t in, const float* w,
                 std::size_t panels, const float* b, std::size_t out, float* y) {
  const kernels::PanelMatrix wp{w, in, out, panels};
  if (rows <= kVectorRows) {
    for (std::size_t r = 0; r < rows; ++r) std::copy(b, b + out, y + r * out);
    for (std::size_t r = 0; r < rows; ++r) {
      if (panels) {
        parallel_vector_matrix_panels(x + r * in, wp, y + r * out);
      } else {
        parallel_vector_matrix(x + r * in, w, in, out, y + r * out);
      }
    }
    return;
  }
  if (panels) {
    parallel_matmul_panels(x, in, wp, y, out, rows, /*accumulate=*/false, b);
  } else {
    parallel_matmul(x, in, w, out, y, out, rows, in, out, /*accumulate=*/false, b);
  }
}

void gelu_rows(float* x, std::size_t n) {
  parallel_ranges(n, kGeluGrain, n * 16, [&](std::size_t begin, std::size_t end) {
    kernels::gelu_tanh<Arch>(x + begin, end - begin);
  });
}

/// Scratch of one pass, allocated once for all blocks.
struct Buffers {
  Buffers(std::size_t T, std::size_t C)
      : x(allocate_zeros({T * C}, "gpt2: residual stream").data),
        normed(allocate_zeros({T * C}, "gpt2: LayerNorm output").data),
        qkv(allocate_zeros({T * 3 * C}, "gpt2: queries, keys and values").data),
        queries(allocate_zeros({T * C}, "gpt2: queries").data),
        heads(allocate_zeros({T * C}, "gpt2: head outputs").data),
        mlp(allocate_zeros({T * 4 * C}, "gpt2: MLP hidden layer").data) {}
  std::vector<float> x, normed, qkv, queries, heads, mlp;
};

/// Head h's columns of c_attn's output (count, 3C): its queries to (h, count, d)
/// and its keys and values appended at rows first .. of the store.
void split_head(const Gpt2Config& c, const float* qkv, std::size_t count, std::size_t first,
                std::size_t h, float* queries, const Gpt2KeyValues& kv) {
  const std::size_t C = c.d_model, d = C / c.heads;
  for (std::size_t t = 0; t < count; ++t) {
    const float* row = qkv + t * 3 * C;
    std::copy_n(row + h * d, d, queries + (h * count + t) * d);
    std::copy_n(row + C + h * d, d, kv.keys + h * kv.head_stride + (first + t) * d);
    std::copy_n(row + 2 * C + h * d, d, kv.values + h * kv.head_stride + (first + t) * d);
  }
}

/// A head's output (count, d) replaced as `edit` says.
void edit_head_output(const Gpt2HeadEdit& edit, std::size_t count, std::size_t d, float* output) {
  if (edit.kind == Gpt2HeadEdit::Kind::kZero) std::fill_n(output, count * d, 0.0f);
  if (edit.kind != Gpt2HeadEdit::Kind::kMean) return;
  for (std::size_t i = 0; i < d; ++i) {
    double sum = 0;
    for (std::size_t t = 0; t < count; ++t) sum += output[t * d + i];
    const float mean = static_cast<float>(sum / static_cast<double>(count));
    for (std::size_t t = 0; t < count; ++t) output[t * d + i] = mean;
  }
}

/// The causal attention of one block: the new rows' queries against the keys
/// and values of every position so far, head by head, written side by side
/// into `out` (count, C). Each head's task first takes its columns of c_attn's
/// output `qkv` (split_head), so that copy is shared among the threads too.
void attend(const Gpt2Config& c, const float* qkv, float* queries, std::size_t count,
            std::size_t first, const Gpt2KeyValues& kv, float* out, Tensor* weights,
            const BoolTensor* allowed, const Gpt2HeadEdit* edits) {
  const std::size_t H = c.heads, d = c.d_model / H, keys = first + count;
  AttentionOptions options;
  options.mask.causal = true;  // bottom-right aligned: query i sits at position first + i
  if (allowed) options.mask.allowed = *allowed;
  options.trace = weights != nullptr;
  // One task per head: a decode step has one query row per head, too few for
  // attention() to split; called inside a task, attention() stays on its thread.
  parallel_for(H, parallel_slots(), [&](std::size_t h, std::size_t) {
    split_head(c, qkv, count, first, h, queries, kv);
    const TensorView q({count, d}, queries + h * count * d, count * d);
    const TensorView k({keys, d}, kv.keys + h * kv.head_stride, keys * d);
    const TensorView v({keys, d}, kv.values + h * kv.head_stride, keys * d);
    const Gpt2HeadEdit edit = edits ? edits[h] : Gpt2HeadEdit{};
    Tensor output;
    const float* pattern = nullptr;
    if (edit.kind == Gpt2HeadEdit::Kind::kPattern) {
      // The same product as the traced attention's weights·V, so a head
      // given its own clean pattern reproduces the clean run exactly.
      pattern = edit.pattern;
      output = allocate_zeros({count, d}, "gpt2: replaced head output");
      kernels::matmul_best(pattern, keys, v.data, d, output.data.data(), d, count, keys, d);
    } else {
      AttentionResult r = attention(q, k, v, options);
      output = std::move(r.output);
      if (weights) {
        const std::vector<float>& from = r.trace->weights.data;
        std::copy(from.begin(), from.end(), weights->data.begin() + h * count * keys);
      }
    }
    if (pattern && weights)
      std::copy_n(pattern, count * keys, weights->data.begin() + h * count * keys);
    edit_head_output(edit, count, d, output.data.data());
    for (std::size_t t = 0; t < count; ++t) {
      std::copy_n(output.data.data() + t * d, d, out + t * c.d_model + h * d);
    }
  });
}

Tensor tensor_of(Shape shape, const std::vector<float>& from, std::size_t n) {
  Tensor t = allocate_zeros(shape, "gpt2: trace");
  std::copy_n(from.begin(), n, t.data.begin());
  return t;
}

}  // namespace

Tensor gpt2_pass(const Gpt2Config& c, const Gpt2Weights& w, const std::int64_t* tokens,
                 std::size_t count, std::size_t first, const std::vector<Gpt2KeyValues>& kv,
                 Gpt2Trace* trace, bool last_block_every_row, const Gpt2PassEdits* edits,
                 std::vector<Tensor>* value_norms) {
  const BoolTensor* allowed = edits && !edits->allowed.empty() ? &edits->allowed : nullptr;
  const std::size_t C = c.d_model, T = count;
  // The first row the last block carries past its attention: after it, a
  // row feeds only its own final LayerNorm row.
  const std::size_t last_from = last_block_every_row ? 0 : T - 1;
  Buffers b(T, C);
  for (std::size_t t = 0; t < T; ++t) {
    const float* token = w.wte + static_cast<std::size_t>(tokens[t]) * C;
    const float* position = w.wpe + (first + t) * C;
    for (std::size_t i = 0; i < C; ++i) b.x[t * C + i] = token[i] + position[i];
  }
  for (std::size_t l = 0; l < c.layers; ++l) {
    const Gpt2LayerWeights& lw = w.layers[l];
    Tensor* weights = nullptr;
    if (trace) {
      trace->hidden.push_back(tensor_of({T, C}, b.x, T * C));
      trace->attentions.push_back(allocate_zeros({c.heads, T, first + T}, "gpt2: trace"));
      weights = &trace->attentions.back();
    }
    gpt2_layer_norm_rows(b.x.data(), T, C, lw.ln1_gamma, lw.ln1_beta, b.normed.data());
    linear_rows(b.normed.data(), T, C, lw.attn_w, lw.attn_panels, lw.attn_b, 3 * C, b.qkv.data());
    const Gpt2HeadEdit* head_edits =
        edits && !edits->heads.empty() ? edits->heads.data() + l * c.heads : nullptr;
    attend(c, b.qkv.data(), b.queries.data(), T, first, kv[l], b.heads.data(), weights, allowed,
           head_edits);
    if (value_norms && weights) {
      value_norms->push_back(gpt2_value_norms(c, *weights, kv[l], lw.proj_w, lw.proj_panels));
    }
    // Rows [from, T) go on; each is computed as it would be among all T.
    const std::size_t from = l + 1 == c.layers ? last_from : 0, rows = T - from;
    float* x = b.x.data() + from * C;
    // The projection accumulates straight onto the residual stream.
    std::copy_n(x, rows * C, b.normed.begin());
    linear_rows(b.heads.data() + from * C, rows, C, lw.proj_w, lw.proj_panels, lw.proj_b, C, x);
    for (std::size_t i = 0; i < rows * C; ++i) x[i] += b.normed[i];

    gpt2_layer_norm_rows(x, rows, C, lw.ln2_gamma, lw.ln2_beta, b.normed.data());
    linear_rows(b.normed.data(), rows, C, lw.fc_w, lw.fc_panels, lw.fc_b, 4 * C, b.mlp.data());
    gelu_rows(b.mlp.data(), rows * 4 * C);
    linear_rows(b.mlp.data(), rows, 4 * C, lw.mlp_proj_w, lw.mlp_proj_panels, lw.mlp_proj_b, C,
                b.normed.data());
    for (std::size_t i = 0; i < rows * C; ++i) x[i] += b.normed[i];
  }
  const std::size_t rows = T - last_from;
  Tensor out = allocate_zeros({rows, C}, "gpt2: final LayerNorm");
  gpt2_layer_norm_rows(b.x.data() + last_from * C, rows, C, w.lnf_gamma, w.lnf_beta,
                       out.data.data());
  check_result_finite(out, kFn, "the final LayerNorm's output");
  if (trace) trace->hidden.push_back(out);
  return out;
}

void gpt2_layer_norm_rows(const float* x, std::size_t rows, std::size_t C, const float* gamma,
                          const float* beta, float* y) {
  parallel_ranges(rows, 1, rows * C * 8, [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r) {
      kernels::layer_norm_row<Arch>(x + r * C, gamma, beta, kLayerNormEps, y + r * C, C);
    }
  });
}

void gpt2_logits(const float* hidden, std::size_t rows, const float* wte, std::size_t vocab,
                 std::size_t C, float* logits) {
  // A few rows (a decode step): one dot product per token, reading wte once.
  constexpr std::size_t kDotRows = 4;
  constexpr std::size_t kDotGrain = 256;
  if (rows <= kDotRows) {
    parallel_ranges(vocab, kDotGrain, vocab * C * rows, [&](std::size_t v0, std::size_t v1) {
      in_four_streams(
          v0, v1,
          [&](std::size_t v, std::size_t quarter) {
            const float* const rows4[4] = {wte + v * C, wte + (v + quarter) * C,
                                           wte + (v + 2 * quarter) * C,
                                           wte + (v + 3 * quarter) * C};
            for (std::size_t r = 0; r < rows; ++r) {
              float dots[4];
              kernels::dot4<Arch>(hidden + r * C, rows4, C, dots);
              for (std::size_t j = 0; j < 4; ++j) logits[r * vocab + v + j * quarter] = dots[j];
            }
          },
          [&](std::size_t v) {
            for (std::size_t r = 0; r < rows; ++r) {
              logits[r * vocab + v] = kernels::dot<Arch>(hidden + r * C, wte + v * C, C);
            }
          });
    });
    return;
  }
  // Many rows: hidden · wteᵀ, wte's rows transposed a panel at a time as the
  // product reads them, in blocks of tokens spread over the pool. Blocks
  // start at multiples of 64, so every token keeps the panel it has in one
  // call over the whole vocabulary.
  constexpr std::size_t kVocabGrain = 64;
  parallel_ranges(vocab, kVocabGrain, vocab * C * rows, [&](std::size_t v0, std::size_t v1) {
    kernels::matmul_transposed_b_best(hidden, C, wte + v0 * C, C, logits + v0, vocab, rows, C,
                                      v1 - v0);
  });
}

void check_gpt2_tokens(const std::vector<std::int64_t>& tokens, std::size_t vocab, const char* fn) {
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || static_cast<std::uint64_t>(tokens[i]) >= vocab) {
      throw Error(std::string(fn) + ": tokens[" + std::to_string(i) + "] is " +
                  std::to_string(tokens[i]) +
                  ", expected a token id in [0, vocab_size=" + std::to_string(vocab) + ")");
    }
  }
}

}  // namespace attnscope::detail
