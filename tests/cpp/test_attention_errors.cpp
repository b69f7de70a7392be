// Invalid input to attention() and self_attention() throws attnscope::Error
// whose message names the argument, the expected and the actual shape.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <type_traits>

#include "attnscope/attention.hpp"
#include "test_attention_reference.hpp"
#include "test_kernels_support.hpp"

using namespace attnscope;
using attnscope::testing::filled;
using attnscope::testing::random_tensor;
using Catch::Matchers::Contains;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

SelfAttentionWeights weights(std::size_t C, std::size_t H, std::size_t d) {
  SelfAttentionWeights w;
  w.heads = H;
  w.wq = filled({C, H * d});
  w.wk = filled({C, H * d});
  w.wv = filled({C, H * d});
  return w;
}

}  // namespace

TEST_CASE("attention rejects mismatched q, k, v shapes", "[attention][errors]") {
  const Tensor q = filled({2, 4});
  CHECK_THROWS_WITH(attention(q, filled({2, 3}), filled({2, 4})),
                    "attention: k has shape (2, 3), expected (Tk, d_k=4) with B and d_k from q");
  CHECK_THROWS_WITH(attention(q, filled({2, 4}), filled({3, 4})),
                    "attention: v has shape (3, 4), expected (Tk=2, d_v) to match k");
  CHECK_THROWS_WITH(
      attention(filled({2, 3, 5, 4}), filled({2, 2, 5, 4}), filled({2, 3, 5, 1})),
      "attention: q has H=3 heads and k has Hkv=2, expected H to be a multiple of Hkv");
  CHECK_THROWS_WITH(attention(filled({3, 5, 4}), filled({5, 4}), filled({3, 5, 4})),
                    Contains("k has shape (5, 4), expected (Hkv, Tk, d_k=4)"));
  CHECK_THROWS_WITH(
      attention(filled({4}), filled({4}), filled({4})),
      "attention: q has shape (4,), expected (B, H, Tq, d_k), (H, Tq, d_k) or (Tq, d_k)");
  CHECK_THROWS_AS(attention(q, filled({2, 3}), q), Error);
}

TEST_CASE("attention rejects views whose size or data do not match their shape",
          "[attention][errors]") {
  const std::vector<float> values(8, 0.5f);
  const TensorView q({2, 4}, values.data(), 8);
  CHECK_THROWS_WITH(attention(q, TensorView({2, 4}, values.data(), 7), q),
                    "attention: k has shape (2, 4) (8 values) but holds 7 values");
  CHECK_THROWS_WITH(attention(q, q, TensorView({2, 4}, nullptr, 8)),
                    "attention: v has 8 values but no data (a null pointer)");
  CHECK_THROWS_WITH(attention(TensorView(), q, q),
                    "attention: q has shape () (1 values) but holds 0 values");
  // The same view may stand for q, k and v at once.
  CHECK(attention(q, q, q).output.shape == Shape{2, 4});
}

TEST_CASE("attention rejects zero sizes and inconsistent data", "[attention][errors]") {
  CHECK_THROWS_WITH(attention(filled({0, 4}), filled({0, 4}), filled({0, 4})),
                    "attention: q has shape (0, 4), every dimension must be at least 1");
  Tensor bad = filled({2, 4});
  bad.data.pop_back();
  CHECK_THROWS_WITH(attention(filled({2, 4}), bad, filled({2, 4})),
                    "attention: k has shape (2, 4) (8 values) but holds 7 values");
  CHECK_THROWS_WITH(Tensor({2, 2}, {1, 2, 3}), "Tensor: shape (2, 2) needs 4 values, got 3");
}

TEST_CASE("attention rejects NaN and infinity, naming the first bad index", "[attention][errors]") {
  Tensor q = filled({3, 2}), k = filled({3, 2}), v = filled({3, 2});
  q.data[3] = kNaN;
  CHECK_THROWS_WITH(attention(q, k, v),
                    "attention: q has a non-finite value (NaN) at flat index 3 of shape (3, 2)");
  q.data[3] = 0.0f;
  v.data[5] = -kInf;
  v.data[4] = kInf;
  CHECK_THROWS_WITH(attention(q, k, v),
                    Contains("v has a non-finite value (+inf) at flat index 4"));
}

TEST_CASE("attention rejects bad masks", "[attention][errors]") {
  const Tensor q = filled({2, 3, 4}), v = filled({2, 3, 4});
  AttentionOptions o;
  o.mask.lengths = {4};
  CHECK_THROWS_WITH(attention(q, q, v, o),
                    "attention: mask.lengths[0] is 4, expected at most Tk=3");
  o.mask.lengths = {1, 2};
  CHECK_THROWS_WITH(attention(q, q, v, o),
                    "attention: mask.lengths has 2 entries, expected one per sequence (B=1)");
  o.mask.lengths.clear();
  o.mask.additive = filled({3, 4});
  CHECK_THROWS_WITH(attention(q, q, v, o),
                    "attention: mask.additive has shape (3, 4), expected (Tq, Tk) = (3, 3), "
                    "(B, Tq, Tk) = (1, 3, 3) or (B, H, Tq, Tk) = (1, 2, 3, 3)");
  o.mask.additive = filled({3, 3});
  o.mask.additive.data[4] = kNaN;
  CHECK_THROWS_WITH(attention(q, q, v, o),
                    Contains("mask.additive has a non-finite value (NaN) at flat index 4"));
  o.mask.additive.data[4] = kInf;
  CHECK_THROWS_WITH(attention(q, q, v, o), Contains("mask.additive has a non-finite value (+inf)"));
  o.mask.additive.data[4] = -kInf;  // -inf masks, it is allowed
  CHECK_NOTHROW(attention(q, q, v, o));
  o.mask.additive = Tensor();
  o.mask.allowed.shape = {2, 2, 3};
  o.mask.allowed.data.assign(12, 1);
  CHECK_THROWS_WITH(attention(q, q, v, o), Contains("mask.allowed has shape (2, 2, 3), expected"));
  o.mask.allowed.shape = {3, 3};
  CHECK_THROWS_WITH(attention(q, q, v, o),
                    "attention: mask.allowed has shape (3, 3) (9 values) but holds 12 values");
  o.mask.allowed = BoolTensor();
  o.scale = Scale::custom(kNaN);
  CHECK_THROWS_WITH(attention(q, q, v, o), Contains("attention: scale factor is"));
}

TEST_CASE("attention reports scores that overflow float instead of returning NaN",
          "[attention][errors]") {
  const Tensor big = filled({2, 2}, 3e19f);
  AttentionOptions o;
  for (bool trace : {true, false}) {
    o.trace = trace;
    CHECK_THROWS_WITH(attention(big, big, filled({2, 2}), o),
                      Contains("attention: scores of batch 0, head 0 may reach"));
  }
}

TEST_CASE("values near FLT_MAX stay finite in both paths", "[attention][errors]") {
  const std::size_t T = 70;
  const Tensor q = filled({T, 2}, 0.1f), v = filled({T, 2}, 3e38f);
  AttentionOptions o;
  for (bool trace : {true, false}) {
    o.trace = trace;
    const AttentionResult r = attention(q, q, v, o);
    INFO("trace = " << trace);
    for (float y : r.output.data) CHECK(y == Approx(3e38).epsilon(1e-5));
  }
}

TEST_CASE("self_attention rejects bad weights", "[attention][errors]") {
  const Tensor x = filled({2, 3, 4});
  SelfAttentionWeights w = weights(4, 2, 3);
  CHECK_NOTHROW(self_attention(x, w));
  w.wq = filled({2, 6});
  CHECK_THROWS_WITH(self_attention(x, w),
                    "self_attention: wq has shape (2, 6), expected (C=4, H*d_k) with C from x");
  w = weights(4, 2, 3);
  w.heads = 4;
  CHECK_THROWS_WITH(self_attention(x, w),
                    "self_attention: wq has shape (4, 6), expected its width H*d_k to be a "
                    "multiple of heads=4");
  w.heads = 0;
  CHECK_THROWS_WITH(self_attention(x, w), "self_attention: heads is 0, expected at least 1");
  w = weights(4, 2, 3);
  w.wk = filled({4, 4});
  CHECK_THROWS_WITH(self_attention(x, w),
                    "self_attention: wk has shape (4, 4), expected (4, 6) to match wq");
  w = weights(4, 2, 3);
  w.bq = filled({5});
  CHECK_THROWS_WITH(self_attention(x, w), "self_attention: bq has shape (5,), expected (H*d_k=6,)");
  w = weights(4, 2, 3);
  w.wo = filled({5, 4});
  CHECK_THROWS_WITH(
      self_attention(x, w),
      "self_attention: wo has shape (5, 4), expected (H*d_v=6, C_out) with H*d_v from wv");
  w = weights(4, 2, 3);
  w.bo = filled({4});
  CHECK_THROWS_WITH(self_attention(x, w), Contains("bo has shape (4,) but wo is absent"));
  w = weights(4, 2, 3);
  w.wv.data[7] = kNaN;
  CHECK_THROWS_WITH(self_attention(x, w),
                    "self_attention: wv has a non-finite value (NaN) at "
                    "flat index 7 of shape (4, 6)");
  w = weights(4, 2, 3);
  CHECK_THROWS_WITH(self_attention(filled({3}), w),
                    "self_attention: x has shape (3,), expected (B, T, C) or (T, C)");
  AttentionOptions o;
  o.mask.lengths = {3};
  CHECK_THROWS_WITH(self_attention(x, w, o),
                    "self_attention: mask.lengths has 1 entries, expected one per sequence (B=2)");
}

TEST_CASE("sizes too large to count are a ResourceError", "[attention][errors]") {
  // A negative size from JavaScript arrives as a huge size_t.
  const std::size_t huge = static_cast<std::size_t>(-1);
  CHECK_THROWS_AS(Tensor::zeros({huge, 3}), ResourceError);
  CHECK_THROWS_WITH(
      checked_element_count({huge, 3}, "test"),
      Contains("test: shape (" + std::to_string(huge) + ", 3) has too many elements"));
  Tensor q;
  q.shape = {huge / 2, huge / 2};
  CHECK_THROWS_AS(attention(q, q, q), ResourceError);
  CHECK_THROWS_WITH(attention(q, q, q), Contains("attention: q: shape"));
  // Callers that catch Error catch a ResourceError too.
  STATIC_REQUIRE(std::is_base_of<Error, ResourceError>::value);
  CHECK_THROWS_AS(attention(q, q, q), Error);
}

TEST_CASE("the library stays usable after an error", "[attention][errors]") {
  std::mt19937 rng(61);
  const Tensor q = random_tensor(rng, {4, 3});
  CHECK_THROWS_AS(attention(q, filled({4, 2}), q), Error);
  const AttentionResult r = attention(q, q, q);
  CHECK(r.output.shape == Shape{4, 3});
}
