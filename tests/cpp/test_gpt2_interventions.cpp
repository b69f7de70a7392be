// GPT-2's forward options in the core: the identities that pin the
// interventions down (a head given its own pattern is the clean run bit for
// bit, a layer with every head zeroed adds only c_proj's bias), the diff,
// and the errors naming the argument. The package's tests check the values
// against the double reference (tests/js/model-interventions.test.mjs).
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attnscope/gpt2.hpp"
#include "test_gpt2_reference.hpp"

using attnscope::Gpt2Config;
using attnscope::Gpt2ForwardOptions;
using attnscope::Gpt2HeadAblation;
using attnscope::testing::random_gpt2;

namespace {

const Gpt2Config kConfig{/*layers=*/3, /*heads=*/2, /*d_model=*/16, /*vocab_size=*/23,
                         /*context_length=*/12};
const std::vector<std::int64_t> kTokens{4, 8, 15, 16, 2, 3, 4};

std::string error_of(const attnscope::Gpt2Model& model, const Gpt2ForwardOptions& options) {
  try {
    model.forward(kTokens, options);
  } catch (const attnscope::Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("gpt2 interventions: a head replaced by its own pattern is the clean run bit for bit") {
  const auto model = random_gpt2(kConfig, 21);
  const auto clean = model.forward(kTokens, true);
  for (std::size_t l = 0; l < kConfig.layers; ++l) {
    for (std::size_t h = 0; h < kConfig.heads; ++h) {
      Gpt2ForwardOptions options;
      options.interventions.replace.push_back({l, h, l, h});
      const auto got = model.forward(kTokens, options);
      REQUIRE(got.logits.data == clean.logits.data);
      REQUIRE(got.diff.has_value());
      for (float x : got.diff->logits.data) REQUIRE(x == 0.0f);
    }
  }
}

TEST_CASE("gpt2 interventions: every head of a layer zeroed leaves only c_proj's bias") {
  auto model = random_gpt2(kConfig, 22);
  Gpt2ForwardOptions options;
  for (std::size_t h = 0; h < kConfig.heads; ++h) {
    options.interventions.ablate.push_back({1, h, Gpt2HeadAblation::Mode::kZero});
  }
  const auto ablated = model.forward(kTokens, options);
  const auto clean = model.forward(kTokens, true);
  bool changed = false;
  for (std::size_t i = 0; i < clean.logits.data.size(); ++i) {
    changed = changed || ablated.diff->logits.data[i] != 0.0f;
  }
  REQUIRE(changed);
  const auto shape = model.weight_shape("h.1.attn.c_proj.weight");
  float* w = model.weight_data("h.1.attn.c_proj.weight");
  std::fill(w, w + shape[0] * shape[1], 0.0f);
  model.finish();
  REQUIRE(model.forward(kTokens, true).logits.data == ablated.logits.data);
}

TEST_CASE("gpt2 interventions: bad options throw Error naming the argument") {
  const auto model = random_gpt2(kConfig, 23);
  Gpt2ForwardOptions o;
  o.interventions.ablate.push_back({3, 0, Gpt2HeadAblation::Mode::kZero});
  CHECK_THAT(error_of(model, o), Catch::Contains("interventions.ablate[0].layer is 3"));
  o = {};
  o.interventions.replace.push_back({0, 0, 0, 2});
  CHECK_THAT(error_of(model, o), Catch::Contains("interventions.replace[0].from.head is 2"));
  o = {};
  o.interventions.ablate.push_back({0, 1, Gpt2HeadAblation::Mode::kMean});
  o.interventions.replace.push_back({0, 1, 2, 0});
  CHECK_THAT(error_of(model, o),
             Catch::Contains("interventions.replace[0] targets layer 0 head 1"));
  o = {};
  o.interventions.mask_tokens = {1, 7};
  CHECK_THAT(error_of(model, o), Catch::Contains("interventions.maskTokens[1] is 7"));
  o = {};
  o.interventions.mask_tokens = {1, 1};
  CHECK_THAT(error_of(model, o), Catch::Contains("interventions.maskTokens[1] repeats position 1"));
  o = {};
  o.trace = false;
  o.attribution = true;
  CHECK_THAT(error_of(model, o), Catch::Contains("attribution needs trace"));
  o = {};
  o.logit_lens_top_k = 24;
  CHECK_THAT(error_of(model, o), Catch::Contains("logitLens.topK is 24"));
}
