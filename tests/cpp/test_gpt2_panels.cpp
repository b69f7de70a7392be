// GPT-2's block matrices stored in the products' panels by finish(): what is
// stored where, reading and writing weights in row order, and every pass
// (whole forward, cached steps, attribution's value norms) giving the same
// bits as with the matrices in row order.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "attnscope/gpt2.hpp"
#include "test_gpt2_reference.hpp"
#include "test_kernels_support.hpp"

using attnscope::Gpt2Cache;
using attnscope::Gpt2Config;
using attnscope::Gpt2ForwardOptions;
using attnscope::Gpt2Model;
using attnscope::testing::random_gpt2;
using attnscope::testing::same_bits;
using attnscope::testing::weight_copy;

namespace {

// C = 40: 3C, 4C and C are not all multiples of any panel width (8, 16 or
// 32 columns), so the columns after the last panel are exercised too.
Gpt2Config config_of(std::size_t d_model, std::size_t heads) {
  Gpt2Config c;
  c.layers = 2;
  c.heads = heads;
  c.d_model = d_model;
  c.vocab_size = 37;
  c.context_length = 24;
  return c;
}

std::vector<std::string> block_matrices(const Gpt2Model& model) {
  std::vector<std::string> names;
  for (const std::string& name : model.weight_names()) {
    if (model.weight_shape(name).size() == 2 && name.rfind("h.", 0) == 0) names.push_back(name);
  }
  return names;
}

/// Logits of the whole forward (traced, with value norms), and of cached
/// steps: a prompt of 5, then one token at a time (the products' one-row path).
std::vector<std::vector<float>> outputs(const Gpt2Model& model) {
  const std::vector<std::int64_t> tokens = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8};
  Gpt2ForwardOptions options;
  options.attribution = true;
  const auto whole = model.forward(tokens, options);
  std::vector<std::vector<float>> out{whole.logits.data};
  for (const auto& norms : whole.attribution->value_norms) out.push_back(norms.data);
  Gpt2Cache cache(model.config(), tokens.size());
  out.push_back(model.step(cache, {tokens.begin(), tokens.begin() + 5}).data);
  for (std::size_t t = 5; t < tokens.size(); ++t)
    out.push_back(model.step(cache, {tokens[t]}).data);
  return out;
}

}  // namespace

TEST_CASE(
    "gpt2 panels: finish stores only the blocks' matrices in panels, copy_weight reads them") {
  for (const auto& config : {config_of(40, 5), config_of(8, 2)}) {
    Gpt2Model model = random_gpt2(config, 51);
    INFO("d_model " << config.d_model);
    // random_gpt2 finished the model; the values it wrote, in row order:
    Gpt2Model row_order(config);
    for (const std::string& name : model.weight_names()) {
      const std::vector<float> values = weight_copy(model, name);
      std::copy(values.begin(), values.end(), row_order.weight_data(name));
    }
    for (const std::string& name : model.weight_names()) {
      const bool matrix = model.weight_shape(name).size() == 2 && name.rfind("h.", 0) == 0;
      CHECK(model.in_panels(name) == matrix);
      CHECK_FALSE(row_order.in_panels(name));
      // A view of row_order's own storage (never finished, so in row order).
      const attnscope::TensorView view = row_order.weight(name);
      CHECK(same_bits(weight_copy(model, name),
                      std::vector<float>(view.data, view.data + view.size)));
    }
    CHECK_THROWS_WITH(model.in_panels("h.9.mlp.c_fc.weight"),
                      Catch::Contains("'h.9.mlp.c_fc.weight' is not a tensor"));
  }
}

TEST_CASE("gpt2 panels: forward, steps and value norms give the row-order bits") {
  for (const auto& config : {config_of(40, 5), config_of(8, 2)}) {
    Gpt2Model model = random_gpt2(config, 52);
    INFO("d_model " << config.d_model);
    const auto in_panels = outputs(model);
    // weight() puts a matrix back in row order in place: the view is the
    // row-major tensor, and the passes read that matrix so from then on.
    const std::vector<std::string> matrices = block_matrices(model);
    const std::vector<float> before = weight_copy(model, matrices.front());
    const attnscope::TensorView view = model.weight(matrices.front());
    CHECK_FALSE(model.in_panels(matrices.front()));
    CHECK(same_bits(before, std::vector<float>(view.data, view.data + view.size)));
    const auto one_in_row_order = outputs(model);
    for (const std::string& name : matrices) model.weight(name);
    const auto all_in_row_order = outputs(model);
    REQUIRE(in_panels.size() == all_in_row_order.size());
    for (std::size_t i = 0; i < in_panels.size(); ++i) {
      INFO("output " << i);
      CHECK(same_bits(in_panels[i], one_in_row_order[i]));
      CHECK(same_bits(in_panels[i], all_in_row_order[i]));
    }
    // finish() stores them in panels again, with the same results.
    model.finish();
    for (const std::string& name : matrices) CHECK(model.in_panels(name));
    const auto again = outputs(model);
    for (std::size_t i = 0; i < in_panels.size(); ++i) CHECK(same_bits(in_panels[i], again[i]));
  }
}

TEST_CASE("gpt2 panels: weight_data hands out the row-order values to change, then finish") {
  const Gpt2Config config = config_of(40, 5);
  Gpt2Model model = random_gpt2(config, 53);
  const std::string name = "h.1.mlp.c_proj.weight";
  const std::vector<float> before = weight_copy(model, name);
  float* data = model.weight_data(name);
  CHECK_FALSE(model.in_panels(name));
  CHECK_FALSE(model.finished());
  CHECK(same_bits(before, std::vector<float>(data, data + before.size())));
  data[7] = 0.25f;  // row 0, column 7: a change where row order puts it
  model.finish();
  CHECK(model.in_panels(name));
  std::vector<float> want = before;
  want[7] = 0.25f;
  CHECK(same_bits(weight_copy(model, name), want));
}
