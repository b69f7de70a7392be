// Greedy decoding through Gpt2GreedyHead: every step's token is the argmax of
// step()'s logits (the lowest id among equal ones), at widths that leave the
// 8-bit copy's rows padded with zeros, on several threads, with ties and near
// ties below the copy's resolution, with a token that leads only in the copy,
// with large logits; logits beyond the bound's range give step()'s logits
// instead; a head of other weights is refused before the cache changes.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "attnscope/gpt2.hpp"
#include "attnscope/threads.hpp"
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
/// `nudge`·k in element k % C (far below the 8-bit copy's resolution), then
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

TEST_CASE("greedy steps through the 8-bit head give step()'s argmax", "[gpt2][greedy]") {
  // d_model 32: whole blocks of 16; 30, 31 and 40: rows padded with zeros.
  for (const std::size_t C : {32u, 30u, 31u, 40u}) {
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
  // 10⁷ (the 8-bit copy keeps parts in 254): the head cannot tell them apart, only
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

TEST_CASE("greedy steps rule out a token that leads only in the 8-bit copy", "[gpt2][greedy]") {
  // h: the prompt's last row after the final LayerNorm. Token 2000's row is
  // 2·h on the copy's grid (steps of s = max|2·h| / 127), the largest logit
  // by far. Token 1000's row holds the same grid values, one of them a step
  // further along h, and every value but the largest then moved by 0.45 of a
  // step against h: the copy rounds it back, with the same scale, so in the
  // copy token 1000 leads, while in float32 it trails.
  const Gpt2Config config{2, 4, 32, 2101, 64};
  const std::size_t C = config.d_model;
  Gpt2Model model = random_gpt2(config, 5);
  const Gpt2Output traced = model.forward(kPrompt, /*trace=*/true);
  const float* h = traced.trace->hidden.back().data.data() + (kPrompt.size() - 1) * C;
  std::size_t largest = 0;
  for (std::size_t i = 1; i < C; ++i) {
    if (std::fabs(h[i]) > std::fabs(h[largest])) largest = i;
  }
  const float step = 2.0f * std::fabs(h[largest]) / 127.0f;
  const auto toward = [](float hi) { return hi < 0.0f ? -1.0f : 1.0f; };
  float* wte = model.weight_data("wte.weight");
  float* leader = wte + 2000 * C;
  float* rival = wte + 1000 * C;
  float total = 0.0f;  // what moving every value but the largest by a step along h adds
  for (std::size_t i = 0; i < C; ++i) {
    leader[i] =
        i == largest ? 127.0f * toward(h[i]) * step : std::nearbyint(2.0f * h[i] / step) * step;
    if (i != largest) total += std::fabs(h[i]) * step;
  }
  std::size_t raised = largest == 0 ? 1 : 0;  // the largest gain below a quarter of the total
  for (std::size_t i = 0; i < C; ++i) {
    const float gain = std::fabs(h[i]) * step;
    if (i != largest && gain < 0.25f * total && gain > std::fabs(h[raised]) * step) raised = i;
  }
  REQUIRE(std::fabs(leader[raised] / step) < 126.0f);
  for (std::size_t i = 0; i < C; ++i) {
    if (i == largest) {
      rival[i] = leader[i];
      continue;
    }
    const float stored = leader[i] + (i == raised ? toward(h[i]) * step : 0.0f);
    rival[i] = stored - toward(h[i]) * 0.45f * step;
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

TEST_CASE("an embedding value near float32's largest gives step()'s logits", "[gpt2][greedy]") {
  const Gpt2Config config{2, 4, 32, 2101, 64};
  Gpt2Model model = random_gpt2(config, 9);
  // 3.4e38 is a finite float32 whose logit the bound cannot keep from
  // overflowing; row 2000 is no token of the prompt.
  model.weight_data("wte.weight")[2000 * config.d_model] = 3.4e38f;
  model.finish();
  const Gpt2GreedyHead head(model);
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
