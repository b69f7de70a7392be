// GPT-2 on several threads (set_threads) gives the one-thread results bit for
// bit: the whole forward (fast and traced, every row's logits or the last
// one's), cached decode steps and extend, and a training step's loss,
// gradients and updated weights, at 1, 2 and 3 threads. The shape is big
// enough for every split to happen (matmuls by columns and by rows, the
// row-by-row decode products, the LM head, LayerNorm, GELU and the heads).
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "attnscope/gpt2.hpp"
#include "attnscope/threads.hpp"
#include "attnscope/train.hpp"
#include "test_kernels_support.hpp"
#include "test_one_thread_after.hpp"

using namespace attnscope;

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)

using attnscope::testing::OneThreadAfter;
using attnscope::testing::same_bits;

namespace {

const Gpt2Config kConfig{2, 6, 192, 1000, 64};

std::vector<std::int64_t> tokens_of(std::size_t n, std::size_t salt) {
  std::vector<std::int64_t> t(n);
  for (std::size_t i = 0; i < n; ++i) t[i] = static_cast<std::int64_t>((i * 7919 + salt) % 1000);
  return t;
}

/// Everything one run computes, flattened: forward logits (fast and traced,
/// with the trace), each decode step's logits, extend's logits, and the last
/// position's logits alone.
std::vector<std::vector<float>> model_outputs(const Gpt2Model& model) {
  std::vector<std::vector<float>> out;
  const auto prompt = tokens_of(40, 1);
  out.push_back(model.forward(prompt, false).logits.data);
  const Gpt2Output traced = model.forward(prompt, true);
  out.push_back(traced.logits.data);
  for (const Tensor& a : traced.trace->attentions) out.push_back(a.data);
  for (const Tensor& h : traced.trace->hidden) out.push_back(h.data);
  Gpt2Cache cache(kConfig, 64);
  out.push_back(model.step(cache, tokens_of(20, 2)).data);
  for (std::int64_t t = 0; t < 8; ++t) out.push_back(model.step(cache, {t * 97 % 1000}).data);
  cache.truncate(10);
  out.push_back(model.extend(cache, tokens_of(5, 3), false).logits.data);
  // The last position's logits alone, fast and traced, and after an edit.
  Gpt2ForwardOptions last;
  last.logits = Gpt2Logits::kLast;
  for (const bool trace : {false, true}) {
    last.trace = trace;
    out.push_back(model.forward(prompt, last).logits.data);
  }
  cache.truncate(12);
  out.push_back(model.extend(cache, tokens_of(9, 4), true, Gpt2Logits::kLast).logits.data);
  return out;
}

/// A training step's loss, then every weight after it.
std::vector<std::vector<float>> training_outputs() {
  Gpt2Model model(kConfig);
  initialize_gpt2(model, 4);
  AdamWOptions o;
  o.lr = 1e-2f;
  o.clip = 1.0f;
  Gpt2Trainer trainer(model, o);
  const double loss = trainer.step(tokens_of(2 * 33, 5), 2).loss;
  std::vector<std::vector<float>> out{{static_cast<float>(loss)}};
  for (const std::string& name : model.weight_names()) {
    const TensorView w = model.weight(name);
    out.emplace_back(w.data, w.data + w.size);
  }
  return out;
}

void require_same(const std::vector<std::vector<float>>& got,
                  const std::vector<std::vector<float>>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("output " << i);
    CHECK(same_bits(got[i], want[i]));
  }
}

}  // namespace

TEST_CASE("gpt2 on 2 and 3 threads: forward, decode steps and extend, bit for bit", "[threads]") {
  OneThreadAfter restore;
  Gpt2Model model(kConfig);
  initialize_gpt2(model, 7);
  set_threads(1);
  const auto want = model_outputs(model);
  for (std::size_t threads : {2u, 3u}) {
    INFO(threads << " threads");
    set_threads(threads);
    require_same(model_outputs(model), want);
  }
}

TEST_CASE("gpt2 training step on 2 and 3 threads: loss and weights bit for bit", "[threads]") {
  OneThreadAfter restore;
  set_threads(1);
  const auto want = training_outputs();
  for (std::size_t threads : {2u, 3u}) {
    INFO(threads << " threads");
    set_threads(threads);
    require_same(training_outputs(), want);
  }
}

#endif
