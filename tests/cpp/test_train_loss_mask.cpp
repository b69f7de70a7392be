// The trainer's loss mask: gradients with a mask against central finite
// differences of the double-precision forward's masked loss, an all-ones mask
// equal bit for bit to none, one selected prediction, and bad masks.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attnscope/train.hpp"
#include "test_gpt2_reference.hpp"
#include "test_train_reference.hpp"

using attnscope::AdamWOptions;
using attnscope::Gpt2Config;
using attnscope::Gpt2Model;
using attnscope::Gpt2Trainer;
using attnscope::testing::reference_loss;
using attnscope::testing::tiny_config;
using attnscope::testing::weight_copy;

namespace {

// Two sequences of T = 7: six predictions each.
const std::vector<std::int64_t> kTokens = {1, 5, 10, 0, 3, 3, 7, 2, 9, 4, 6, 1, 0, 8};

/// Every weight's gradient in `trainer` against central differences of the
/// reference's masked loss; returns how many weights were checked.
std::size_t check_against_finite_differences(Gpt2Model& model, const Gpt2Trainer& trainer,
                                             const std::vector<std::uint8_t>& mask) {
  std::size_t checked = 0;
  for (const std::string& name : model.weight_names()) {
    const std::vector<float> grad = trainer.gradient(name);
    float* w = model.weight_data(name);
    for (std::size_t i = 0; i < grad.size(); ++i) {
      const float saved = w[i];
      w[i] = saved + 1e-3f;
      const double up_step = double(w[i]) - saved, up = reference_loss(model, kTokens, 2, mask);
      w[i] = saved - 1e-3f;
      const double down_step = double(saved) - w[i], down = reference_loss(model, kTokens, 2, mask);
      w[i] = saved;
      const double numeric = (up - down) / (up_step + down_step);
      INFO(name << "[" << i << "]: analytic " << grad[i] << ", finite difference " << numeric);
      REQUIRE(std::fabs(grad[i] - numeric) <= 2e-5 + 1e-3 * std::fabs(numeric));
      ++checked;
    }
  }
  model.finish();
  return checked;
}

}  // namespace

TEST_CASE("Gpt2Trainer loss mask: gradients match finite differences of the masked loss",
          "[train]") {
  Gpt2Model model = attnscope::testing::random_gpt2(tiny_config(), 11, 0.4f);
  Gpt2Trainer trainer(model, AdamWOptions{});
  // Sequence 0 counts its predictions 1, 2 and 4; sequence 1 only its last.
  const std::vector<std::uint8_t> mask = {0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1};
  const double loss = trainer.compute_gradients(kTokens, 2, mask);
  REQUIRE(loss == Approx(reference_loss(model, kTokens, 2, mask)).epsilon(1e-5));
  REQUIRE(loss != Approx(reference_loss(model, kTokens, 2)).epsilon(1e-3));
  CHECK(check_against_finite_differences(model, trainer, mask) > 1900);
}

TEST_CASE("Gpt2Trainer loss mask: all ones is the same as none, bit for bit", "[train]") {
  AdamWOptions o;
  o.lr = 1e-2f;
  o.weight_decay = 0.1f;
  o.clip = 0.5f;
  Gpt2Model a = attnscope::testing::random_gpt2(tiny_config(), 4, 0.4f);
  Gpt2Model b = attnscope::testing::random_gpt2(tiny_config(), 4, 0.4f);
  Gpt2Trainer without(a, o), with(b, o);
  const std::vector<std::uint8_t> ones(2 * 6, 1);
  for (int s = 0; s < 3; ++s) {
    const attnscope::TrainStepResult ra = without.step(kTokens, 2);
    const attnscope::TrainStepResult rb = with.step(kTokens, 2, ones);
    CHECK(ra.loss == rb.loss);
    CHECK(ra.gradient_norm == rb.gradient_norm);
  }
  for (const std::string& name : a.weight_names()) {
    INFO(name);
    CHECK(without.gradient(name) == with.gradient(name));
    CHECK(weight_copy(a, name) == weight_copy(b, name));
  }
}

TEST_CASE("Gpt2Trainer loss mask: one selected prediction", "[train]") {
  Gpt2Model model = attnscope::testing::random_gpt2(tiny_config(), 12, 0.4f);
  Gpt2Trainer trainer(model, AdamWOptions{});
  // Only the prediction of sequence 1's token 3 (6) from its tokens 0..2 (2, 9, 4).
  std::vector<std::uint8_t> mask(2 * 6, 0);
  mask[6 + 2] = 1;
  const double loss = trainer.compute_gradients(kTokens, 2, mask);
  const std::vector<std::int64_t> inputs = {2, 9, 4};
  const auto r = attnscope::testing::gpt2_reference(model, inputs);
  const std::size_t V = tiny_config().vocab_size;
  double max = -INFINITY, sum = 0;
  for (std::size_t v = 0; v < V; ++v) max = std::max(max, r.logits[2 * V + v]);
  for (std::size_t v = 0; v < V; ++v) sum += std::exp(r.logits[2 * V + v] - max);
  CHECK(loss == Approx(max + std::log(sum) - r.logits[2 * V + 6]).epsilon(1e-5));
  // The prediction reads positions 0..2 only: the later position embeddings get nothing.
  const std::vector<float> dwpe = trainer.gradient("wpe.weight");
  const std::size_t C = tiny_config().d_model;
  for (std::size_t i = 3 * C; i < dwpe.size(); ++i) REQUIRE(dwpe[i] == 0.0f);
  bool earlier_nonzero = false;
  for (std::size_t i = 0; i < 3 * C; ++i) earlier_nonzero = earlier_nonzero || dwpe[i] != 0.0f;
  CHECK(earlier_nonzero);
  CHECK(check_against_finite_differences(model, trainer, mask) > 1900);
}

TEST_CASE("Gpt2Trainer rejects a bad loss mask by name and stays usable", "[train]") {
  Gpt2Model model(tiny_config());
  attnscope::initialize_gpt2(model, 1);
  Gpt2Trainer trainer(model, AdamWOptions{});
  const std::vector<float> before = weight_copy(model, "wte.weight");
  std::vector<std::uint8_t> mask(12, 1);
  CHECK_THROWS_WITH(trainer.step(kTokens, 2, std::vector<std::uint8_t>(11, 1)),
                    Catch::Contains("loss_mask has 11 entries, expected batch·(T−1) = 2·6 = 12"));
  mask[5] = 2;
  CHECK_THROWS_WITH(trainer.step(kTokens, 2, mask),
                    Catch::Contains("loss_mask[5] is 2, expected 0 or 1"));
  CHECK_THROWS_WITH(trainer.step(kTokens, 2, std::vector<std::uint8_t>(12, 0)),
                    Catch::Contains("loss_mask selects no prediction"));
  CHECK(weight_copy(model, "wte.weight") == before);
  CHECK(trainer.steps_taken() == 0);
  mask[5] = 0;
  CHECK_NOTHROW(trainer.step(kTokens, 2, mask));
  CHECK(trainer.steps_taken() == 1);
}
