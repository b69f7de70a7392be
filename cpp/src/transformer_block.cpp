// A transformer block: self-attention and a feed-forward layer, each wrapped
// in a residual connection and a LayerNorm, in pre-norm or post-norm order.
#include <string>

#include "attnscope/block.hpp"
#include "block_internal.hpp"

namespace attnscope {

namespace {

constexpr const char* kFn = "transformer_block";

// Checks everything the block reads, so a bad argument is reported with the
// block's own name for it before any work is done. The attention weights
// other than wo are checked by self_attention.
void check_block(const Tensor& x, const BlockWeights& w) {
  using namespace detail;
  const std::size_t C = check_block_input(x, w.attention.wo, kFn);
  check_optional_vector(w.norm1_gamma, C, kFn, "norm1_gamma", "C");
  check_optional_vector(w.norm1_beta, C, kFn, "norm1_beta", "C");
  check_optional_vector(w.norm2_gamma, C, kFn, "norm2_gamma", "C");
  check_optional_vector(w.norm2_beta, C, kFn, "norm2_beta", "C");
  const std::size_t hidden = check_linear(w.ff1, C, kFn, "ff1.", "C");
  const std::size_t out = check_linear(w.ff2, hidden, kFn, "ff2.", "hidden");
  if (out != C) {
    throw Error(std::string(kFn) + ": ff2.weight has shape " + shape_to_string(w.ff2.weight.shape) +
                ", expected (hidden=" + std::to_string(hidden) + ", C=" + std::to_string(C) +
                ") so the feed-forward output can be added to its input");
  }
  check_activation(w.activation, kFn);
  check_eps(w.eps, kFn, "eps");
}

}  // namespace

BlockResult transformer_block(const Tensor& x, const BlockWeights& w,
                              const AttentionOptions& options) {
  using namespace detail;
  check_block(x, w);
  BlockResult result;
  BlockTrace& t = result.trace;
  auto feed_forward_into = [&](const Tensor& input) {
    t.ff_hidden = linear_unchecked(input, w.ff1, kFn);
    check_result_finite(t.ff_hidden, kFn, "ff1");
    activate_inplace(t.ff_hidden, w.activation);
    t.ff_output = linear_unchecked(t.ff_hidden, w.ff2, kFn);
  };

  if (w.norm_first) {
    // x + Attn(LN(x)), then h + FF(LN(h)).
    t.norm1 = layer_norm_unchecked(x, w.norm1_gamma, w.norm1_beta, w.eps, kFn);
    check_result_finite(t.norm1, kFn, "norm1");
    t.attention = self_attention(t.norm1, w.attention, options);
    t.attention_residual = add_unchecked(x, t.attention.output);
    check_result_finite(t.attention_residual, kFn, "attention_residual");
    t.norm2 = layer_norm_unchecked(t.attention_residual, w.norm2_gamma, w.norm2_beta, w.eps, kFn);
    check_result_finite(t.norm2, kFn, "norm2");
    feed_forward_into(t.norm2);
    t.ff_residual = add_unchecked(t.attention_residual, t.ff_output);
    result.output = t.ff_residual;
  } else {
    // LN(x + Attn(x)), then LN(h + FF(h)).
    t.attention = self_attention(x, w.attention, options);
    t.attention_residual = add_unchecked(x, t.attention.output);
    check_result_finite(t.attention_residual, kFn, "attention_residual");
    t.norm1 = layer_norm_unchecked(t.attention_residual, w.norm1_gamma, w.norm1_beta, w.eps, kFn);
    check_result_finite(t.norm1, kFn, "norm1");
    feed_forward_into(t.norm1);
    t.ff_residual = add_unchecked(t.norm1, t.ff_output);
    t.norm2 = layer_norm_unchecked(t.ff_residual, w.norm2_gamma, w.norm2_beta, w.eps, kFn);
    result.output = t.norm2;
  }
  // Every intermediate the trace shows must be finite, not only the output.
  check_result_finite(t.ff_output, kFn, "ff_output");
  check_result_finite(t.ff_residual, kFn, "ff_residual");
  check_result_finite(t.norm2, kFn, "norm2");
  return result;
}

}  // namespace attnscope
