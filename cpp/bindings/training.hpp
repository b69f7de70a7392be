// Runners of training (listed in call.cpp), on models of the registry
// (models.hpp). Plain C++ (no Emscripten), like call.hpp.
//
// gpt2_init (model, number seed): GPT-2's initialisation, then the model is
// finished. gpt2_trainer (model, numbers lr, beta1, beta2, eps, weightDecay,
// clip, warmup, totalSteps → number trainer): a new AdamW trainer, replacing
// the model's previous one. gpt2_train_step (model, trainer, counts tokens,
// number batch, optional bytes lossMask (B, T − 1) → numbers loss,
// gradientNorm, learningRate). gpt2_gradient
// (model, trainer, text name → tensor gradient, shaped as the weight): the
// gradient of that weight from the trainer's last step, before clipping.
#pragma once

#include "call.hpp"

namespace attnscope::bindings {

void run_gpt2_init(Call& c);
void run_gpt2_trainer(Call& c);
void run_gpt2_train_step(Call& c);
void run_gpt2_gradient(Call& c);

}  // namespace attnscope::bindings
