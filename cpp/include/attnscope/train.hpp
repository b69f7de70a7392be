// Training a GPT-2 model (gpt2.hpp) in place: GPT-2's initialisation from a
// seed, and a trainer that runs a forward keeping what the backward needs,
// the backward through every block (the embedding tied to the logits), and
// an AdamW step with global-norm clipping and a warm-up + cosine schedule.
//
// The loss of a batch of B sequences of T tokens is the mean next-token
// cross-entropy: positions 0 .. T-2 of each sequence predict tokens 1 .. T-1.
// An optional loss mask picks which of those predictions count (a task whose
// answers are known only at some positions), the mean then running over
// them alone.
// Everything runs on one thread in a fixed order, so a seed and the same
// batches give the same weights on a given build.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attnscope/gpt2.hpp"

namespace attnscope {

/// Fills every weight as GPT-2 does and finishes the model: wte, wpe and the
/// linear weights from normal(0, 0.02), the two residual projections
/// (attn.c_proj, mlp.c_proj) from normal(0, 0.02/√(2·layers)), biases 0,
/// LayerNorm gains 1 and shifts 0. The normals come from std::mt19937
/// seeded with `seed`, by Box–Muller on pairs of its 32-bit outputs, weight
/// by weight in weight_names() order, so native and wasm builds draw the same.
void initialize_gpt2(Gpt2Model& model, std::uint32_t seed);

struct AdamWOptions {
  float lr = 1e-3f;                   // peak learning rate, > 0
  float beta1 = 0.9f, beta2 = 0.95f;  // in [0, 1)
  float eps = 1e-8f;                  // > 0
  /// Decoupled decay (w −= lr·weight_decay·w), applied to the matrices
  /// (wte, wpe and the linear weights), not to biases or LayerNorm.
  float weight_decay = 0.0f;
  /// Global-norm clipping: gradients are scaled so their norm is at most
  /// clip. 0 = no clipping.
  float clip = 0.0f;
  /// Linear warm-up over the first `warmup` steps, then, if total_steps >
  /// warmup, a cosine from lr down to lr·min_lr_ratio at total_steps (and
  /// that floor after it). 0 = none.
  std::size_t warmup = 0, total_steps = 0;
  float min_lr_ratio = 0.1f;  // in [0, 1]
};

/// The learning rate of step `step` (0 = the first).
float learning_rate_at(const AdamWOptions& options, std::size_t step);

struct TrainStepResult {
  double loss = 0;           // before the update
  double gradient_norm = 0;  // global L2 norm, before clipping
  float learning_rate = 0;   // the rate this step used
};

class Gpt2Trainer {
 public:
  /// Trains `model` (kept by reference; it must outlive the trainer and be
  /// finished). Throws Error naming the option for an invalid one.
  Gpt2Trainer(Gpt2Model& model, const AdamWOptions& options);

  /// tokens: (batch, T) row-major. Computes loss and gradients, then one
  /// AdamW update of the model's weights. Throws Error (before changing
  /// anything) for batch = 0, a size that is not batch·T, T < 2, T − 1 >
  /// context_length or a token outside [0, vocab_size).
  ///
  /// loss_mask: empty (every prediction counts) or (batch, T − 1) row-major
  /// flags, entry [b, t] = 1 when the prediction of tokens[b, t + 1] from
  /// tokens[b, 0 .. t] counts. The loss is then the mean over the selected
  /// predictions and the others add nothing to the gradients. An all-ones
  /// mask gives the same result as none, bit for bit. Throws Error naming
  /// loss_mask for another size, a value other than 0 or 1, or no 1.
  TrainStepResult step(const std::vector<std::int64_t>& tokens, std::size_t batch,
                       const std::vector<std::uint8_t>& loss_mask = {});

  /// The loss of the batch and its gradients (left in gradient()), without
  /// updating anything; the same checks as step().
  double compute_gradients(const std::vector<std::int64_t>& tokens, std::size_t batch,
                           const std::vector<std::uint8_t>& loss_mask = {});

  /// dLoss/dweight of the last step or compute_gradients, shaped as the weight.
  const std::vector<float>& gradient(const std::string& name) const;

  std::size_t steps_taken() const { return steps_; }
  const AdamWOptions& options() const { return options_; }

 private:
  Gpt2Model& model_;
  AdamWOptions options_;
  std::vector<std::string> names_;
  std::vector<std::vector<float>> gradients_, first_moment_, second_moment_;
  std::size_t steps_ = 0;
};

}  // namespace attnscope
