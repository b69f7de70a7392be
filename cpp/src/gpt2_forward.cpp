// GPT-2's public forward pass and cached step: their checks, the key/value
// storage each gives the pass, and the logits.
#include <optional>
#include <string>
#include <vector>

#include "allocate.hpp"
#include "attnscope/gpt2.hpp"
#include "gpt2_internal.hpp"
#include "thread_pool.hpp"

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

/// The last block on the last row alone (`every_row` false) only where
/// nothing reads the other rows: the logits of the last row, no logit lens.
void check_last_block_rows(bool every_row, Gpt2Logits logits, bool logit_lens, const char* fn) {
  if (every_row || (logits == Gpt2Logits::kLast && !logit_lens)) return;
  throw Error(std::string(fn) +
              ": last_block_every_row false needs logits kLast and no logit lens, which read "
              "every row of the last block");
}

/// The logits of the final LayerNorm's rows `hidden` (rows, C): every row's
/// (rows, V), or with kLast the last row's (1, V). The last row is always
/// computed on its own, one dot product per token as a decode step's (the
/// other rows go through the matmul, whose sums run in another order), so
/// kLast gives it bit for bit as kAll does.
Tensor logits_of(const Tensor& hidden, const float* wte, std::size_t vocab, Gpt2Logits which) {
  const std::size_t rows = hidden.shape[0], C = hidden.shape[1];
  const std::size_t kept = which == Gpt2Logits::kLast ? 1 : rows;
  Tensor logits = detail::allocate_zeros({kept, vocab}, "gpt2: logits");
  // Every row through the product (an odd row count would leave the kernel a
  // scalar tail), then the last row again on its own, as 'last' computes it,
  // so that the two options agree bit for bit on that row.
  if (kept > 1) detail::gpt2_logits(hidden.data.data(), rows, wte, vocab, C, logits.data.data());
  detail::gpt2_logits(hidden.data.data() + (rows - 1) * C, 1, wte, vocab, C,
                      logits.data.data() + (kept - 1) * vocab);
  return logits;
}

/// a − b, elementwise (same shapes).
Tensor difference(const Tensor& a, const Tensor& b) {
  Tensor out = detail::allocate_zeros(a.shape, "gpt2: diff");
  for (std::size_t i = 0; i < a.data.size(); ++i) out.data[i] = a.data[i] - b.data[i];
  return out;
}

}  // namespace

Gpt2Output Gpt2Model::forward(const std::vector<std::int64_t>& tokens, bool trace) const {
  Gpt2ForwardOptions options;
  options.trace = trace;
  return forward(tokens, options);
}

Gpt2Output Gpt2Model::forward(const std::vector<std::int64_t>& tokens,
                              const Gpt2ForwardOptions& options) const {
  const char* fn = "Gpt2Model::forward";
  check_ready(fn);
  const std::size_t T = tokens.size(), C = config_.d_model, H = config_.heads;
  check_count(T, config_.context_length, fn, "context_length");
  detail::check_gpt2_tokens(tokens, config_.vocab_size, fn);
  if (!options.trace && (options.attribution || options.logit_lens_top_k > 0)) {
    throw Error(std::string(fn) + ": " + (options.attribution ? "attribution" : "logitLens") +
                " needs trace");
  }
  check_last_block_rows(options.last_block_every_row, options.logits, options.logit_lens_top_k > 0,
                        fn);
  if (options.logit_lens_top_k > config_.vocab_size) {
    throw Error(std::string(fn) + ": logitLens.topK is " +
                std::to_string(options.logit_lens_top_k) +
                ", expected 1 to vocab_size=" + std::to_string(config_.vocab_size));
  }
  const Gpt2Interventions& iv = options.interventions;
  detail::check_gpt2_interventions(config_, T, iv, fn);

  const detail::KeepPoolAwake awake;
  // Every block's keys and values are used only inside it: one store serves all.
  const std::size_t d = C / H;
  std::vector<float> keys = detail::allocate_zeros({H * T * d}, "gpt2: keys").data;
  std::vector<float> values = detail::allocate_zeros({H * T * d}, "gpt2: values").data;
  const std::vector<detail::Gpt2KeyValues> kv(config_.layers, {keys.data(), values.data(), T * d});
  const detail::Gpt2Weights w = weights_view();
  const auto run = [&](bool traced, const detail::Gpt2PassEdits* edits,
                       std::vector<Tensor>* value_norms) {
    Gpt2Output out;
    if (traced) out.trace.emplace();
    const Tensor hidden =
        detail::gpt2_pass(config_, w, tokens.data(), T, 0, kv, traced ? &*out.trace : nullptr,
                          options.last_block_every_row, edits, value_norms);
    out.logits = logits_of(hidden, storage_.data(), config_.vocab_size, options.logits);
    return out;
  };

  std::optional<Gpt2Output> clean;
  std::optional<detail::Gpt2PassEdits> edits;
  if (!iv.empty()) {
    // Replacements take their patterns from the clean run, so it is traced for them.
    clean = run(options.trace || !iv.replace.empty(), nullptr, nullptr);
    edits = detail::gpt2_pass_edits(config_, T, iv, clean->trace ? &*clean->trace : nullptr);
  }
  std::vector<Tensor> value_norms;
  Gpt2Output out =
      run(options.trace, edits ? &*edits : nullptr, options.attribution ? &value_norms : nullptr);
  if (clean) {
    Gpt2Diff diff;
    diff.logits = difference(out.logits, clean->logits);
    if (options.trace) {
      for (std::size_t l = 0; l < config_.layers; ++l) {
        diff.attentions.push_back(
            difference(out.trace->attentions[l], clean->trace->attentions[l]));
      }
    }
    out.diff = std::move(diff);
  }
  if (options.attribution) {
    out.attribution =
        Gpt2Attribution{detail::gpt2_rollout(out.trace->attentions), std::move(value_norms)};
  }
  if (options.logit_lens_top_k > 0) {
    out.logit_lens = detail::gpt2_logit_lens(config_, w, *out.trace, options.logit_lens_top_k);
  }
  return out;
}

/// The pass of `tokens` after the cache's positions, appending their keys
/// and values: the final LayerNorm's rows (n, C). Checks as step() says.
Tensor Gpt2Model::pass_on_cache(Gpt2Cache& cache, const std::vector<std::int64_t>& tokens,
                                Gpt2Trace* trace, bool last_block_every_row, const char* fn) const {
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
  Tensor hidden = detail::gpt2_pass(config_, weights_view(), tokens.data(), tokens.size(), first,
                                    kv, trace, last_block_every_row);
  cache.length_ = first + tokens.size();
  return hidden;
}

Tensor Gpt2Model::step(Gpt2Cache& cache, const std::vector<std::int64_t>& tokens) const {
  const detail::KeepPoolAwake awake;
  // The logits of the last token only: the last block runs on its row alone.
  const Tensor hidden = pass_on_cache(cache, tokens, nullptr, false, "Gpt2Model::step");
  Tensor logits = logits_of(hidden, storage_.data(), config_.vocab_size, Gpt2Logits::kLast);
  logits.shape = {config_.vocab_size};
  return logits;
}

Gpt2GreedyStep Gpt2Model::step_greedy(Gpt2Cache& cache, const std::vector<std::int64_t>& tokens,
                                      const Gpt2GreedyHead& head) const {
  const char* fn = "Gpt2Model::step_greedy";
  if (head.model_ != this || head.weights_version_ != weights_version_) {
    throw Error(std::string(fn) +
                ": the greedy head was made from another model, or from this one's weights "
                "before they changed; make it again");
  }
  const detail::KeepPoolAwake awake;
  const Tensor hidden = pass_on_cache(cache, tokens, nullptr, false, fn);
  const float* last = hidden.data.data() + (hidden.shape[0] - 1) * config_.d_model;
  Gpt2GreedyStep out;
  if (const std::optional<std::int64_t> token = head.argmax(last, storage_.data())) {
    out.token = *token;
    return out;
  }
  out.logits = logits_of(hidden, storage_.data(), config_.vocab_size, Gpt2Logits::kLast);
  out.logits.shape = {config_.vocab_size};
  return out;
}

Gpt2Output Gpt2Model::extend(Gpt2Cache& cache, const std::vector<std::int64_t>& tokens, bool trace,
                             Gpt2Logits logits, bool last_block_every_row) const {
  const char* fn = "Gpt2Model::extend";
  check_last_block_rows(last_block_every_row, logits, /*logit_lens=*/false, fn);
  Gpt2Output out;
  if (trace) out.trace.emplace();
  const detail::KeepPoolAwake awake;
  const Tensor hidden =
      pass_on_cache(cache, tokens, trace ? &*out.trace : nullptr, last_block_every_row, fn);
  out.logits = logits_of(hidden, storage_.data(), config_.vocab_size, logits);
  return out;
}

}  // namespace attnscope
