// GPT-2's backward over a training batch: from dlogits through ln_f, each
// block in reverse (MLP, then attention through attention_backward's flash
// form, from the forward's saved output and log-sum-exp), to the token and position embeddings. wte
// gets two gradients: as the output layer and as the embedding.
#include <algorithm>
#include <vector>

#include "allocate.hpp"
#include "attnscope/attention.hpp"
#include "attnscope/backward.hpp"
#include "backward_layers.hpp"
#include "parallel_kernels.hpp"
#include "train_gpt2_internal.hpp"

namespace attnscope::detail {

namespace {

constexpr float kLayerNormEps = 1e-5f;

std::vector<float> zeros(std::size_t n, const char* what) { return allocate_zeros({n}, what).data; }

/// Through the tied output layer logits = final · wteᵀ: returns dfinal
/// (N, C) and adds dlogitsᵀ · final into dwte.
std::vector<float> logits_backward(const float* dlogits, const std::vector<float>& final,
                                   const float* wte, std::size_t N, std::size_t V, std::size_t C,
                                   float* dwte) {
  std::vector<float> dfinal = zeros(N * C, "gpt2 training: dfinal");
  parallel_matmul(dlogits, V, wte, C, dfinal.data(), C, N, V, C);
  std::vector<float> dlogits_t = zeros(V * N, "gpt2 training: dlogitsᵀ");
  for (std::size_t r = 0; r < N; ++r) {
    for (std::size_t v = 0; v < V; ++v) dlogits_t[v * N + r] = dlogits[r * V + v];
  }
  parallel_matmul(dlogits_t.data(), N, final.data(), C, dwte, C, V, N, C, /*accumulate=*/true);
  return dfinal;
}

/// The attention of one block: dheads (N, C) → dqkv (N, 3C).
std::vector<float> attention_block_backward(const Gpt2LayerActivations& s,
                                            const std::vector<float>& dheads, std::size_t batch,
                                            std::size_t L, std::size_t H, std::size_t C) {
  const std::size_t d = C / H;
  Tensor d_out = allocate_zeros({batch, H, L, d}, "gpt2 training: dO");
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t h = 0; h < H; ++h) {
      for (std::size_t t = 0; t < L; ++t) {
        std::copy_n(dheads.begin() + (b * L + t) * C + h * d, d,
                    d_out.data.begin() + ((b * H + h) * L + t) * d);
      }
    }
  }
  AttentionOptions causal;
  causal.mask.causal = true;
  causal.trace = false;
  // From the forward's output and log-sum-exp: no second attention forward.
  const AttentionGradients g = attention_backward(s.queries, s.keys, s.values, d_out,
                                                  SavedForward{s.attended, s.log_sum_exp}, causal);
  std::vector<float> dqkv = zeros(batch * L * 3 * C, "gpt2 training: dqkv");
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t t = 0; t < L; ++t) {
      float* row = dqkv.data() + (b * L + t) * 3 * C;
      for (std::size_t h = 0; h < H; ++h) {
        const std::size_t at = ((b * H + h) * L + t) * d;
        std::copy_n(g.dq.data.begin() + at, d, row + h * d);
        std::copy_n(g.dk.data.begin() + at, d, row + C + h * d);
        std::copy_n(g.dv.data.begin() + at, d, row + 2 * C + h * d);
      }
    }
  }
  return dqkv;
}

}  // namespace

void gpt2_train_backward(const Gpt2Config& c, const Gpt2Weights& w, const std::int64_t* tokens,
                         std::size_t stride, const Gpt2Activations& a, const float* dlogits,
                         const Gpt2Gradients& g) {
  const std::size_t C = c.d_model, H = c.heads, B = a.batch, L = a.length, N = B * L;
  const std::vector<float> dfinal =
      logits_backward(dlogits, a.final, w.wte, N, c.vocab_size, C, g.wte);
  // dx: the gradient of the residual stream, carried down through the blocks.
  std::vector<float> dx = zeros(N * C, "gpt2 training: dx");
  layer_norm_backward(a.last.data(), w.lnf_gamma, dfinal.data(), N, C, kLayerNormEps, dx.data(),
                      g.lnf_gamma, g.lnf_beta);
  std::vector<float> dgelu = zeros(N * 4 * C, "gpt2 training: dgelu");
  std::vector<float> dln = zeros(N * C, "gpt2 training: dln");
  std::vector<float> dheads = zeros(N * C, "gpt2 training: dheads");
  for (std::size_t l = c.layers; l-- > 0;) {
    const Gpt2LayerWeights& lw = w.layers[l];
    const Gpt2LayerGradients& lg = g.layers[l];
    const Gpt2LayerActivations& s = a.layers[l];
    // x_out = middle + gelu(ln2(middle)·W_fc + b_fc)·W_proj + b_proj
    linear_backward(s.gelu.data(), lw.mlp_proj_w, dx.data(), N, 4 * C, C, dgelu.data(),
                    lg.mlp_proj_w, lg.mlp_proj_b);
    gelu_tanh_backward(s.fc.data(), dgelu.data(), N * 4 * C, dgelu.data());
    linear_backward(s.ln2.data(), lw.fc_w, dgelu.data(), N, C, 4 * C, dln.data(), lg.fc_w, lg.fc_b);
    layer_norm_backward(s.middle.data(), lw.ln2_gamma, dln.data(), N, C, kLayerNormEps, dx.data(),
                        lg.ln2_gamma, lg.ln2_beta);
    // middle = input + attention(ln1(input))·W_proj + b_proj
    linear_backward(s.heads.data(), lw.proj_w, dx.data(), N, C, C, dheads.data(), lg.proj_w,
                    lg.proj_b);
    const std::vector<float> dqkv = attention_block_backward(s, dheads, B, L, H, C);
    linear_backward(s.ln1.data(), lw.attn_w, dqkv.data(), N, C, 3 * C, dln.data(), lg.attn_w,
                    lg.attn_b);
    layer_norm_backward(s.input.data(), lw.ln1_gamma, dln.data(), N, C, kLayerNormEps, dx.data(),
                        lg.ln1_gamma, lg.ln1_beta);
  }
  for (std::size_t b = 0; b < B; ++b) {
    embedding_backward(tokens + b * stride, L, 0, dx.data() + b * L * C, C, g.wte, g.wpe);
  }
}

}  // namespace attnscope::detail
