// GPT-2's logits of the last position only (Gpt2Logits::kLast): the last row
// of every-row logits bit for bit, from a whole forward (traced and fast, with
// and without interventions, at lengths that take the LM head's row-by-row and
// matmul paths) and from extend after edits; everything else the same. With
// the last block on the last row alone (last_block_every_row false) too, the
// final hidden entry then that row; the option refused where rows are read.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "attnscope/gpt2.hpp"
#include "attnscope/tensor.hpp"
#include "test_gpt2_reference.hpp"
#include "test_kernels_support.hpp"

using namespace attnscope;
using attnscope::testing::random_gpt2;
using attnscope::testing::same_bits;

namespace {

// V above one of the LM head's matmul blocks (2048 tokens), not a multiple of any batch.
const Gpt2Config kConfig{/*layers=*/2, /*heads=*/4, /*d_model=*/32, /*vocab_size=*/2101,
                         /*context_length=*/64};

std::vector<std::int64_t> tokens_of(std::size_t n, std::size_t salt) {
  std::vector<std::int64_t> t(n);
  for (std::size_t i = 0; i < n; ++i) {
    t[i] = static_cast<std::int64_t>((i * 7919 + salt) % kConfig.vocab_size);
  }
  return t;
}

/// Row `row` of a (rows, V) tensor.
std::vector<float> row_of(const Tensor& t, std::size_t row) {
  const std::size_t V = t.shape[1];
  return std::vector<float>(t.data.begin() + row * V, t.data.begin() + (row + 1) * V);
}

/// kLast's output against kAll's: its logits are the last row, the rest equal.
void require_last_row(const Gpt2Output& last, const Gpt2Output& all) {
  const std::size_t rows = all.logits.shape[0];
  REQUIRE(last.logits.shape == Shape{1, kConfig.vocab_size});
  CHECK(same_bits(last.logits.data, row_of(all.logits, rows - 1)));
  REQUIRE(last.trace.has_value() == all.trace.has_value());
  if (all.trace) {
    for (std::size_t l = 0; l < kConfig.layers; ++l) {
      CHECK(same_bits(last.trace->attentions[l].data, all.trace->attentions[l].data));
    }
    for (std::size_t l = 0; l <= kConfig.layers; ++l) {
      CHECK(same_bits(last.trace->hidden[l].data, all.trace->hidden[l].data));
    }
  }
  REQUIRE(last.diff.has_value() == all.diff.has_value());
  if (all.diff) {
    REQUIRE(last.diff->logits.shape == Shape{1, kConfig.vocab_size});
    CHECK(same_bits(last.diff->logits.data, row_of(all.diff->logits, rows - 1)));
  }
}

/// Takes two caches through the same edits of a 40-token text: the whole
/// text, then a token appended, one changed in the middle, one at the start.
/// `compare(first, second, added)` runs the tokens after each cache's kept
/// prefix on both; the second then holds the whole text (the next edit reads
/// every row's keys and values from it).
template <class Compare>
void through_edits(std::size_t salt, Compare compare) {
  Gpt2Cache first(kConfig, 64), second(kConfig, 64);
  auto tokens = tokens_of(40, salt);
  for (const std::size_t keep : {0u, 40u, 20u, 0u}) {
    INFO("kept " << keep);
    if (keep == 40) tokens.push_back(17);
    if (keep < 40) tokens[keep] = (tokens[keep] + 1) % kConfig.vocab_size;
    first.truncate(std::min(keep, first.length()));
    second.truncate(std::min(keep, second.length()));
    const std::vector<std::int64_t> added(tokens.begin() + first.length(), tokens.end());
    compare(first, second, added);
    REQUIRE(second.length() == tokens.size());
  }
}

/// A run with the last block on the last row alone against one with every
/// row: the same bits everywhere, its final hidden entry the last row.
void require_last_block_row(const Gpt2Output& last, const Gpt2Output& all) {
  REQUIRE(same_bits(last.logits.data, all.logits.data));
  REQUIRE(last.trace.has_value() == all.trace.has_value());
  if (all.trace) {
    for (std::size_t l = 0; l < kConfig.layers; ++l) {
      CHECK(same_bits(last.trace->attentions[l].data, all.trace->attentions[l].data));
      CHECK(same_bits(last.trace->hidden[l].data, all.trace->hidden[l].data));
    }
    const Tensor& final_rows = all.trace->hidden[kConfig.layers];
    const std::size_t C = kConfig.d_model;
    REQUIRE(last.trace->hidden[kConfig.layers].shape == Shape{1, C});
    CHECK(same_bits(last.trace->hidden[kConfig.layers].data,
                    std::vector<float>(final_rows.data.end() - C, final_rows.data.end())));
  }
  REQUIRE(last.diff.has_value() == all.diff.has_value());
  if (all.diff) {
    CHECK(same_bits(last.diff->logits.data, all.diff->logits.data));
    for (std::size_t l = 0; l < all.diff->attentions.size(); ++l) {
      CHECK(same_bits(last.diff->attentions[l].data, all.diff->attentions[l].data));
    }
  }
  REQUIRE(last.attribution.has_value() == all.attribution.has_value());
  if (all.attribution) {
    for (std::size_t l = 0; l < kConfig.layers; ++l) {
      CHECK(same_bits(last.attribution->rollout[l].data, all.attribution->rollout[l].data));
      CHECK(same_bits(last.attribution->value_norms[l].data, all.attribution->value_norms[l].data));
    }
  }
}

}  // namespace

TEST_CASE("gpt2: forward with last logits only gives the last row of all of them, bit for bit") {
  const Gpt2Model model = random_gpt2(kConfig, 31, 0.3f);
  for (const std::size_t T : {1u, 2u, 4u, 5u, 6u, 33u, 64u}) {
    for (const bool trace : {false, true}) {
      INFO("T = " << T << (trace ? ", traced" : ", fast"));
      Gpt2ForwardOptions options;
      options.trace = trace;
      const Gpt2Output all = model.forward(tokens_of(T, 3), options);
      options.logits = Gpt2Logits::kLast;
      require_last_row(model.forward(tokens_of(T, 3), options), all);
    }
  }
}

TEST_CASE("gpt2: last logits only with interventions: the run's and the diff's last rows") {
  const Gpt2Model model = random_gpt2(kConfig, 32, 0.3f);
  Gpt2ForwardOptions options;
  options.interventions.ablate.push_back({1, 2, Gpt2HeadAblation::Mode::kMean});
  options.interventions.mask_tokens = {3};
  options.interventions.replace.push_back({0, 1, 1, 3});
  for (const bool trace : {false, true}) {
    INFO((trace ? "traced" : "fast"));
    options.trace = trace;
    options.logits = Gpt2Logits::kAll;
    const Gpt2Output all = model.forward(tokens_of(20, 4), options);
    options.logits = Gpt2Logits::kLast;
    require_last_row(model.forward(tokens_of(20, 4), options), all);
  }
}

TEST_CASE("gpt2: extend with last logits only gives the last row of all of them after edits") {
  const Gpt2Model model = random_gpt2(kConfig, 33, 0.3f);
  for (const bool trace : {false, true}) {
    INFO((trace ? "traced" : "fast"));
    through_edits(5, [&](Gpt2Cache& every, Gpt2Cache& last_only, const auto& added) {
      const Gpt2Output all = model.extend(every, added, trace);
      require_last_row(model.extend(last_only, added, trace, Gpt2Logits::kLast), all);
    });
  }
}

TEST_CASE("gpt2: the last block on the last row alone changes no bit of what a forward returns") {
  const Gpt2Model model = random_gpt2(kConfig, 34, 0.3f);
  // Lengths around the register tile's heights (4 and 6 rows) and the two-row vector path.
  for (const std::size_t T : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 13u, 64u}) {
    for (const bool trace : {false, true}) {
      INFO("T = " << T << (trace ? ", traced" : ", fast"));
      Gpt2ForwardOptions options;
      options.trace = trace;
      options.logits = Gpt2Logits::kLast;
      const Gpt2Output all = model.forward(tokens_of(T, 6), options);
      options.last_block_every_row = false;
      require_last_block_row(model.forward(tokens_of(T, 6), options), all);
    }
  }
  // With interventions (the clean run is pruned too) and attribution.
  Gpt2ForwardOptions options;
  options.logits = Gpt2Logits::kLast;
  options.interventions.ablate.push_back({1, 2, Gpt2HeadAblation::Mode::kZero});
  options.interventions.mask_tokens = {2};
  options.interventions.replace.push_back({1, 0, 0, 3});
  options.attribution = true;
  const Gpt2Output all = model.forward(tokens_of(21, 7), options);
  options.last_block_every_row = false;
  require_last_block_row(model.forward(tokens_of(21, 7), options), all);
}

TEST_CASE("gpt2: extend with the last block on the last row alone, after edits") {
  const Gpt2Model model = random_gpt2(kConfig, 35, 0.3f);
  for (const bool trace : {false, true}) {
    INFO((trace ? "traced" : "fast"));
    through_edits(8, [&](Gpt2Cache& every, Gpt2Cache& last_row, const auto& added) {
      const Gpt2Output all = model.extend(every, added, trace, Gpt2Logits::kLast);
      require_last_block_row(model.extend(last_row, added, trace, Gpt2Logits::kLast, false), all);
    });
  }
}

TEST_CASE("gpt2: the last block on the last row alone is refused where other rows are read") {
  const Gpt2Model model = random_gpt2(kConfig, 36, 0.3f);
  Gpt2ForwardOptions options;
  options.last_block_every_row = false;
  CHECK_THROWS_WITH(model.forward(tokens_of(5, 9), options),
                    Catch::Contains("last_block_every_row false needs logits kLast"));
  options.logits = Gpt2Logits::kLast;
  options.logit_lens_top_k = 2;
  CHECK_THROWS_WITH(model.forward(tokens_of(5, 9), options), Catch::Contains("and no logit lens"));
  Gpt2Cache cache(kConfig, 16);
  CHECK_THROWS_WITH(
      model.extend(cache, tokens_of(5, 9), true, Gpt2Logits::kAll, false),
      Catch::Contains("Gpt2Model::extend: last_block_every_row false needs logits kLast"));
  CHECK(cache.length() == 0);
  // The model stays usable.
  options.logit_lens_top_k = 0;
  CHECK(model.forward(tokens_of(5, 9), options).logits.shape == Shape{1, kConfig.vocab_size});
}
