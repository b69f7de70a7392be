// A Llama-style decoder block: pre-norm with RMSNorm, self-attention (with
// whatever GQA, rope, ALiBi or window the options and weights ask for) and
// a SwiGLU feed-forward, each inside a residual connection.
#include <string>

#include "attnscope/llama_block.hpp"
#include "block_internal.hpp"
#include "llama_block_internal.hpp"

namespace attnscope {

namespace {

constexpr const char* kFn = "llama_block";

void check_llama_block(const Tensor& x, const LlamaBlockWeights& w) {
  using namespace detail;
  const std::size_t C = check_block_input(x, w.attention.wo, kFn);
  check_optional_vector(w.attention_norm, C, kFn, "attention_norm", "C");
  check_optional_vector(w.ffn_norm, C, kFn, "ffn_norm", "C");
  const std::size_t out = check_swiglu(w.gate, w.up, w.down, C, kFn, "");
  if (out != C) {
    throw Error(std::string(kFn) + ": down.weight has shape " +
                shape_to_string(w.down.weight.shape) + ", expected (hidden, C=" +
                std::to_string(C) + ") so the feed-forward output can be added to its input");
  }
  check_eps(w.eps, kFn, "eps");
}

}  // namespace

LlamaBlockResult llama_block(const Tensor& x, const LlamaBlockWeights& w,
                             const AttentionOptions& options) {
  using namespace detail;
  check_llama_block(x, w);
  LlamaBlockResult result;
  LlamaBlockTrace& t = result.trace;
  t.attention_norm = rms_norm_unchecked(x, w.attention_norm, w.eps, kFn);
  check_result_finite(t.attention_norm, kFn, "attention_norm");
  t.attention = self_attention(t.attention_norm, w.attention, options);
  t.attention_residual = add_unchecked(x, t.attention.output);
  check_result_finite(t.attention_residual, kFn, "attention_residual");
  t.ffn_norm = rms_norm_unchecked(t.attention_residual, w.ffn_norm, w.eps, kFn);
  check_result_finite(t.ffn_norm, kFn, "ffn_norm");
  t.ffn_output = swiglu_unchecked(t.ffn_norm, w.gate, w.up, w.down, kFn);
  check_result_finite(t.ffn_output, kFn, "ffn_output");
  result.output = add_unchecked(t.attention_residual, t.ffn_output);
  check_result_finite(result.output, kFn, "output");
  return result;
}

}  // namespace attnscope
