// GPT-2's public forward pass and cached step: their checks, the key/value
// storage each gives the pass, and the logits.
#include <string>
#include <vector>

#include "allocate.hpp"
#include "attnscope/gpt2.hpp"
#include "gpt2_internal.hpp"

namespace attnscope {

namespace {

void check_count(std::size_t count, std::size_t room, const char* fn,
                 const std::string& room_name) {
  if (count == 0) throw Error(std::string(fn) + ": tokens is empty, expected at least one token");
  if (count > room) {
    throw Error(std::string(fn) + ": tokens has " + std::to_string(count) + " tokens, more than " +
                room_name + "=" + std::to_string(room));
  }
}

}  // namespace

Gpt2Output Gpt2Model::forward(const std::vector<std::int64_t>& tokens, bool trace) const {
  const char* fn = "Gpt2Model::forward";
  check_ready(fn);
  const std::size_t T = tokens.size(), C = config_.d_model, H = config_.heads;
  check_count(T, config_.context_length, fn, "context_length");
  detail::check_gpt2_tokens(tokens, config_.vocab_size, fn);

  // Every block's keys and values are used only inside it: one store serves all.
  const std::size_t d = C / H;
  std::vector<float> keys = detail::allocate_zeros({H * T * d}, "gpt2: keys").data;
  std::vector<float> values = detail::allocate_zeros({H * T * d}, "gpt2: values").data;
  const std::vector<detail::Gpt2KeyValues> kv(config_.layers, {keys.data(), values.data(), T * d});
  Gpt2Output out;
  if (trace) out.trace.emplace();
  const Tensor hidden = detail::gpt2_pass(config_, weights_view(), tokens.data(), T, 0, kv,
                                          trace ? &*out.trace : nullptr);
  out.logits = detail::allocate_zeros({T, config_.vocab_size}, "gpt2: logits");
  detail::gpt2_logits(hidden.data.data(), T, storage_.data(), config_.vocab_size, C,
                      out.logits.data.data());
  return out;
}

Tensor Gpt2Model::step(Gpt2Cache& cache, const std::vector<std::int64_t>& tokens) const {
  const char* fn = "Gpt2Model::step";
  check_ready(fn);
  if (cache.keys_.size() != config_.layers || cache.heads_ != config_.heads ||
      cache.heads_ * cache.head_dim_ != config_.d_model) {
    throw Error(std::string(fn) + ": cache was made for another model's config");
  }
  const std::size_t first = cache.length_;
  check_count(tokens.size(), cache.capacity_ - first, fn,
              "the room left in the cache (capacity " + std::to_string(cache.capacity_) + " − " +
                  std::to_string(first) + " cached)");
  detail::check_gpt2_tokens(tokens, config_.vocab_size, fn);

  std::vector<detail::Gpt2KeyValues> kv;
  for (std::size_t l = 0; l < config_.layers; ++l) {
    kv.push_back({cache.keys_[l].data.data(), cache.values_[l].data.data(),
                  cache.capacity_ * cache.head_dim_});
  }
  const std::size_t C = config_.d_model, T = tokens.size();
  const Tensor hidden =
      detail::gpt2_pass(config_, weights_view(), tokens.data(), T, first, kv, nullptr);
  cache.length_ = first + T;
  Tensor logits = detail::allocate_zeros({config_.vocab_size}, "gpt2: logits");
  detail::gpt2_logits(hidden.data.data() + (T - 1) * C, 1, storage_.data(), config_.vocab_size, C,
                      logits.data.data());
  return logits;
}

}  // namespace attnscope
