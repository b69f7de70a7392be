// Greedy decoding through Gpt2GreedyHead: every step's token is the argmax of
// step()'s logits (the lowest id among equal ones), at widths that leave the
// bfloat16 kernel a scalar tail or an odd last element, on several threads,
// with ties and near ties below bfloat16's resolution, with large logits; an
// embedding beyond bfloat16's range gives step()'s logits instead; a head of
// other weights is refused before the cache changes.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "attnscope/gpt2.hpp"
#include "attnscope/threads.hpp"
#include "kernels/dot_bf16.hpp"
#include "test_gpt2_reference.hpp"
#include "test_kernels_support.hpp"
#include "test_one_thread_after.hpp"

using namespace attnscope;
using attnscope::testing::OneThreadAfter;
using attnscope::testing::random_gpt2;
using attnscope::testing::same_bits;
using Catch::Matchers::Contains;

namespace {

/// The lowest id among the largest logits, as model.generate picks it.
std::int64_t argmax_of(const Tensor& logits) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < logits.data.size(); ++i) {
    if (logits.data[i] > logits.data[best]) best = i;
  }
  return static_cast<std::int64_t>(best);
}

const std::vector<std::int64_t> kPrompt = {3, 1, 4, 1, 5, 9, 2, 6};

/// `steps` greedy steps through the head, each checked against step()'s
/// argmax on a second cache fed the same tokens.
void require_greedy_equals_step(const Gpt2Model& model, std::size_t steps) {
  const Gpt2GreedyHead head(model);
  REQUIRE(head.usable());
  Gpt2Cache greedy_cache(model.config(), kPrompt.size() + steps);
  Gpt2Cache step_cache(model.config(), kPrompt.size() + steps);
  std::vector<std::int64_t> next = kPrompt;
  for (std::size_t s = 0; s < steps; ++s) {
    const Gpt2GreedyStep greedy = model.step_greedy(greedy_cache, next, head);
    const std::int64_t expected = argmax_of(model.step(step_cache, next));
    REQUIRE(greedy.token == expected);
    next = {expected};
  }
}

/// Gives `rows` of the embedding the values of row `base`, row k moved by
/// `nudge`·k in element k % C (far below bfloat16's resolution), then
/// finishes the model again.
void copy_rows(Gpt2Model& model, const std::vector<std::size_t>& rows, std::size_t base,
               float nudge) {
  const std::size_t C = model.config().d_model;
  float* wte = model.weight_data("wte.weight");
  for (std::size_t k = 0; k < rows.size(); ++k) {
    std::copy(wte + base * C, wte + (base + 1) * C, wte + rows[k] * C);
    wte[rows[k] * C + k % C] += nudge * static_cast<float>(k) * wte[base * C + k % C];
  }
  model.finish();
}

}  // namespace

TEST_CASE("greedy steps through the bfloat16 head give step()'s argmax", "[gpt2][greedy]") {
  // d_model 32: whole batches; 30: a scalar tail of words; 31: an odd last element.
  for (const std::size_t C : {32u, 30u, 31u}) {
    const std::size_t heads = C == 31 ? 1 : 2;
    const Gpt2Config config{/*layers=*/2, heads, C, /*vocab_size=*/2101, /*context_length=*/64};
    INFO("d_model " << C);
    require_greedy_equals_step(random_gpt2(config, 7 + static_cast<std::uint32_t>(C)), 40);
  }
}

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)  // builds that start threads
TEST_CASE("greedy steps on 2 and 3 threads give one thread's tokens", "[gpt2][greedy][threads]") {
  const Gpt2Config config{2, 4, 32, 2101, 64};
  const Gpt2Model model = random_gpt2(config, 11);
  OneThreadAfter restore;
  for (const std::size_t threads : {2u, 3u}) {
    set_threads(threads);
    INFO(threads << " threads");
    require_greedy_equals_step(model, 24);
  }
}
#endif

TEST_CASE("greedy steps pick the exact argmax among near ties and the lowest id of a tie",
          "[gpt2][greedy]") {
  const Gpt2Config config{2, 4, 32, 2101, 64};
  Gpt2Model model = random_gpt2(config, 5);
  Gpt2Cache cache(config, kPrompt.size());
  const std::size_t best = static_cast<std::size_t>(argmax_of(model.step(cache, kPrompt)));
  // Rows on both sides of the argmax become copies of it, nudged by parts in
  // 10⁷ (bfloat16 keeps parts in 256): the head cannot tell them apart, only
  // float32 can. Rows of the prompt's tokens keep their embedding.
  std::vector<std::size_t> rows;
  for (std::size_t v = 20; v < config.vocab_size && rows.size() < 12; v += 97) {
    if (v != best) rows.push_back(v);
  }
  SECTION("near ties") { copy_rows(model, rows, best, 3e-7f); }
  SECTION("an exact tie with a lower id") { copy_rows(model, {10}, best, 0.0f); }
  SECTION("near ties, one of them exact") {
    rows.insert(rows.begin(), 10);
    copy_rows(model, rows, best, -2e-7f);
  }
  const Gpt2GreedyHead head(model);
  Gpt2Cache greedy_cache(config, kPrompt.size());
  Gpt2Cache step_cache(config, kPrompt.size());
  const Gpt2GreedyStep greedy = model.step_greedy(greedy_cache, kPrompt, head);
  const Tensor logits = model.step(step_cache, kPrompt);
  REQUIRE(greedy.token == argmax_of(logits));
}

TEST_CASE("greedy steps rule out a token that leads only in bfloat16", "[gpt2][greedy]") {
  // Token 2000's row is 2·h in bfloat16 values (h: the prompt's last row
  // after the final LayerNorm), the largest logit by far. Token 1000's row
  // holds the same bfloat16 values, one of them a step further along h, and
  // every value then moved by 0.45 of a step against h: bfloat16 rounds it
  // back, so in bfloat16 token 1000 leads, while in float32 it trails.
  const Gpt2Config config{2, 4, 32, 2101, 64};
  const std::size_t C = config.d_model;
  Gpt2Model model = random_gpt2(config, 5);
  const Gpt2Output traced = model.forward(kPrompt, /*trace=*/true);
  const float* h = traced.trace->hidden.back().data.data() + (kPrompt.size() - 1) * C;
  const auto bfloat16_value = [](float x) {
    return kernels::from_bfloat16(kernels::to_bfloat16(x));
  };
  const auto step_of = [](float x) {  // bfloat16's spacing at x (normal, not a power of two)
    int exponent = 0;
    std::frexp(x, &exponent);
    return std::ldexp(1.0f, exponent - 8);
  };
  const auto toward = [](float hi) { return hi < 0.0f ? -1.0f : 1.0f; };
  float* wte = model.weight_data("wte.weight");
  float* leader = wte + 2000 * C;
  float* rival = wte + 1000 * C;
  std::vector<float> gain(C);  // what one step along h adds to a logit
  float total = 0.0f;
  for (std::size_t i = 0; i < C; ++i) {
    leader[i] = bfloat16_value(2.0f * h[i]);
    gain[i] = std::fabs(h[i]) * step_of(leader[i]);
    total += gain[i];
  }
  std::size_t raised = 0;  // the largest gain below a quarter of their sum
  for (std::size_t i = 0; i < C; ++i) {
    if (gain[i] < 0.25f * total && gain[i] > gain[raised]) raised = i;
  }
  for (std::size_t i = 0; i < C; ++i) {
    const float stored = leader[i] + (i == raised ? toward(h[i]) * step_of(leader[i]) : 0.0f);
    int exponent = 0;
    // Below a power of two the step is half as large: that value stays put.
    const bool power_of_two = std::frexp(stored, &exponent) == 0.5f;
    rival[i] = stored - (power_of_two ? 0.0f : toward(h[i]) * 0.45f * step_of(stored));
    REQUIRE(bfloat16_value(rival[i]) == stored);
  }
  model.finish();
  const Gpt2GreedyHead head(model);
  Gpt2Cache greedy_cache(config, kPrompt.size());
  Gpt2Cache step_cache(config, kPrompt.size());
  const Tensor logits = model.step(step_cache, kPrompt);
  REQUIRE(argmax_of(logits) == 2000);
  REQUIRE(logits.data[1000] < logits.data[2000]);
  CHECK(model.step_greedy(greedy_cache, kPrompt, head).token == 2000);
}

TEST_CASE("greedy steps with large logits give step()'s argmax", "[gpt2][greedy]") {
  const Gpt2Config config{2, 4, 32, 2101, 64};
  require_greedy_equals_step(random_gpt2(config, 3, /*scale=*/40.0f), 16);
}

TEST_CASE("an embedding beyond bfloat16's range gives step()'s logits", "[gpt2][greedy]") {
  const Gpt2Config config{2, 4, 32, 2101, 64};
  Gpt2Model model = random_gpt2(config, 9);
  // 3.4e38 is a finite float32 that rounds to bfloat16's infinity; row 2000
  // is no token of the prompt.
  model.weight_data("wte.weight")[2000 * config.d_model] = 3.4e38f;
  model.finish();
  const Gpt2GreedyHead head(model);
  REQUIRE_FALSE(head.usable());
  Gpt2Cache greedy_cache(config, kPrompt.size());
  Gpt2Cache step_cache(config, kPrompt.size());
  const Gpt2GreedyStep greedy = model.step_greedy(greedy_cache, kPrompt, head);
  CHECK(greedy.token == -1);
  CHECK(greedy.logits.shape == Shape{config.vocab_size});
  CHECK(same_bits(greedy.logits.data, model.step(step_cache, kPrompt).data));
}

TEST_CASE("a greedy head of other weights is refused before the cache changes", "[gpt2][greedy]") {
  const Gpt2Config config{2, 4, 32, 2101, 64};
  Gpt2Model model = random_gpt2(config, 1);
  const Gpt2Model other = random_gpt2(config, 2);
  Gpt2Cache cache(config, 16);
  const Gpt2GreedyHead of_other(other);
  REQUIRE_THROWS_WITH(model.step_greedy(cache, kPrompt, of_other), Contains("another model"));
  const Gpt2GreedyHead before(model);
  model.weight_data("h.0.ln_1.bias")[0] += 1.0f;
  model.finish();
  REQUIRE_THROWS_WITH(model.step_greedy(cache, kPrompt, before), Contains("make it again"));
  CHECK(cache.length() == 0);
  const Gpt2GreedyHead after(model);
  CHECK(model.step_greedy(cache, kPrompt, after).token >= 0);
  CHECK(cache.length() == kPrompt.size());
}
