// The model registry of models.hpp and its runners.
#include "models.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attnscope::bindings {
namespace {

// An empty std::map holds no memory, so once every model is freed the heap
// is as it was before the first (tests check memoryUsage()).
std::map<std::uint32_t, ModelEntry>& registry() {
  static std::map<std::uint32_t, ModelEntry> models;
  return models;
}

std::vector<std::int64_t> tokens(const Call& c) {
  const std::vector<std::size_t> ids = c.counts_or_empty("tokens");
  return std::vector<std::int64_t>(ids.begin(), ids.end());
}

double address_of(const float* data) {
  return static_cast<double>(reinterpret_cast<std::uintptr_t>(data));
}

void put_layers(Call& c, const std::string& prefix, std::vector<Tensor>& layers) {
  for (std::size_t l = 0; l < layers.size(); ++l) {
    c.put(prefix + std::to_string(l), std::move(layers[l]));
  }
}

/// counts `name` as records of `width` numbers.
std::vector<std::size_t> records(const Call& c, const char* name, std::size_t width) {
  std::vector<std::size_t> flat = c.counts_or_empty(name);
  if (flat.size() % width != 0) {
    throw Error(std::string("gpt2_forward: ") + name + " holds " + std::to_string(flat.size()) +
                " numbers, not records of " + std::to_string(width));
  }
  return flat;
}

/// text logits: "all" (the default) or "last".
Gpt2Logits logits_rows(const Call& c, const char* fn) {
  const std::string which = c.text_or("logits", "all");
  if (which == "all") return Gpt2Logits::kAll;
  if (which == "last") return Gpt2Logits::kLast;
  throw Error(std::string(fn) + ": logits is '" + which + "', expected 'all' or 'last'");
}

/// ablate: (layer, head, mode 0 = zero | 1 = mean) records; replace:
/// (layer, head, from layer, from head) records; maskTokens: positions.
Gpt2ForwardOptions forward_options(const Call& c) {
  Gpt2ForwardOptions o;
  o.trace = c.number_or("trace", 1) != 0;
  o.logits = logits_rows(c, "gpt2_forward");
  o.attribution = c.number_or("attribution", 0) != 0;
  o.logit_lens_top_k = static_cast<std::size_t>(c.number_or("logitLensTopK", 0));
  o.last_block_every_row = c.number_or("lastBlockEveryRow", 1) != 0;
  const std::vector<std::size_t> ablate = records(c, "ablate", 3);
  for (std::size_t i = 0; i < ablate.size(); i += 3) {
    if (ablate[i + 2] > 1) throw Error("gpt2_forward: ablate mode code out of range");
    o.interventions.ablate.push_back(
        {ablate[i], ablate[i + 1],
         ablate[i + 2] == 0 ? Gpt2HeadAblation::Mode::kZero : Gpt2HeadAblation::Mode::kMean});
  }
  const std::vector<std::size_t> replace = records(c, "replace", 4);
  for (std::size_t i = 0; i < replace.size(); i += 4) {
    o.interventions.replace.push_back({replace[i], replace[i + 1], replace[i + 2], replace[i + 3]});
  }
  o.interventions.mask_tokens = c.counts_or_empty("maskTokens");
  return o;
}

}  // namespace

ModelEntry& model_entry(const Call& c) {
  const std::size_t handle = c.size_number("model");
  const auto it = registry().find(static_cast<std::uint32_t>(handle));
  if (handle > UINT32_MAX || it == registry().end()) {
    throw Error("model " + std::to_string(handle) + " does not exist (it was disposed)");
  }
  return it->second;
}

void run_gpt2_create(Call& c) {
  static std::uint32_t next_handle = 0;
  Gpt2Config config;
  config.layers = c.size_number("layers");
  config.heads = c.size_number("heads");
  config.d_model = c.size_number("dModel");
  config.vocab_size = c.size_number("vocabSize");
  config.context_length = c.size_number("contextLength");
  auto model = std::make_unique<Gpt2Model>(config);
  const std::uint32_t handle = ++next_handle;
  registry()[handle].model = std::move(model);
  c.put("model", static_cast<double>(handle));
}

void run_gpt2_weight(Call& c) {
  ModelEntry& e = model_entry(c);
  const std::string name = c.text_or("name", "");
  const Shape& shape = e.model->weight_shape(name);
  const bool write = c.number_or("write", 0) != 0;
  if (write) e.prefix_cache.reset();  // its keys and values came from the old weights
  if (!write && e.model->in_panels(name)) {
    // Read in row order without reordering the model's own copy.
    Tensor values = Tensor::zeros(shape);
    e.model->copy_weight(name, values.data.data());
    c.put("values", std::move(values));
    return;
  }
  const float* data = write ? e.model->weight_data(name) : e.model->weight(name).data;
  std::size_t size = 1;
  for (std::size_t d : shape) size *= d;
  c.put("address", address_of(data));
  c.put("size", static_cast<double>(size));
}

void run_gpt2_finish(Call& c) { model_entry(c).model->finish(); }

void run_gpt2_forward(Call& c) {
  ModelEntry& e = model_entry(c);
  Gpt2Output out = e.model->forward(tokens(c), forward_options(c));
  c.put("logits", std::move(out.logits));
  if (out.diff) {
    c.put("diff.logits", std::move(out.diff->logits));
    put_layers(c, "diff.attentions.", out.diff->attentions);
  }
  if (out.attribution) {
    put_layers(c, "attribution.rollout.", out.attribution->rollout);
    put_layers(c, "attribution.valueNorms.", out.attribution->value_norms);
  }
  if (out.logit_lens) {
    c.put("logitLens.ids", std::move(out.logit_lens->ids));
    c.put("logitLens.probabilities", std::move(out.logit_lens->probabilities));
  }
  if (!out.trace) return;
  put_layers(c, "attentions.", out.trace->attentions);
  put_layers(c, "hidden.", out.trace->hidden);
}

void run_gpt2_cache(Call& c) {
  ModelEntry& e = model_entry(c);
  const std::size_t capacity = c.size_number("capacity");
  e.greedy_head.reset();
  e.cache.reset();  // the old cache goes first, so that both never coexist
  if (capacity == 0) return;
  e.cache = std::make_unique<Gpt2Cache>(e.model->config(), capacity);
  if (c.number_or("greedy", 0) == 0) return;
  try {
    e.greedy_head = std::make_unique<Gpt2GreedyHead>(*e.model);
  } catch (const ResourceError&) {
    // Generation runs as well without it, on every float32 logit.
  }
}

void run_gpt2_step(Call& c) {
  ModelEntry& e = model_entry(c);
  if (!e.cache) throw Error("step: the model has no cache (start generating first)");
  if (e.greedy_head) {
    Gpt2GreedyStep step = e.model->step_greedy(*e.cache, tokens(c), *e.greedy_head);
    if (step.token >= 0) {
      c.put("token", static_cast<double>(step.token));
    } else {
      c.put("logits", std::move(step.logits));
    }
  } else {
    c.put("logits", e.model->step(*e.cache, tokens(c)));
  }
  c.put("cacheLength", static_cast<double>(e.cache->length()));
}

void run_gpt2_extend(Call& c) {
  ModelEntry& e = model_entry(c);
  const std::vector<std::int64_t> all = tokens(c);
  if (all.empty()) throw Error("forward: tokens is empty, expected at least one token");
  const Gpt2Logits logits = logits_rows(c, "gpt2_extend");
  if (!e.prefix_cache) {
    e.prefix_cache =
        std::make_unique<Gpt2Cache>(e.model->config(), e.model->config().context_length);
  }
  // The caller's common prefix, as far as the cache still holds it, and at
  // least the last token run again: its row gives the logits.
  const std::size_t keep =
      std::min({c.size_number("keep"), e.prefix_cache->length(), all.size() - 1});
  e.prefix_cache->truncate(keep);
  Gpt2Output out = e.model->extend(
      *e.prefix_cache, std::vector<std::int64_t>(all.begin() + keep, all.end()),
      c.number_or("trace", 0) != 0, logits, c.number_or("lastBlockEveryRow", 1) != 0);
  c.put("first", static_cast<double>(keep));
  c.put("logits", std::move(out.logits));
  if (!out.trace) return;
  put_layers(c, "attentions.", out.trace->attentions);
  put_layers(c, "hidden.", out.trace->hidden);
}

void run_gpt2_free(Call& c) {
  model_entry(c);
  registry().erase(static_cast<std::uint32_t>(c.size_number("model")));
}

}  // namespace attnscope::bindings
