// AdamW, global-norm clipping and the options' checks, for Gpt2Trainer.
#pragma once

#include <cstddef>
#include <vector>

#include "attnscope/train.hpp"

namespace attnscope::detail {

/// Throws Error naming `fn` and the option for an invalid one.
void check_adamw_options(const AdamWOptions& options, const char* fn);

/// The global L2 norm of every gradient; when clip > 0 and the norm is
/// above it, scales them all by clip / (norm + 1e-6) (as PyTorch's
/// clip_grad_norm_). Returns the norm before clipping.
double clip_gradients(std::vector<std::vector<float>>& gradients, float clip);

/// One AdamW update of n weights at step t (1 = the first): moments, bias
/// correction, w −= lr·weight_decay·w when `decay`, then w −= lr·m̂/(√v̂ + eps).
void adamw_update(float* weights, const float* gradients, float* first_moment, float* second_moment,
                  std::size_t n, float lr, const AdamWOptions& options, std::size_t t, bool decay);

}  // namespace attnscope::detail
