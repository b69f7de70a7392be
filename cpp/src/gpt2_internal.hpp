// Internals of the GPT-2 model shared by its weight store (gpt2_model.cpp),
// its public forward and step (gpt2_forward.cpp) and the pass through the
// blocks they both run (gpt2_pass.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attnscope/gpt2.hpp"

namespace attnscope::detail {

/// The tensors of one block, by role (see gpt2.hpp for their shapes).
struct Gpt2LayerWeights {
  const float *ln1_gamma, *ln1_beta;
  const float *attn_w, *attn_b;  // c_attn: (C, 3C), q | k | v side by side
  const float *proj_w, *proj_b;  // attn.c_proj
  const float *ln2_gamma, *ln2_beta;
  const float *fc_w, *fc_b;              // mlp.c_fc
  const float *mlp_proj_w, *mlp_proj_b;  // mlp.c_proj
  // Panel width of each matrix stored in panels (kernels/panel_matrix.hpp);
  // 0: in row order.
  std::size_t attn_panels = 0, proj_panels = 0, fc_panels = 0, mlp_proj_panels = 0;
};

struct Gpt2Weights {
  const float *wte, *wpe;
  const float *lnf_gamma, *lnf_beta;
  std::vector<Gpt2LayerWeights> layers;
};

/// The per-block suffixes of the weight names, in the order of
/// Gpt2LayerWeights; each name is "h.{i}." + suffix.
inline constexpr const char* kGpt2LayerSuffixes[] = {
    "ln_1.weight",        "ln_1.bias",        "attn.c_attn.weight", "attn.c_attn.bias",
    "attn.c_proj.weight", "attn.c_proj.bias", "ln_2.weight",        "ln_2.bias",
    "mlp.c_fc.weight",    "mlp.c_fc.bias",    "mlp.c_proj.weight",  "mlp.c_proj.bias",
};
inline constexpr std::size_t kGpt2LayerTensors = 12;

/// Where a block's keys and values live: per head, rows of d_k floats,
/// `head_stride` floats from one head to the next.
struct Gpt2KeyValues {
  float* keys;
  float* values;
  std::size_t head_stride;
};

/// What an intervened pass does to one head (resolved from Gpt2Interventions).
struct Gpt2HeadEdit {
  enum class Kind { kNone, kZero, kMean, kPattern };
  Kind kind = Kind::kNone;
  const float* pattern = nullptr;  // kPattern: (T, T) weights of the clean run
};

/// The interventions of a whole forward (first = 0), per layer and head.
struct Gpt2PassEdits {
  BoolTensor allowed;               // (T, T), 1 = may attend; empty = no masked token
  std::vector<Gpt2HeadEdit> heads;  // layers · H, layer-major
};

/// Runs the blocks on `count` tokens at positions first .. first + count - 1
/// (checked by the caller). Block l writes its keys and values of those
/// positions into kv[l] and attends to positions 0 .. first + count - 1 of
/// it. Returns the final LayerNorm's output (count, C), or with
/// `last_block_every_row` false the last position's row alone (1, C), the
/// last block's output projection and MLP then run on that row only; with
/// `trace`, fills its attention weights and residual stream (whose last
/// entry is the output returned).
/// `edits` (first = 0 only) changes heads and masks keys; `value_norms`
/// (with trace) receives each layer's value-norm weighted attention.
Tensor gpt2_pass(const Gpt2Config& config, const Gpt2Weights& w, const std::int64_t* tokens,
                 std::size_t count, std::size_t first, const std::vector<Gpt2KeyValues>& kv,
                 Gpt2Trace* trace, bool last_block_every_row, const Gpt2PassEdits* edits = nullptr,
                 std::vector<Tensor>* value_norms = nullptr);

/// LayerNorm of each row of x (rows, C), GPT-2's eps.
void gpt2_layer_norm_rows(const float* x, std::size_t rows, std::size_t C, const float* gamma,
                          const float* beta, float* y);

/// Throws Error naming `fn` and the argument for interventions that do not
/// fit the config and a sequence of T tokens.
void check_gpt2_interventions(const Gpt2Config& config, std::size_t T,
                              const Gpt2Interventions& interventions, const char* fn);

/// The edits of checked interventions; patterns point into `clean` (traced).
Gpt2PassEdits gpt2_pass_edits(const Gpt2Config& config, std::size_t T,
                              const Gpt2Interventions& interventions, const Gpt2Trace* clean);

/// α_hij · ‖v_hj · W_O,h‖ (H, T, T) of one layer from its weights (H, T, T),
/// its values (per head, rows of d at kv.head_stride) and c_proj's weight
/// (in panels of proj_panels columns, or in row order for 0).
Tensor gpt2_value_norms(const Gpt2Config& config, const Tensor& weights, const Gpt2KeyValues& kv,
                        const float* proj_w, std::size_t proj_panels);

/// Attention rollout after each layer (T, T) from the attentions (H, T, T).
std::vector<Tensor> gpt2_rollout(const std::vector<Tensor>& attentions);

/// The logit lens of a traced pass: top `k` tokens per layer and position.
Gpt2LogitLens gpt2_logit_lens(const Gpt2Config& config, const Gpt2Weights& w,
                              const Gpt2Trace& trace, std::size_t k);

/// Visits the tokens [v0, v1) of an LM head's piece as four quarters side by
/// side, four(v, quarter) for the tokens v, v + quarter, v + 2·quarter and
/// v + 3·quarter, then one(v) for the few left: one thread reads memory
/// faster as four streams than as one (docs/performance/journal.md, "... and
/// four streams for a decode step's LM head").
template <class Four, class One>
void in_four_streams(std::size_t v0, std::size_t v1, Four four, One one) {
  const std::size_t quarter = (v1 - v0) / 4;
  for (std::size_t v = v0; v < v0 + quarter; ++v) four(v, quarter);
  for (std::size_t v = v0 + 4 * quarter; v < v1; ++v) one(v);
}

/// logits (rows, V) = hidden (rows, C) · wteᵀ.
void gpt2_logits(const float* hidden, std::size_t rows, const float* wte, std::size_t vocab,
                 std::size_t channels, float* logits);

/// Throws Error naming `fn` unless every token is in [0, vocab).
void check_gpt2_tokens(const std::vector<std::int64_t>& tokens, std::size_t vocab, const char* fn);

}  // namespace attnscope::detail
