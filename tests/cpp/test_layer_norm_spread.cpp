// LayerNorm of rows whose spread overflows a float sum of squares: every
// finite row normalises (before, 1/std became 0 and the row came out as beta,
// with no error), natively, in both wasm builds, and inside transformer_block.
#include <catch2/catch.hpp>

#include <limits>
#include <vector>

#include "attnscope/attnscope.hpp"

using attnscope::Tensor;

namespace {

constexpr float kMax = std::numeric_limits<float>::max();

void check_row(const Tensor& y, const std::vector<float>& expected) {
  REQUIRE(y.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CHECK(y.data[i] == Approx(expected[i]).epsilon(1e-5).margin(1e-6));
  }
}

}  // namespace

TEST_CASE("layer_norm normalises rows whose deviations overflow a float square",
          "[block][layer_norm]") {
  check_row(attnscope::layer_norm(Tensor({1, 2}, {1e20f, -1e20f}), {}, {}, 1e-5f), {1, -1});
  check_row(attnscope::layer_norm(Tensor({1, 2}, {3e19f, 1.0f}), {}, {}, 1e-5f), {1, -1});
  check_row(attnscope::layer_norm(Tensor({1, 2}, {1e20f, -1e20f}), {}, Tensor({2}, {5, 5}), 1e-5f),
            {6, 4});
  // The float sum itself overflows here.
  check_row(attnscope::layer_norm(Tensor({3}, {kMax, kMax, 1.0f}), {}, {}, 1e-5f),
            {0.70710678f, 0.70710678f, -1.41421356f});
  // A wide row beside an ordinary one: each row takes its own path.
  check_row(attnscope::layer_norm(Tensor({2, 2}, {-kMax, kMax, 1, 3}), {}, {}, 1e-5f),
            {-1, 1, -0.99999, 0.99999});
}

TEST_CASE("layer_norm of a wide row matches the double reference at every width",
          "[block][layer_norm]") {
  for (std::size_t n : {1u, 2u, 3u, 4u, 5u, 7u, 8u, 9u, 16u, 17u, 33u}) {
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = (i % 2 ? -3e37f : 2e37f) + static_cast<float>(i);
    const Tensor y = attnscope::layer_norm(Tensor({n}, x), {}, {}, 1e-5f);
    double mean = 0, var = 0;
    for (float v : x) mean += v;
    mean /= static_cast<double>(n);
    for (float v : x) var += (v - mean) * (v - mean);
    var /= static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double expected = (x[i] - mean) / std::sqrt(var + 1e-5);
      CHECK(y.data[i] == Approx(expected).epsilon(1e-5).margin(1e-6));
    }
  }
}

TEST_CASE("post-norm transformer_block normalises a residual with a wide spread",
          "[block][transformer_block][layer_norm]") {
  // Zero projections: attention adds 0, the feed-forward adds 0, so both
  // LayerNorms see x itself (and then its normalised form).
  attnscope::BlockWeights w;
  w.attention.wq = Tensor::zeros({2, 2});
  w.attention.wk = Tensor::zeros({2, 2});
  w.attention.wv = Tensor::zeros({2, 2});
  w.attention.wo = Tensor::zeros({2, 2});
  w.ff1 = {Tensor::zeros({2, 2}), {}};
  w.ff2 = {Tensor::zeros({2, 2}), {}};
  w.norm_first = false;
  const attnscope::BlockResult r = attnscope::transformer_block(Tensor({1, 2}, {1e20f, -1e20f}), w);
  check_row(r.trace.norm1, {1, -1});
  check_row(r.output, {1, -1});
}
