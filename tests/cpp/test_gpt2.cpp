// GPT-2: the forward pass against the double-precision reference
// (test_gpt2_reference.hpp) layer by layer, the traced and fast paths
// against each other, the cached step against the whole forward, and its
// GELU (tanh form) kernel against its reference.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "attnscope/gpt2.hpp"
#include "kernels/activation.hpp"
#include "kernels/vector_matrix.hpp"
#include "test_gpt2_reference.hpp"

using attnscope::Gpt2Cache;
using attnscope::Gpt2Config;
using attnscope::Gpt2Model;
using attnscope::testing::gpt2_reference;
using attnscope::testing::random_gpt2;

namespace {

std::vector<std::int64_t> random_tokens(std::size_t n, std::size_t vocab, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::int64_t> dist(0, std::int64_t(vocab) - 1);
  std::vector<std::int64_t> t(n);
  for (auto& v : t) v = dist(rng);
  return t;
}

// |got - want| <= tol · (1 + |want|) everywhere; reports the first miss.
template <class Got, class Want>
void require_close(const Got& got, const Want& want, double tol, const char* what) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = double(got[i]), w = double(want[i]);
    if (std::fabs(g - w) > tol * (1.0 + std::fabs(w))) {
      FAIL(what << "[" << i << "] = " << g << ", expected " << w);
    }
  }
}

const Gpt2Config kConfig{/*layers=*/2, /*heads=*/4, /*d_model=*/32, /*vocab_size=*/37,
                         /*context_length=*/64};

}  // namespace

TEST_CASE("gpt2: gelu_tanh matches its double reference at every length and for huge inputs") {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-6.0f, 6.0f);
  for (std::size_t n = 1; n <= 37; ++n) {
    std::vector<float> x(n);
    for (float& v : x) v = dist(rng);
    if (n > 3) x[0] = 1e20f, x[1] = -1e20f, x[2] = -30.0f;
    std::vector<float> y = x;
    attnscope::kernels::gelu_tanh<xsimd::default_arch>(y.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      const double want = attnscope::kernels::gelu_tanh_reference(x[i]);
      REQUIRE(std::fabs(y[i] - want) <= 2e-6 * (1.0 + std::fabs(want)));
    }
  }
}

TEST_CASE("gpt2: vector_matrix matches its double reference around the SIMD widths") {
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (std::size_t k : {1u, 3u, 4u, 5u, 7u, 8u, 9u, 15u, 16u, 17u, 64u}) {
    for (std::size_t n : {1u, 3u, 4u, 7u, 8u, 9u, 16u, 17u, 33u}) {
      std::vector<float> x(k), w(k * n), y(n);
      for (float& v : x) v = dist(rng);
      for (float& v : w) v = dist(rng);
      for (float& v : y) v = dist(rng);
      std::vector<double> want(n);
      attnscope::kernels::vector_matrix_reference(x.data(), w.data(), k, n, y.data(), want.data());
      attnscope::kernels::vector_matrix<xsimd::default_arch>(x.data(), w.data(), k, n, y.data());
      require_close(y, want, 1e-5, "vector_matrix");
    }
  }
}

TEST_CASE("gpt2: vector_matrix split into column blocks gives the whole product's bits") {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const std::size_t k = 19, n = 64 + 64 + 13;
  std::vector<float> x(k), w(k * n), whole(n);
  for (float& v : x) v = dist(rng);
  for (float& v : w) v = dist(rng);
  for (float& v : whole) v = dist(rng);
  std::vector<float> split = whole;
  attnscope::kernels::vector_matrix<xsimd::default_arch>(x.data(), w.data(), k, n, whole.data());
  for (std::size_t j0 : {0u, 64u, 128u}) {
    const std::size_t j1 = std::min<std::size_t>(n, j0 + 64);
    attnscope::kernels::vector_matrix_strided<xsimd::default_arch>(x.data(), w.data() + j0, k,
                                                                   j1 - j0, n, split.data() + j0);
  }
  REQUIRE(std::memcmp(split.data(), whole.data(), n * sizeof(float)) == 0);
}

TEST_CASE("gpt2: forward matches the double reference layer by layer, traced and fast") {
  const Gpt2Model model = random_gpt2(kConfig, 11);
  for (std::size_t T : {1u, 7u, 8u, 9u, 16u, 17u, 33u, 64u}) {
    INFO("T = " << T);
    const auto tokens = random_tokens(T, kConfig.vocab_size, std::uint32_t(T));
    const auto want = gpt2_reference(model, tokens);
    const auto traced = model.forward(tokens, true);
    REQUIRE(traced.logits.shape == attnscope::Shape{T, kConfig.vocab_size});
    require_close(traced.logits.data, want.logits, 1e-4, "logits");
    REQUIRE(traced.trace->attentions.size() == kConfig.layers);
    REQUIRE(traced.trace->hidden.size() == kConfig.layers + 1);
    for (std::size_t l = 0; l < kConfig.layers; ++l) {
      REQUIRE(traced.trace->attentions[l].shape == attnscope::Shape{kConfig.heads, T, T});
      require_close(traced.trace->attentions[l].data, want.attentions[l], 1e-5, "attentions");
    }
    for (std::size_t l = 0; l <= kConfig.layers; ++l) {
      REQUIRE(traced.trace->hidden[l].shape == attnscope::Shape{T, kConfig.d_model});
      require_close(traced.trace->hidden[l].data, want.hidden[l], 1e-5, "hidden");
    }
    const auto fast = model.forward(tokens, false);
    REQUIRE_FALSE(fast.trace.has_value());
    require_close(fast.logits.data, traced.logits.data, 1e-5, "fast logits");
  }
}

TEST_CASE("gpt2: one head of width 16 and a vocabulary of more than one logits block") {
  const Gpt2Config config{1, 1, 16, 2100, 40};
  const Gpt2Model model = random_gpt2(config, 5);
  for (std::size_t T : {3u, 40u}) {
    const auto tokens = random_tokens(T, config.vocab_size, 9);
    require_close(model.forward(tokens, false).logits.data, gpt2_reference(model, tokens).logits,
                  1e-4, "logits");
  }
}

TEST_CASE("gpt2: a cached step gives the whole forward's last row") {
  const Gpt2Model model = random_gpt2(kConfig, 21);
  const auto tokens = random_tokens(40, kConfig.vocab_size, 4);
  const auto full = model.forward(tokens, false).logits;
  const std::size_t V = kConfig.vocab_size;
  Gpt2Cache cache(kConfig, 40);
  // A prompt of 17 at once, then one token a step, then a chunk of 7.
  std::size_t at = 0;
  for (std::size_t n : {17u, 1u, 1u, 1u, 1u, 1u, 1u, 1u, 1u, 1u, 7u, 1u, 1u}) {
    const std::vector<std::int64_t> chunk(tokens.begin() + at, tokens.begin() + at + n);
    const auto logits = model.step(cache, chunk);
    at += n;
    REQUIRE(cache.length() == at);
    const std::vector<float> row(full.data.begin() + (at - 1) * V, full.data.begin() + at * V);
    require_close(logits.data, row, 1e-5, "step logits");
  }
  cache.reset();
  REQUIRE(cache.length() == 0);
  const auto again = model.step(cache, {tokens[0]});
  require_close(again.data, std::vector<float>(full.data.begin(), full.data.begin() + V), 1e-5,
                "after reset");
}

TEST_CASE("gpt2: extend after truncate gives the whole forward's rows of the new tokens") {
  const Gpt2Model model = random_gpt2(kConfig, 23);
  const std::size_t V = kConfig.vocab_size, C = kConfig.d_model, H = kConfig.heads;
  auto tokens = random_tokens(33, V, 5);
  Gpt2Cache cache(kConfig, 64);
  model.extend(cache, tokens, true);
  // Edits: a token appended, one changed in the middle, the end cut, one changed at 0.
  for (auto [keep, edit] : {std::pair{33u, 1u}, {20u, 3u}, {15u, 0u}, {0u, 2u}}) {
    std::vector<std::int64_t> next(tokens.begin(), tokens.begin() + keep);
    for (std::size_t i = 0; i < edit; ++i) next.push_back((7 * i + keep) % V);
    if (edit == 0) next.push_back((tokens[keep] + 1) % V);  // a cut, then one changed token
    cache.truncate(keep);
    const std::vector<std::int64_t> added(next.begin() + keep, next.end());
    const auto rows = model.extend(cache, added, true);
    const auto whole = model.forward(next, true);
    const std::size_t T = next.size(), n = added.size();
    REQUIRE(cache.length() == T);
    REQUIRE(rows.logits.shape == attnscope::Shape{n, V});
    require_close(rows.logits.data,
                  std::vector<float>(whole.logits.data.begin() + keep * V, whole.logits.data.end()),
                  1e-5, "extend logits");
    for (std::size_t l = 0; l < kConfig.layers; ++l) {
      REQUIRE(rows.trace->attentions[l].shape == attnscope::Shape{H, n, T});
      std::vector<float> want;
      for (std::size_t h = 0; h < H; ++h) {
        const auto* from = whole.trace->attentions[l].data.data() + (h * T + keep) * T;
        want.insert(want.end(), from, from + n * T);
      }
      require_close(rows.trace->attentions[l].data, want, 1e-6, "extend attentions");
    }
    for (std::size_t l = 0; l <= kConfig.layers; ++l) {
      const auto& all = whole.trace->hidden[l].data;
      require_close(rows.trace->hidden[l].data,
                    std::vector<float>(all.begin() + keep * C, all.end()), 1e-5, "extend hidden");
    }
    tokens = next;
  }
  REQUIRE_THROWS_WITH(cache.truncate(cache.length() + 1), Catch::Matchers::Contains("beyond"));
}

TEST_CASE("gpt2: errors name the argument and leave the cache as it was") {
  const Gpt2Model model = random_gpt2(kConfig, 2);
  using Catch::Matchers::Contains;
  REQUIRE_THROWS_WITH(model.forward({1, 37}, false),
                      Contains("tokens[1] is 37") && Contains("vocab_size=37"));
  REQUIRE_THROWS_WITH(model.forward({-1}, true), Contains("tokens[0] is -1"));
  REQUIRE_THROWS_WITH(model.forward({}, false), Contains("tokens is empty"));
  REQUIRE_THROWS_WITH(model.forward(std::vector<std::int64_t>(65, 0), false),
                      Contains("65 tokens") && Contains("context_length=64"));
  Gpt2Cache cache(kConfig, 4);
  model.step(cache, {1, 2, 3});
  REQUIRE_THROWS_WITH(model.step(cache, {1, 2}), Contains("room left in the cache"));
  REQUIRE_THROWS_WITH(model.step(cache, {99}), Contains("tokens[0] is 99"));
  REQUIRE(cache.length() == 3);
  model.step(cache, {4});
  REQUIRE_THROWS_WITH(model.step(cache, {4}), Contains("room left in the cache"));
  Gpt2Cache other({2, 2, 32, 37, 64}, 4);
  REQUIRE_THROWS_WITH(model.step(other, {1}), Contains("another model"));
  REQUIRE_THROWS_WITH(Gpt2Cache(kConfig, 65), Contains("capacity is 65"));
  REQUIRE_THROWS_WITH(Gpt2Cache(kConfig, 0), Contains("capacity is 0"));
}

TEST_CASE("gpt2: the weight store names what is wrong") {
  using Catch::Matchers::Contains;
  REQUIRE_THROWS_WITH(Gpt2Model({2, 3, 32, 37, 64}), Contains("d_model=32") && Contains("heads=3"));
  REQUIRE_THROWS_WITH(Gpt2Model({0, 4, 32, 37, 64}), Contains("config.layers is 0"));
  Gpt2Model model(kConfig);
  REQUIRE(model.weight_names().size() == 4 + 12 * kConfig.layers);
  REQUIRE(model.weight_shape("h.1.mlp.c_fc.weight") == attnscope::Shape{32, 128});
  REQUIRE(model.weight_shape("wpe.weight") == attnscope::Shape{64, 32});
  REQUIRE_THROWS_WITH(model.weight_data("h.2.ln_1.weight"), Contains("'h.2.ln_1.weight'"));
  REQUIRE_THROWS_WITH(model.forward({1}, false), Contains("not all loaded"));
  for (const auto& name : model.weight_names()) {
    if (name != "ln_f.bias") model.weight_data(name);
  }
  REQUIRE_THROWS_WITH(model.finish(), Contains("ln_f.bias was never loaded"));
  model.weight_data("ln_f.bias")[3] = NAN;
  REQUIRE_THROWS_WITH(model.finish(), Contains("ln_f.bias has a non-finite value at index 3"));
  REQUIRE_FALSE(model.finished());
  model.weight_data("ln_f.bias")[3] = 0.0f;
  model.finish();
  REQUIRE(model.finished());
  REQUIRE(model.forward({1, 2}, true).logits.size() == 2 * 37);
}
