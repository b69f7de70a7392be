// Models that live across calls: a registry of GPT-2 models (each with an
// optional key/value cache) behind numeric handles, and the call-frame
// runners that create, fill, run and free them (listed in call.cpp).
// Plain C++ (no Emscripten), like call.hpp.
//
// Loading: gpt2_create (numbers layers, heads, dModel, vocabSize,
// contextLength → number "model"), then per tensor gpt2_weight (model, text
// name, number write=1 → numbers address, size: the TS layer decodes the
// file's tensor straight into that storage), then gpt2_finish (every tensor
// filled and finite). gpt2_free frees the model and its cache; on any error
// while loading the TS layer frees the half-built model.
#pragma once

#include <cstdint>
#include <memory>

#include "call.hpp"

namespace attnscope::bindings {

/// A model of the registry and what lives beside it.
struct ModelEntry {
  std::unique_ptr<Gpt2Model> model;
  std::unique_ptr<Gpt2Cache> cache;
  /// Made beside the cache for a greedy generation (gpt2_cache greedy=1),
  /// freed with it. Refers to `model`: declared after it.
  std::unique_ptr<Gpt2GreedyHead> greedy_head;
  /// The keys and values of the last gpt2_extend's tokens (model.forward
  /// with reusePrefix); dropped whenever the weights change.
  std::unique_ptr<Gpt2Cache> prefix_cache;
  /// Refers to `model`: declared after it, so destroyed before it.
  std::unique_ptr<Gpt2Trainer> trainer;
  std::uint32_t trainer_id = 0;  // counts the trainers made for this model
};

/// The entry of the call's number "model"; throws Error for a freed one.
ModelEntry& model_entry(const Call& c);

void run_gpt2_create(Call& c);
/// write=1: the storage to fill (marks the tensor loaded); write=0: to read,
/// in row order: the storage (address, size) where it is stored so, else a
/// copy (values) of a block matrix the model keeps in panels.
void run_gpt2_weight(Call& c);
void run_gpt2_finish(Call& c);
/// counts tokens, number trace, text logits ("all" | "last") → logits (T, V) or (1, V),
/// attentions.{l} (H, T, T), hidden.{l} (T, C);
/// counts ablate / replace / maskTokens (see forward_options in models.cpp) → diff.logits,
/// diff.attentions.{l}; number attribution → attribution.rollout.{l} (T, T),
/// attribution.valueNorms.{l} (H, T, T); number logitLensTopK → logitLens.ids, .probabilities.
void run_gpt2_forward(Call& c);
/// number capacity: a fresh, empty cache of that many positions; 0 frees it.
/// number greedy=1: also a Gpt2GreedyHead, where there is memory for it.
void run_gpt2_cache(Call& c);
/// counts tokens → logits (V) of the last of them, number cacheLength; with
/// a greedy head, number token (the argmax) instead of the logits, unless
/// the head could not decide it.
void run_gpt2_step(Call& c);
/// counts tokens, number keep, number trace, text logits → number first (the tokens kept),
/// logits and with trace attentions.{l}, hidden.{l}: the rows from `first` on.
void run_gpt2_extend(Call& c);
void run_gpt2_free(Call& c);

}  // namespace attnscope::bindings
