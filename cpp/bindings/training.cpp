// The training runners of training.hpp.
#include "training.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models.hpp"

namespace attnscope::bindings {

void run_gpt2_init(Call& c) {
  ModelEntry& e = model_entry(c);
  const std::size_t seed = c.size_number("seed");
  e.trainer.reset();  // its moments belong to the weights being replaced
  e.prefix_cache.reset();
  initialize_gpt2(*e.model, static_cast<std::uint32_t>(seed));
}

void run_gpt2_trainer(Call& c) {
  ModelEntry& e = model_entry(c);
  AdamWOptions o;
  o.lr = static_cast<float>(c.number_or("lr", o.lr));
  o.beta1 = static_cast<float>(c.number_or("beta1", o.beta1));
  o.beta2 = static_cast<float>(c.number_or("beta2", o.beta2));
  o.eps = static_cast<float>(c.number_or("eps", o.eps));
  o.weight_decay = static_cast<float>(c.number_or("weightDecay", o.weight_decay));
  o.clip = static_cast<float>(c.number_or("clip", o.clip));
  o.warmup = c.size_number("warmup");
  o.total_steps = c.size_number("totalSteps");
  e.trainer.reset();  // the old state goes first, so that both never coexist
  e.trainer = std::make_unique<Gpt2Trainer>(*e.model, o);
  c.put("trainer", static_cast<double>(++e.trainer_id));
}

/// The entry's trainer, if it is the one numbered "trainer" in the call.
static Gpt2Trainer& current_trainer(const Call& c, ModelEntry& e, const char* fn) {
  if (!e.trainer || c.size_number("trainer") != e.trainer_id) {
    throw Error(std::string(fn) + ": this trainer was replaced by a newer model.trainer() call");
  }
  return *e.trainer;
}

void run_gpt2_train_step(Call& c) {
  ModelEntry& e = model_entry(c);
  current_trainer(c, e, "trainer.step");
  const std::vector<std::size_t> ids = c.counts_or_empty("tokens");
  e.prefix_cache.reset();  // the step changes the weights its keys and values came from
  const std::vector<std::int64_t> tokens(ids.begin(), ids.end());
  const std::size_t batch = c.size_number("batch");
  const BoolTensor loss_mask = c.bool_tensor_or_empty("lossMask");
  const TrainStepResult r = e.trainer->step(tokens, batch, loss_mask.data);
  c.put("loss", r.loss);
  c.put("gradientNorm", r.gradient_norm);
  c.put("learningRate", static_cast<double>(r.learning_rate));
}

void run_gpt2_gradient(Call& c) {
  ModelEntry& e = model_entry(c);
  const Gpt2Trainer& trainer = current_trainer(c, e, "trainer.gradient");
  const std::string name = c.text_or("name", "");
  const std::vector<float>& g = trainer.gradient(name);  // throws Error naming an unknown weight
  c.put("gradient", Tensor(e.model->weight_shape(name), std::vector<float>(g.begin(), g.end())));
}

}  // namespace attnscope::bindings
