// Internals of GPT-2 training (train.hpp): the activations a training
// forward keeps for the backward, and the two passes over a batch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attnscope/gpt2.hpp"
#include "gpt2_internal.hpp"

namespace attnscope::detail {

/// Gradients of one block, in the order of Gpt2LayerWeights.
struct Gpt2LayerGradients {
  float *ln1_gamma, *ln1_beta, *attn_w, *attn_b, *proj_w, *proj_b;
  float *ln2_gamma, *ln2_beta, *fc_w, *fc_b, *mlp_proj_w, *mlp_proj_b;
};

struct Gpt2Gradients {
  float *wte, *wpe, *lnf_gamma, *lnf_beta;
  std::vector<Gpt2LayerGradients> layers;
};

/// Views of tensors listed in weight_names() order (wte, wpe, 12 per block, ln_f).
Gpt2Weights gpt2_weights_of(const std::vector<const float*>& tensors, std::size_t layers);
Gpt2Gradients gpt2_gradients_of(const std::vector<float*>& tensors, std::size_t layers);

/// What the backward reads of one block; N = B·L rows of the batch.
struct Gpt2LayerActivations {
  std::vector<float> input;      // (N, C) the residual stream entering the block
  std::vector<float> ln1;        // (N, C)
  Tensor queries, keys, values;  // (B, H, L, d) each
  Tensor attended;               // (B, H, L, d) attention's output
  Tensor log_sum_exp;            // (B, H, L) each query's, for the flash backward
  std::vector<float> heads;      // (N, C) head outputs side by side
  std::vector<float> middle;     // (N, C) the residual stream after attention
  std::vector<float> ln2;        // (N, C)
  std::vector<float> fc;         // (N, 4C) before GELU
  std::vector<float> gelu;       // (N, 4C)
};

struct Gpt2Activations {
  std::size_t batch = 0, length = 0;  // B sequences of L input positions
  std::vector<Gpt2LayerActivations> layers;
  std::vector<float> last;    // (N, C) the residual stream after the last block
  std::vector<float> final;   // (N, C) after ln_f
  std::vector<float> logits;  // (N, V)
};

/// The forward on inputs (B, L): tokens[b·stride + t] for t < L, keeping
/// every activation.
Gpt2Activations gpt2_train_forward(const Gpt2Config& c, const Gpt2Weights& w,
                                   const std::int64_t* tokens, std::size_t batch,
                                   std::size_t length, std::size_t stride);

/// Given dlogits (N, V), adds every weight's gradient into g.
void gpt2_train_backward(const Gpt2Config& c, const Gpt2Weights& w, const std::int64_t* tokens,
                         std::size_t stride, const Gpt2Activations& a, const float* dlogits,
                         const Gpt2Gradients& g);

}  // namespace attnscope::detail
