// GPT-2's forward over a training batch, keeping what the backward needs
// (train_gpt2_internal.hpp). The same computation as gpt2_pass, on B
// sequences at once: the linear layers see all B·L rows, attention runs on
// (B, H, L, d) through the library's fast path.
#include <algorithm>
#include <utility>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "allocate.hpp"
#include "attnscope/attention.hpp"
#include "kernels/activation.hpp"
#include "kernels/layer_norm.hpp"
#include "parallel_kernels.hpp"
#include "train_gpt2_internal.hpp"

namespace attnscope::detail {

namespace {

using Arch = xsimd::default_arch;

std::vector<float> zeros(std::size_t n, const char* what) { return allocate_zeros({n}, what).data; }

/// y (rows, out) = x (rows, in) · w (in, out) + b.
std::vector<float> linear(const std::vector<float>& x, std::size_t rows, std::size_t in,
                          const float* w, const float* b, std::size_t out) {
  std::vector<float> y = zeros(rows * out, "gpt2 training: linear output");
  parallel_matmul(x.data(), in, w, out, y.data(), out, rows, in, out, /*accumulate=*/false, b);
  return y;
}

std::vector<float> layer_norm(const std::vector<float>& x, std::size_t rows, std::size_t C,
                              const float* gamma, const float* beta) {
  std::vector<float> y = zeros(rows * C, "gpt2 training: LayerNorm output");
  gpt2_layer_norm_rows(x.data(), rows, C, gamma, beta, y.data());
  return y;
}

}  // namespace

Gpt2Weights gpt2_weights_of(const std::vector<const float*>& t, std::size_t layers) {
  Gpt2Weights w;
  w.wte = t[0];
  w.wpe = t[1];
  for (std::size_t l = 0; l < layers; ++l) {
    const float* const* p = t.data() + 2 + l * kGpt2LayerTensors;
    w.layers.push_back({p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11]});
  }
  w.lnf_gamma = t[t.size() - 2];
  w.lnf_beta = t[t.size() - 1];
  return w;
}

Gpt2Gradients gpt2_gradients_of(const std::vector<float*>& t, std::size_t layers) {
  Gpt2Gradients g;
  g.wte = t[0];
  g.wpe = t[1];
  for (std::size_t l = 0; l < layers; ++l) {
    float* const* p = t.data() + 2 + l * kGpt2LayerTensors;
    g.layers.push_back({p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11]});
  }
  g.lnf_gamma = t[t.size() - 2];
  g.lnf_beta = t[t.size() - 1];
  return g;
}

Gpt2Activations gpt2_train_forward(const Gpt2Config& c, const Gpt2Weights& w,
                                   const std::int64_t* tokens, std::size_t batch,
                                   std::size_t length, std::size_t stride) {
  const std::size_t C = c.d_model, H = c.heads, d = C / H, L = length, N = batch * L;
  Gpt2Activations a;
  a.batch = batch;
  a.length = L;
  std::vector<float> x = zeros(N * C, "gpt2 training: residual stream");
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t t = 0; t < L; ++t) {
      const float* token = w.wte + static_cast<std::size_t>(tokens[b * stride + t]) * C;
      const float* position = w.wpe + t * C;
      for (std::size_t i = 0; i < C; ++i) x[(b * L + t) * C + i] = token[i] + position[i];
    }
  }
  AttentionOptions causal;
  causal.mask.causal = true;
  causal.trace = false;
  for (std::size_t l = 0; l < c.layers; ++l) {
    const Gpt2LayerWeights& lw = w.layers[l];
    Gpt2LayerActivations& s = a.layers.emplace_back();
    s.input = x;
    s.ln1 = layer_norm(x, N, C, lw.ln1_gamma, lw.ln1_beta);
    const std::vector<float> qkv = linear(s.ln1, N, C, lw.attn_w, lw.attn_b, 3 * C);
    const Shape per_head = {batch, H, L, d};
    s.queries = allocate_zeros(per_head, "gpt2 training: queries");
    s.keys = allocate_zeros(per_head, "gpt2 training: keys");
    s.values = allocate_zeros(per_head, "gpt2 training: values");
    for (std::size_t b = 0; b < batch; ++b) {
      for (std::size_t t = 0; t < L; ++t) {
        const float* row = qkv.data() + (b * L + t) * 3 * C;
        for (std::size_t h = 0; h < H; ++h) {
          const std::size_t at = ((b * H + h) * L + t) * d;
          std::copy_n(row + h * d, d, s.queries.data.begin() + at);
          std::copy_n(row + C + h * d, d, s.keys.data.begin() + at);
          std::copy_n(row + 2 * C + h * d, d, s.values.data.begin() + at);
        }
      }
    }
    // The output and log-sum-exp are kept: the backward starts from them.
    AttentionResult attended = attention_with_log_sum_exp(s.queries, s.keys, s.values, causal);
    s.attended = std::move(attended.output);
    s.log_sum_exp = std::move(attended.log_sum_exp);
    s.heads = zeros(N * C, "gpt2 training: head outputs");
    for (std::size_t b = 0; b < batch; ++b) {
      for (std::size_t h = 0; h < H; ++h) {
        for (std::size_t t = 0; t < L; ++t) {
          std::copy_n(s.attended.data.begin() + ((b * H + h) * L + t) * d, d,
                      s.heads.begin() + (b * L + t) * C + h * d);
        }
      }
    }
    s.middle = linear(s.heads, N, C, lw.proj_w, lw.proj_b, C);
    for (std::size_t i = 0; i < N * C; ++i) s.middle[i] += x[i];
    s.ln2 = layer_norm(s.middle, N, C, lw.ln2_gamma, lw.ln2_beta);
    s.fc = linear(s.ln2, N, C, lw.fc_w, lw.fc_b, 4 * C);
    s.gelu = s.fc;
    // Pieces of a multiple of 64 elements: each keeps its SIMD or scalar path.
    parallel_ranges(s.gelu.size(), 4096, s.gelu.size() * 16, [&](std::size_t i0, std::size_t i1) {
      kernels::gelu_tanh<Arch>(s.gelu.data() + i0, i1 - i0);
    });
    x = linear(s.gelu, N, 4 * C, lw.mlp_proj_w, lw.mlp_proj_b, C);
    for (std::size_t i = 0; i < N * C; ++i) x[i] += s.middle[i];
  }
  a.last = x;
  a.final = layer_norm(x, N, C, w.lnf_gamma, w.lnf_beta);
  a.logits = zeros(N * c.vocab_size, "gpt2 training: logits");
  gpt2_logits(a.final.data(), N, w.wte, c.vocab_size, C, a.logits.data());
  return a;
}

}  // namespace attnscope::detail
