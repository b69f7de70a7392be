// The training loss from the double-precision GPT-2 forward
// (test_gpt2_reference.hpp), optionally over the predictions a loss mask
// selects, for the trainer's finite-difference checks, and the tests' tiny model.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "test_gpt2_reference.hpp"

namespace attnscope::testing {

/// The trainer tests' model: 2 layers of 2 heads, C = 8, 11 tokens, 8 positions.
inline Gpt2Config tiny_config() {
  Gpt2Config c;
  c.layers = 2;
  c.heads = 2;
  c.d_model = 8;
  c.vocab_size = 11;
  c.context_length = 8;
  return c;
}

/// Mean next-token cross-entropy of a (batch, T) batch, over the predictions
/// loss_mask (batch, T − 1) selects, or over all when it is empty.
inline double reference_loss(const Gpt2Model& model, const std::vector<std::int64_t>& tokens,
                             std::size_t batch, const std::vector<std::uint8_t>& loss_mask = {}) {
  const std::size_t T = tokens.size() / batch, V = model.config().vocab_size;
  double total = 0;
  std::size_t count = 0;
  for (std::size_t b = 0; b < batch; ++b) {
    const std::vector<std::int64_t> inputs(tokens.begin() + b * T, tokens.begin() + b * T + T - 1);
    const Gpt2Reference r = gpt2_reference(model, inputs);
    for (std::size_t t = 0; t + 1 < T; ++t) {
      if (!loss_mask.empty() && !loss_mask[b * (T - 1) + t]) continue;
      double max = -INFINITY, sum = 0;
      for (std::size_t v = 0; v < V; ++v) max = std::max(max, r.logits[t * V + v]);
      for (std::size_t v = 0; v < V; ++v) sum += std::exp(r.logits[t * V + v] - max);
      total += max + std::log(sum) - r.logits[t * V + std::size_t(tokens[b * T + t + 1])];
      ++count;
    }
  }
  return total / double(count);
}

}  // namespace attnscope::testing
