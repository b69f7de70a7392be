// GPT-2 training: the schedule, AdamW and clipping against their formulas,
// the seeded initialisation, a whole-model gradient check against central
// finite differences of the double-precision forward (test_gpt2_reference.hpp),
// loss going down on tiny tasks, determinism, and bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "attnscope/train.hpp"
#include "test_gpt2_reference.hpp"
#include "test_train_reference.hpp"
#include "train_optimizer.hpp"

using attnscope::AdamWOptions;
using attnscope::Gpt2Config;
using attnscope::Gpt2Model;
using attnscope::Gpt2Trainer;
using attnscope::testing::reference_loss;
using attnscope::testing::tiny_config;
using attnscope::testing::weight_copy;

namespace {

/// Copy task: `half` random tokens, then the same tokens again.
std::vector<std::int64_t> copy_batch(std::mt19937& rng, std::size_t batch, std::size_t half,
                                     std::size_t vocab) {
  std::uniform_int_distribution<std::int64_t> token(0, std::int64_t(vocab) - 1);
  std::vector<std::int64_t> t;
  for (std::size_t b = 0; b < batch; ++b) {
    std::vector<std::int64_t> first(half);
    for (auto& x : first) x = token(rng);
    t.insert(t.end(), first.begin(), first.end());
    t.insert(t.end(), first.begin(), first.end());
  }
  return t;
}

}  // namespace

TEST_CASE("learning_rate_at: linear warm-up, then cosine to the floor", "[train]") {
  AdamWOptions o;
  o.lr = 1.0f;
  o.warmup = 4;
  o.total_steps = 14;
  o.min_lr_ratio = 0.1f;
  CHECK(attnscope::learning_rate_at(o, 0) == Approx(0.25));
  CHECK(attnscope::learning_rate_at(o, 3) == Approx(1.0));
  CHECK(attnscope::learning_rate_at(o, 4) == Approx(1.0));
  CHECK(attnscope::learning_rate_at(o, 9) == Approx(0.55));  // halfway: (1 + 0.1) / 2
  CHECK(attnscope::learning_rate_at(o, 14) == Approx(0.1));
  CHECK(attnscope::learning_rate_at(o, 100) == Approx(0.1));
  o.total_steps = 0;
  CHECK(attnscope::learning_rate_at(o, 100) == Approx(1.0));
}

TEST_CASE("adamw_update and clip_gradients follow their formulas", "[train]") {
  AdamWOptions o;
  o.beta1 = 0.9f;
  o.beta2 = 0.95f;
  o.eps = 1e-8f;
  o.weight_decay = 0.1f;
  std::vector<float> w = {1.0f, -2.0f}, m(2, 0.0f), v(2, 0.0f);
  double wd[2] = {1.0, -2.0}, md[2] = {0, 0}, vd[2] = {0, 0};
  const float grads[3][2] = {{0.5f, -1.0f}, {0.25f, 2.0f}, {-0.1f, 0.0f}};
  for (std::size_t t = 1; t <= 3; ++t) {
    attnscope::detail::adamw_update(w.data(), grads[t - 1], m.data(), v.data(), 2, 0.01f, o, t,
                                    true);
    for (int i = 0; i < 2; ++i) {
      const double g = grads[t - 1][i];
      md[i] = 0.9 * md[i] + 0.1 * g;
      vd[i] = 0.95 * vd[i] + 0.05 * g * g;
      const double mh = md[i] / (1 - std::pow(0.9, t)), vh = vd[i] / (1 - std::pow(0.95, t));
      wd[i] = wd[i] * (1 - 0.01 * 0.1) - 0.01 * mh / (std::sqrt(vh) + 1e-8);
      CHECK(w[i] == Approx(wd[i]).epsilon(1e-5));
    }
  }
  std::vector<std::vector<float>> g = {{3.0f}, {4.0f, 0.0f}};
  CHECK(attnscope::detail::clip_gradients(g, 1.0f) == Approx(5.0));
  CHECK(g[0][0] == Approx(0.6).epsilon(1e-5));
  CHECK(g[1][0] == Approx(0.8).epsilon(1e-5));
  CHECK(attnscope::detail::clip_gradients(g, 0.0f) == Approx(1.0).epsilon(1e-5));
}

TEST_CASE("initialize_gpt2: GPT-2's scheme, the same for a seed", "[train]") {
  Gpt2Config c = tiny_config();
  c.d_model = 64;
  c.vocab_size = 500;
  Gpt2Model a(c), b(c), other(c);
  attnscope::initialize_gpt2(a, 7);
  attnscope::initialize_gpt2(b, 7);
  attnscope::initialize_gpt2(other, 8);
  REQUIRE(a.finished());
  CHECK(weight_copy(a, "wte.weight") == weight_copy(b, "wte.weight"));
  CHECK(weight_copy(a, "h.1.mlp.c_fc.weight") == weight_copy(b, "h.1.mlp.c_fc.weight"));
  CHECK(weight_copy(a, "wte.weight") != weight_copy(other, "wte.weight"));
  auto spread = [&](const std::string& name) {
    const std::vector<float> x = weight_copy(a, name);
    double s = 0, s2 = 0;
    for (float v : x) s += v, s2 += double(v) * v;
    const double mean = s / double(x.size());
    CHECK(std::fabs(mean) < 0.002);
    return std::sqrt(s2 / double(x.size()) - mean * mean);
  };
  CHECK(spread("wte.weight") == Approx(0.02).epsilon(0.03));
  CHECK(spread("h.0.attn.c_attn.weight") == Approx(0.02).epsilon(0.05));
  CHECK(spread("h.0.mlp.c_proj.weight") == Approx(0.01).epsilon(0.05));  // 0.02 / √(2·2)
  for (float v : weight_copy(a, "h.0.ln_1.weight")) CHECK(v == 1.0f);
  for (float v : weight_copy(a, "h.1.attn.c_attn.bias")) CHECK(v == 0.0f);
  for (float v : weight_copy(a, "ln_f.bias")) CHECK(v == 0.0f);
}

TEST_CASE("Gpt2Trainer: whole-model gradients match finite differences", "[train]") {
  Gpt2Model model = attnscope::testing::random_gpt2(tiny_config(), 11, 0.4f);
  Gpt2Trainer trainer(model, AdamWOptions{});
  const std::vector<std::int64_t> tokens = {1, 5, 10, 0, 3, 3, 7, 2, 9, 4, 6, 1, 0, 8};
  const double loss = trainer.compute_gradients(tokens, 2);
  REQUIRE(loss == Approx(reference_loss(model, tokens, 2)).epsilon(1e-5));
  std::size_t checked = 0;
  for (const std::string& name : model.weight_names()) {
    const std::vector<float> grad = trainer.gradient(name);
    float* w = model.weight_data(name);
    for (std::size_t i = 0; i < grad.size(); ++i) {
      const float saved = w[i];
      w[i] = saved + 1e-3f;
      const double up_step = double(w[i]) - saved, up = reference_loss(model, tokens, 2);
      w[i] = saved - 1e-3f;
      const double down_step = double(saved) - w[i], down = reference_loss(model, tokens, 2);
      w[i] = saved;
      const double numeric = (up - down) / (up_step + down_step);
      INFO(name << "[" << i << "]: analytic " << grad[i] << ", finite difference " << numeric);
      REQUIRE(std::fabs(grad[i] - numeric) <= 2e-5 + 1e-3 * std::fabs(numeric));
      ++checked;
    }
  }
  model.finish();
  CHECK(checked > 1900);
}

TEST_CASE("Gpt2Trainer: loss goes down on tiny tasks", "[train]") {
  Gpt2Config c = tiny_config();
  c.d_model = 32;
  c.heads = 4;
  c.context_length = 16;
  AdamWOptions o;
  o.lr = 3e-3f;
  o.weight_decay = 0.01f;
  o.clip = 1.0f;
  o.warmup = 10;
  o.total_steps = 300;

  SECTION("a fixed sequence is learned by heart") {
    Gpt2Model model(c);
    attnscope::initialize_gpt2(model, 1);
    Gpt2Trainer trainer(model, o);
    const std::vector<std::int64_t> tokens = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3};
    const double first = trainer.step(tokens, 1).loss;
    double last = first;
    for (int s = 0; s < 150; ++s) last = trainer.step(tokens, 1).loss;
    INFO("loss " << first << " → " << last);
    CHECK(first > 2.0);  // about log(11) at initialisation
    CHECK(last < 0.1);
  }
  SECTION("copy: the second half repeats the first") {
    c.d_model = 16;
    c.heads = 2;
    o.lr = 1e-2f;
    Gpt2Model model(c);
    attnscope::initialize_gpt2(model, 2);
    Gpt2Trainer trainer(model, o);
    std::mt19937 rng(5);
    double first = 0, last = 0;
    for (int s = 0; s < 300; ++s) {
      const double loss = trainer.step(copy_batch(rng, 8, 5, c.vocab_size), 8).loss;
      if (s < 10) first += loss / 10;
      if (s >= 290) last += loss / 10;
    }
    INFO("mean loss of the first 10 steps " << first << ", of the last 10 " << last);
    // 4 of the 9 predictions are random (log 11 each) and 5 are copies: a
    // model that copies reaches 4·log(11)/9 ≈ 1.07, from ~2.4 at the start.
    CHECK(last < 0.6 * first);
    CHECK(last < 1.4);
  }
}

TEST_CASE("Gpt2Trainer: deterministic for a seed and the same batches", "[train]") {
  AdamWOptions o;
  o.lr = 1e-2f;
  o.weight_decay = 0.1f;
  o.clip = 0.5f;
  Gpt2Model a(tiny_config()), b(tiny_config());
  attnscope::initialize_gpt2(a, 3);
  attnscope::initialize_gpt2(b, 3);
  Gpt2Trainer ta(a, o), tb(b, o);
  std::mt19937 rng(9);
  for (int s = 0; s < 3; ++s) {
    const std::vector<std::int64_t> batch = copy_batch(rng, 2, 4, 11);
    CHECK(ta.step(batch, 2).loss == tb.step(batch, 2).loss);
  }
  for (const std::string& name : a.weight_names()) {
    INFO(name);
    CHECK(weight_copy(a, name) == weight_copy(b, name));
  }
}

TEST_CASE("Gpt2Trainer rejects bad input by name", "[train]") {
  Gpt2Model model(tiny_config());
  attnscope::initialize_gpt2(model, 1);
  AdamWOptions bad;
  bad.lr = 0;
  CHECK_THROWS_WITH(Gpt2Trainer(model, bad), Catch::Contains("lr is 0"));
  bad = AdamWOptions{};
  bad.beta2 = 1.0f;
  CHECK_THROWS_WITH(Gpt2Trainer(model, bad), Catch::Contains("betas[1]"));
  bad = AdamWOptions{};
  bad.clip = -1.0f;
  CHECK_THROWS_WITH(Gpt2Trainer(model, bad), Catch::Contains("clip"));
  Gpt2Trainer trainer(model, AdamWOptions{});
  const std::vector<float> before = weight_copy(model, "wte.weight");
  CHECK_THROWS_WITH(trainer.step({1, 2, 3}, 0), Catch::Contains("batch is 0"));
  CHECK_THROWS_WITH(trainer.step({1, 2, 3}, 2), Catch::Contains("expected batch=2 times T"));
  CHECK_THROWS_WITH(trainer.step({1, 2}, 2), Catch::Contains("T=1"));
  CHECK_THROWS_WITH(trainer.step(std::vector<std::int64_t>(10, 1), 1), Catch::Contains("T=10"));
  CHECK_THROWS_WITH(trainer.step({1, 11}, 1), Catch::Contains("tokens[1] is 11"));
  CHECK(weight_copy(model, "wte.weight") == before);
  CHECK(trainer.steps_taken() == 0);
  CHECK_NOTHROW(trainer.step({1, 2, 3}, 1));
  CHECK(trainer.steps_taken() == 1);
}
