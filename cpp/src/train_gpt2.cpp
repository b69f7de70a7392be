// Gpt2Trainer: checks a batch, runs the training forward and backward
// (train_gpt2_forward.cpp, train_gpt2_backward.cpp), clips and applies AdamW.
#include <algorithm>
#include <new>
#include <string>

#include "allocate.hpp"
#include "attnscope/train.hpp"
#include "backward_layers.hpp"
#include "thread_pool.hpp"
#include "train_gpt2_internal.hpp"
#include "train_optimizer.hpp"

namespace attnscope {

namespace {

/// Sequence length T of a (batch, T) batch; throws Error naming `fn`.
std::size_t check_batch(const std::vector<std::int64_t>& tokens, std::size_t batch,
                        const Gpt2Config& c, const char* fn) {
  if (batch == 0) throw Error(std::string(fn) + ": batch is 0, expected >= 1");
  if (tokens.size() % batch != 0) {
    throw Error(std::string(fn) + ": tokens has " + std::to_string(tokens.size()) +
                " entries, expected batch=" + std::to_string(batch) + " times T");
  }
  const std::size_t T = tokens.size() / batch;
  if (T < 2 || T - 1 > c.context_length) {
    throw Error(std::string(fn) + ": tokens has T=" + std::to_string(T) +
                " per sequence, expected 2..context_length+1=" +
                std::to_string(c.context_length + 1) + " (T−1 positions predict the next token)");
  }
  detail::check_gpt2_tokens(tokens, c.vocab_size, fn);
  return T;
}

/// Throws Error naming `fn` unless loss_mask is empty or (batch, T − 1) flags with a 1.
void check_loss_mask(const std::vector<std::uint8_t>& loss_mask, std::size_t batch, std::size_t T,
                     const char* fn) {
  if (loss_mask.empty()) return;
  const std::size_t expected = batch * (T - 1);
  if (loss_mask.size() != expected) {
    throw Error(std::string(fn) + ": loss_mask has " + std::to_string(loss_mask.size()) +
                " entries, expected batch·(T−1) = " + std::to_string(batch) + "·" +
                std::to_string(T - 1) + " = " + std::to_string(expected));
  }
  bool any = false;
  for (std::size_t i = 0; i < loss_mask.size(); ++i) {
    if (loss_mask[i] > 1) {
      throw Error(std::string(fn) + ": loss_mask[" + std::to_string(i) + "] is " +
                  std::to_string(loss_mask[i]) + ", expected 0 or 1");
    }
    any = any || loss_mask[i] == 1;
  }
  if (!any) throw Error(std::string(fn) + ": loss_mask selects no prediction, expected a 1");
}

}  // namespace

Gpt2Trainer::Gpt2Trainer(Gpt2Model& model, const AdamWOptions& options)
    : model_(model), options_(options), names_(model.weight_names()) {
  const char* fn = "Gpt2Trainer";
  detail::check_adamw_options(options, fn);
  if (!model.finished()) {
    throw Error(std::string(fn) + ": the model's weights are not all loaded and checked");
  }
  for (const std::string& name : names_) {
    const std::size_t n = model.weight(name).size;
    const std::string what = std::string(fn) + ": state of " + name;
    gradients_.push_back(detail::allocate_zeros({n}, what.c_str()).data);
    first_moment_.push_back(detail::allocate_zeros({n}, what.c_str()).data);
    second_moment_.push_back(detail::allocate_zeros({n}, what.c_str()).data);
  }
}

double Gpt2Trainer::compute_gradients(const std::vector<std::int64_t>& tokens, std::size_t batch,
                                      const std::vector<std::uint8_t>& loss_mask) {
  const char* fn = "Gpt2Trainer::step";
  const Gpt2Config& c = model_.config();
  const std::size_t T = check_batch(tokens, batch, c, fn);
  check_loss_mask(loss_mask, batch, T, fn);
  try {
    std::vector<const float*> weights;
    std::vector<float*> grads;
    for (std::size_t i = 0; i < names_.size(); ++i) {
      weights.push_back(model_.weight(names_[i]).data);
      std::fill(gradients_[i].begin(), gradients_[i].end(), 0.0f);
      grads.push_back(gradients_[i].data());
    }
    const detail::Gpt2Weights w = detail::gpt2_weights_of(weights, c.layers);
    const detail::KeepPoolAwake awake;
    const std::size_t L = T - 1, N = batch * L;
    const detail::Gpt2Activations a = detail::gpt2_train_forward(c, w, tokens.data(), batch, L, T);
    std::vector<std::int64_t> targets(N);
    for (std::size_t b = 0; b < batch; ++b) {
      std::copy_n(tokens.begin() + b * T + 1, L, targets.begin() + b * L);
    }
    std::vector<float> dlogits = detail::allocate_zeros({N * c.vocab_size}, "dlogits").data;
    const double loss =
        detail::cross_entropy(a.logits.data(), targets.data(), N, c.vocab_size, dlogits.data(),
                              loss_mask.empty() ? nullptr : loss_mask.data());
    detail::gpt2_train_backward(c, w, tokens.data(), T, a, dlogits.data(),
                                detail::gpt2_gradients_of(grads, c.layers));
    return loss;
  } catch (const std::bad_alloc&) {
    throw ResourceError(std::string(fn) + ": out of memory");
  }
}

TrainStepResult Gpt2Trainer::step(const std::vector<std::int64_t>& tokens, std::size_t batch,
                                  const std::vector<std::uint8_t>& loss_mask) {
  TrainStepResult r;
  r.loss = compute_gradients(tokens, batch, loss_mask);
  r.gradient_norm = detail::clip_gradients(gradients_, options_.clip);
  r.learning_rate = learning_rate_at(options_, steps_);
  ++steps_;
  for (std::size_t i = 0; i < names_.size(); ++i) {
    const bool decay = model_.weight_shape(names_[i]).size() == 2;  // matrices only
    detail::adamw_update(model_.weight_data(names_[i]), gradients_[i].data(),
                         first_moment_[i].data(), second_moment_[i].data(), gradients_[i].size(),
                         r.learning_rate, options_, steps_, decay);
  }
  // Checks every weight is finite again (a diverged step is reported here),
  // leaving the matrices in row order for the next step.
  model_.check_weights();
  return r;
}

const std::vector<float>& Gpt2Trainer::gradient(const std::string& name) const {
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return gradients_[i];
  }
  throw Error("Gpt2Trainer::gradient: '" + name + "' is not a weight of the model");
}

}  // namespace attnscope
