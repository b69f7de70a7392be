// The GPT-2 model's weight store: one tensor per Hugging Face name, handed
// out for loading and checked once loaded, the blocks' matrices then stored
// in the products' panels; and the key/value cache.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <new>
#include <string>

#include "allocate.hpp"
#include "attnscope/gpt2.hpp"
#include "attnscope/matmul_tile.hpp"
#include "gpt2_internal.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/panel_matrix.hpp"
#include "kernels/scan.hpp"

namespace attnscope {

namespace {

void check_config(const Gpt2Config& c, const char* fn) {
  const std::pair<const char*, std::size_t> fields[] = {
      {"layers", c.layers},
      {"heads", c.heads},
      {"d_model", c.d_model},
      {"vocab_size", c.vocab_size},
      {"context_length", c.context_length},
  };
  for (const auto& [name, value] : fields) {
    if (value == 0) throw Error(std::string(fn) + ": config." + name + " is 0, expected >= 1");
  }
  if (c.d_model % c.heads != 0) {
    throw Error(std::string(fn) + ": config.d_model=" + std::to_string(c.d_model) +
                " is not a multiple of config.heads=" + std::to_string(c.heads));
  }
}

}  // namespace

Gpt2Model::Gpt2Model(const Gpt2Config& config) : config_(config) {
  const char* fn = "Gpt2Model";
  check_config(config, fn);
  const std::size_t C = config.d_model;
  std::size_t total = 0;
  auto add = [&](std::string name, Shape shape, bool matrix = false) {
    const std::string what = std::string(fn) + ": weight " + name;
    const std::size_t size = checked_element_count(shape, what.c_str());
    slots_.push_back({std::move(name), std::move(shape), total, size, false, matrix, false});
    if (size > SIZE_MAX - total) throw ResourceError(what + ": the weights cannot be counted");
    total += size;
  };
  add("wte.weight", {config.vocab_size, C});
  add("wpe.weight", {config.context_length, C});
  const Shape layer_shapes[] = {{C}, {C}, {C, 3 * C}, {3 * C}, {C, C},     {C},
                                {C}, {C}, {C, 4 * C}, {4 * C}, {4 * C, C}, {C}};
  for (std::size_t l = 0; l < config.layers; ++l) {
    for (std::size_t i = 0; i < detail::kGpt2LayerTensors; ++i) {
      add("h." + std::to_string(l) + "." + detail::kGpt2LayerSuffixes[i], layer_shapes[i],
          layer_shapes[i].size() == 2);
    }
  }
  add("ln_f.weight", {C});
  add("ln_f.bias", {C});
  storage_ = detail::allocate_zeros({total}, "Gpt2Model: weights").data;
}

std::vector<std::string> Gpt2Model::weight_names() const {
  std::vector<std::string> names;
  names.reserve(slots_.size());
  for (const Slot& s : slots_) names.push_back(s.name);
  return names;
}

std::size_t Gpt2Model::index_of(const std::string& name, const char* fn) const {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].name == name) return i;
  }
  throw Error(std::string(fn) + ": '" + name + "' is not a tensor of a GPT-2 model with " +
              std::to_string(config_.layers) + " layers");
}

const Shape& Gpt2Model::weight_shape(const std::string& name) const {
  return slots_[index_of(name, "Gpt2Model::weight_shape")].shape;
}

float* Gpt2Model::weight_data(const std::string& name) {
  const char* fn = "Gpt2Model::weight_data";
  Slot& slot = slots_[index_of(name, fn)];
  to_row_order(slot, fn);  // a caller may write only part of it
  slot.filled = true;
  finished_ = false;  // the caller may write anything into it
  ++weights_version_;
  return storage_.data() + slot.offset;
}

TensorView Gpt2Model::weight(const std::string& name) {
  const char* fn = "Gpt2Model::weight";
  Slot& slot = slots_[index_of(name, fn)];
  to_row_order(slot, fn);
  return TensorView(slot.shape, storage_.data() + slot.offset, slot.size);
}

void Gpt2Model::copy_weight(const std::string& name, float* out) const {
  const Slot& slot = slots_[index_of(name, "Gpt2Model::copy_weight")];
  const float* from = storage_.data() + slot.offset;
  if (slot.in_panels) {
    kernels::unpack_panels(from, slot.shape[0], slot.shape[1], panel_width_, out);
  } else {
    std::copy_n(from, slot.size, out);
  }
}

bool Gpt2Model::in_panels(const std::string& name) const {
  return slots_[index_of(name, "Gpt2Model::in_panels")].in_panels;
}

bool Gpt2Model::reorder(Slot& s, bool into_panels) {
  std::vector<float> from;
  try {
    from.assign(storage_.begin() + s.offset, storage_.begin() + s.offset + s.size);
  } catch (const std::bad_alloc&) {
    return false;
  }
  float* to = storage_.data() + s.offset;
  if (into_panels) {
    kernels::pack_panels(from.data(), s.shape[0], s.shape[1], panel_width_, to);
  } else {
    kernels::unpack_panels(from.data(), s.shape[0], s.shape[1], panel_width_, to);
  }
  s.in_panels = into_panels;
  return true;
}

void Gpt2Model::to_row_order(Slot& s, const char* fn) {
  if (s.in_panels && !reorder(s, false)) {
    throw ResourceError(std::string(fn) + ": no memory to put " + s.name + " (" +
                        std::to_string(s.size) + " floats) back in row order");
  }
}

void Gpt2Model::finish() {
  check_weights();
  store_in_panels();
  // Here, not in the first forward: loading already takes a while. Only for
  // a model wide enough for the height to matter; a small one (the site's
  // own is 128 wide) loads without the milliseconds of measuring.
  constexpr std::size_t kWideEnoughToMeasure = 512;
  if (config_.d_model >= kWideEnoughToMeasure) measure_matmul_tile_rows_once();
}

void Gpt2Model::check_weights() {
  for (const Slot& s : slots_) {
    if (!s.filled) throw Error("Gpt2Model::finish: tensor " + s.name + " was never loaded");
    if (kernels::all_finite(storage_.data() + s.offset, s.size)) continue;
    // Something is not finite: find the first culprit, value by value.
    for (std::size_t i = 0; i < s.size; ++i) {
      if (!std::isfinite(storage_[s.offset + i])) {
        throw Error("Gpt2Model::finish: tensor " + s.name + " has a non-finite value at index " +
                    std::to_string(i));
      }
    }
  }
  finished_ = true;
}

void Gpt2Model::store_in_panels() {
  panel_width_ = kernels::matmul_panel_width_best();
  for (Slot& s : slots_) {
    if (!s.matrix || s.in_panels) continue;
    if (!reorder(s, true)) return;  // the rest stay in row order, which the passes read too
  }
}

void Gpt2Model::check_ready(const char* fn) const {
  if (!finished_) {
    throw Error(std::string(fn) +
                ": the model's weights are not all loaded and checked (call finish() first)");
  }
}

detail::Gpt2Weights Gpt2Model::weights_view() const {
  detail::Gpt2Weights w;
  auto at = [&](std::size_t i) { return storage_.data() + slots_[i].offset; };
  w.wte = at(0);
  w.wpe = at(1);
  for (std::size_t l = 0; l < config_.layers; ++l) {
    const std::size_t b = 2 + l * detail::kGpt2LayerTensors;
    w.layers.push_back({at(b), at(b + 1), at(b + 2), at(b + 3), at(b + 4), at(b + 5), at(b + 6),
                        at(b + 7), at(b + 8), at(b + 9), at(b + 10), at(b + 11)});
    auto width = [&](std::size_t i) { return slots_[i].in_panels ? panel_width_ : 0; };
    detail::Gpt2LayerWeights& lw = w.layers.back();
    lw.attn_panels = width(b + 2);
    lw.proj_panels = width(b + 4);
    lw.fc_panels = width(b + 8);
    lw.mlp_proj_panels = width(b + 10);
  }
  w.lnf_gamma = at(slots_.size() - 2);
  w.lnf_beta = at(slots_.size() - 1);
  return w;
}

void Gpt2Cache::truncate(std::size_t length) {
  if (length > length_) {
    throw Error("Gpt2Cache::truncate: length is " + std::to_string(length) + ", beyond the " +
                std::to_string(length_) + " cached positions");
  }
  length_ = length;
}

Gpt2Cache::Gpt2Cache(const Gpt2Config& config, std::size_t capacity) {
  const char* fn = "Gpt2Cache";
  check_config(config, fn);
  if (capacity == 0 || capacity > config.context_length) {
    throw Error(std::string(fn) + ": capacity is " + std::to_string(capacity) +
                ", expected 1..context_length=" + std::to_string(config.context_length));
  }
  heads_ = config.heads;
  head_dim_ = config.d_model / config.heads;
  capacity_ = capacity;
  for (std::size_t l = 0; l < config.layers; ++l) {
    keys_.push_back(detail::allocate_zeros({heads_, capacity, head_dim_}, "Gpt2Cache: keys"));
    values_.push_back(detail::allocate_zeros({heads_, capacity, head_dim_}, "Gpt2Cache: values"));
  }
}

}  // namespace attnscope
