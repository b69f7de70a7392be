// Finite inputs whose block-part results overflow float: each part throws
// attnscope::Error naming itself instead of returning inf or NaN (found by
// tests/fuzz/fuzz_block).
#include <catch2/catch.hpp>

#include <limits>

#include "attnscope/attnscope.hpp"

using attnscope::Error;
using attnscope::Tensor;

namespace {
constexpr float kMax = std::numeric_limits<float>::max();
}

TEST_CASE("block parts reject results that overflow float", "[block][errors]") {
  const Tensor big({2}, {kMax, -kMax});
  const Tensor same({2}, {kMax, -kMax});
  CHECK_THROWS_WITH(attnscope::residual_add(big, same),
                    Catch::Contains("residual_add: the output overflows float"));
  // A row that normalises fine, scaled by a gamma that overflows.
  const Tensor row({2}, {1.0f, -1.0f});
  CHECK_THROWS_WITH(
      attnscope::layer_norm(row, Tensor({2}, {kMax, kMax}), Tensor({2}, {kMax, kMax}), 1e-5f),
      Catch::Contains("layer_norm: the output overflows float"));
  attnscope::Linear layer{Tensor({2, 1}, {kMax, kMax}), {}};
  CHECK_THROWS_WITH(attnscope::linear(Tensor({2}, {2.0f, 2.0f}), layer),
                    Catch::Contains("linear: the output overflows float"));
  attnscope::Linear second{Tensor({1, 1}, {1.0f}), {}};
  CHECK_THROWS_WITH(attnscope::feed_forward(Tensor({2}, {2.0f, 2.0f}), layer, second,
                                            attnscope::Activation::ReLU),
                    Catch::Contains("feed_forward: the first linear layer overflows float"));
  // Still usable afterwards.
  CHECK(attnscope::residual_add(Tensor({1}, {1.0f}), Tensor({1}, {2.0f})).data[0] == 3.0f);
}
