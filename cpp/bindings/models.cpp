// The model registry of models.hpp and its runners.
#include "models.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attnscope::bindings {
namespace {

struct Entry {
  std::unique_ptr<Gpt2Model> model;
  std::unique_ptr<Gpt2Cache> cache;
};

// An empty std::map holds no memory, so once every model is freed the heap
// is as it was before the first (tests check memoryUsage()).
std::map<std::uint32_t, Entry>& registry() {
  static std::map<std::uint32_t, Entry> models;
  return models;
}

Entry& entry(const Call& c) {
  const std::size_t handle = c.size_number("model");
  const auto it = registry().find(static_cast<std::uint32_t>(handle));
  if (handle > UINT32_MAX || it == registry().end()) {
    throw Error("model " + std::to_string(handle) + " does not exist (it was disposed)");
  }
  return it->second;
}

std::vector<std::int64_t> tokens(const Call& c) {
  const std::vector<std::size_t> ids = c.counts_or_empty("tokens");
  return std::vector<std::int64_t>(ids.begin(), ids.end());
}

double address_of(const float* data) {
  return static_cast<double>(reinterpret_cast<std::uintptr_t>(data));
}

}  // namespace

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
  registry()[handle] = Entry{std::move(model), nullptr};
  c.put("model", static_cast<double>(handle));
}

void run_gpt2_weight(Call& c) {
  Entry& e = entry(c);
  const std::string name = c.text_or("name", "");
  const Shape& shape = e.model->weight_shape(name);
  const float* data =
      c.number_or("write", 0) != 0 ? e.model->weight_data(name) : e.model->weight(name).data;
  std::size_t size = 1;
  for (std::size_t d : shape) size *= d;
  c.put("address", address_of(data));
  c.put("size", static_cast<double>(size));
}

void run_gpt2_finish(Call& c) { entry(c).model->finish(); }

void run_gpt2_forward(Call& c) {
  Entry& e = entry(c);
  Gpt2Output out = e.model->forward(tokens(c), c.number_or("trace", 1) != 0);
  c.put("logits", std::move(out.logits));
  if (!out.trace) return;
  for (std::size_t l = 0; l < out.trace->attentions.size(); ++l) {
    c.put("attentions." + std::to_string(l), std::move(out.trace->attentions[l]));
  }
  for (std::size_t l = 0; l < out.trace->hidden.size(); ++l) {
    c.put("hidden." + std::to_string(l), std::move(out.trace->hidden[l]));
  }
}

void run_gpt2_cache(Call& c) {
  Entry& e = entry(c);
  const std::size_t capacity = c.size_number("capacity");
  e.cache.reset();  // the old cache goes first, so that both never coexist
  if (capacity > 0) e.cache = std::make_unique<Gpt2Cache>(e.model->config(), capacity);
}

void run_gpt2_step(Call& c) {
  Entry& e = entry(c);
  if (!e.cache) throw Error("step: the model has no cache (start generating first)");
  c.put("logits", e.model->step(*e.cache, tokens(c)));
  c.put("cacheLength", static_cast<double>(e.cache->length()));
}

void run_gpt2_free(Call& c) {
  entry(c);
  registry().erase(static_cast<std::uint32_t>(c.size_number("model")));
}

}  // namespace attnscope::bindings
