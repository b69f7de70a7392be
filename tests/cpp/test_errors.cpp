// Every class of bad input to the public API is rejected with the library's
// exception type and a message naming the argument, and the library works
// normally right after each rejection.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "attnscope/attnscope.hpp"

using attnscope::Activation;
using attnscope::AttentionOptions;
using attnscope::BlockWeights;
using attnscope::Linear;
using attnscope::Scale;
using attnscope::SelfAttentionWeights;
using attnscope::Shape;
using attnscope::Tensor;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
// Its product with any dimension >= 2 overflows size_t, on 32 and 64 bits.
constexpr std::size_t kHuge = std::numeric_limits<std::size_t>::max() / 2 + 1;

// A tensor whose fields are set directly, bypassing the constructor's check,
// as a caller filling the struct by hand could.
Tensor raw(Shape shape, std::vector<float> data) {
  Tensor t;
  t.shape = std::move(shape);
  t.data = std::move(data);
  return t;
}

// Distinct values (value + 0.01·(i mod 7)), so that no check passes because
// two entries happen to be equal.
Tensor varied(Shape shape, float value = 0.5f) {
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;
  std::vector<float> data(n);
  for (std::size_t i = 0; i < n; ++i) data[i] = value + 0.01f * static_cast<float>(i % 7);
  return Tensor(shape, data);
}

Tensor with_value(Tensor t, std::size_t index, float value) {
  t.data[index] = value;
  return t;
}

bool throws_resource_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const attnscope::ResourceError&) {
    return true;
  } catch (...) {
  }
  return false;
}

// Seed 001 through the whole API surface: after a rejected call every entry
// point still gives the exact answer.
void check_library_still_works() {
  const Tensor x({2, 2}, {1, 0, 0, 1});
  SelfAttentionWeights w;
  w.wq = x;
  w.wk = x;
  w.wv = Tensor({2, 2}, {1, 2, 3, 4});
  const attnscope::SelfAttentionResult r = attnscope::self_attention(x, w);
  REQUIRE(r.output.size() == 4);
  CHECK(r.output.data[0] == Approx(1.660477).margin(1e-6));
  CHECK(r.output.data[3] == Approx(3.339523).margin(1e-6));
  const Tensor n = attnscope::layer_norm(Tensor({2}, {1, 3}), Tensor(), Tensor());
  CHECK(n.data[0] == Approx(-1.0).margin(1e-4));
}

// The call throws attnscope::Error (not ResourceError) naming `fragment`.
#define CHECK_REJECTS(expr, fragment)                          \
  do {                                                         \
    CHECK_THROWS_AS(expr, attnscope::Error);                   \
    CHECK_THROWS_WITH(expr, Catch::Contains(fragment));        \
    CHECK_FALSE(throws_resource_error([&] { (void)(expr); })); \
    check_library_still_works();                               \
  } while (false)

// The call throws attnscope::ResourceError naming `fragment`.
#define CHECK_RESOURCE_ERROR(expr, fragment)            \
  do {                                                  \
    CHECK_THROWS_AS(expr, attnscope::ResourceError);    \
    CHECK_THROWS_WITH(expr, Catch::Contains(fragment)); \
    check_library_still_works();                        \
  } while (false)

SelfAttentionWeights valid_attention_weights(std::size_t C, std::size_t heads) {
  SelfAttentionWeights w;
  w.wq = varied({C, 4 * heads});
  w.wk = varied({C, 4 * heads}, -0.25f);
  w.wv = varied({C, 2 * heads});
  w.heads = heads;
  return w;
}

BlockWeights valid_block(std::size_t C) {
  BlockWeights w;
  w.attention = valid_attention_weights(C, 2);
  w.attention.wo = varied({4, C});
  w.ff1 = Linear{varied({C, 8}), varied({8})};
  w.ff2 = Linear{varied({8, C}), Tensor()};
  return w;
}

}  // namespace

TEST_CASE("attention rejects bad q, k, v", "[errors][attention]") {
  const Tensor q = varied({2, 3, 4});
  const Tensor k = varied({2, 3, 4});
  const Tensor v = varied({2, 3, 5});
  // Sanity: the valid call works, so every rejection below is the argument's fault.
  CHECK(attnscope::attention(q, k, v).output.shape == Shape{2, 3, 5});

  SECTION("shape mismatch") {
    CHECK_REJECTS(attnscope::attention(q, varied({2, 3, 3}), v), "k has shape (2, 3, 3)");
    CHECK_REJECTS(attnscope::attention(q, varied({2, 3, 4, 1}), v), "k has shape");
    CHECK_REJECTS(attnscope::attention(q, k, varied({2, 2, 5})), "v has shape (2, 2, 5)");
    CHECK_REJECTS(attnscope::attention(q, k, varied({3, 5})), "v has shape");
    CHECK_REJECTS(attnscope::attention(varied({4}), varied({4}), varied({4})), "q has shape (4,)");
    CHECK_REJECTS(attnscope::attention(varied({1, 1, 1, 1, 2}), varied({1, 1, 1, 1, 2}),
                                       varied({1, 1, 1, 1, 2})),
                  "q has shape");
    CHECK_REJECTS(attnscope::attention(raw({2, 3, 4}, std::vector<float>(23)), k, v),
                  "q has shape (2, 3, 4)");
  }
  SECTION("zero sizes") {
    CHECK_REJECTS(attnscope::attention(raw({0, 4}, {}), raw({0, 4}, {}), raw({0, 4}, {})),
                  "q has shape (0, 4)");
    CHECK_REJECTS(attnscope::attention(q, k, raw({2, 3, 0}, {})), "v has shape (2, 3, 0)");
    CHECK_REJECTS(attnscope::attention(Tensor(), k, v), "q");
  }
  SECTION("NaN and Inf") {
    CHECK_REJECTS(attnscope::attention(with_value(q, 5, kNaN), k, v), "q has a non-finite");
    CHECK_REJECTS(attnscope::attention(q, with_value(k, 0, kInf), v), "k has a non-finite");
    CHECK_REJECTS(attnscope::attention(q, k, with_value(v, 29, -kInf)), "v has a non-finite");
    AttentionOptions options;
    options.scale = Scale::custom(kNaN);
    CHECK_REJECTS(attnscope::attention(q, k, v, options), "scale");
  }
  SECTION("masks") {
    const Tensor q4 = varied({2, 1, 3, 4});
    const Tensor v4 = varied({2, 1, 3, 2});
    AttentionOptions options;
    options.mask.lengths = {3};
    CHECK_REJECTS(attnscope::attention(q4, q4, v4, options), "mask.lengths has 1 entries");
    options.mask.lengths = {3, 4};
    CHECK_REJECTS(attnscope::attention(q4, q4, v4, options), "mask.lengths[1] is 4");
    options.mask.lengths.clear();
    options.mask.additive = varied({3, 4});
    CHECK_REJECTS(attnscope::attention(q4, q4, v4, options), "mask.additive has shape (3, 4)");
    options.mask.additive = with_value(varied({3, 3}), 4, kNaN);
    CHECK_REJECTS(attnscope::attention(q4, q4, v4, options), "mask.additive");
    options.mask.additive = with_value(varied({3, 3}), 4, kInf);
    CHECK_REJECTS(attnscope::attention(q4, q4, v4, options), "mask.additive");
    options.mask.additive = with_value(varied({3, 3}), 4, -kInf);  // -inf masks: accepted
    CHECK_NOTHROW(attnscope::attention(q4, q4, v4, options));
    options.mask.additive = Tensor();
    options.mask.allowed.shape = {2, 2, 3, 3};
    options.mask.allowed.data.assign(36, 1);
    CHECK_REJECTS(attnscope::attention(q4, q4, v4, options), "mask.allowed has shape");
    options.mask.allowed.shape = {3, 3};
    options.mask.allowed.data.assign(8, 1);
    CHECK_REJECTS(attnscope::attention(q4, q4, v4, options), "mask.allowed");
  }
  SECTION("overflowing sizes") {
    CHECK_RESOURCE_ERROR(attnscope::attention(raw({kHuge, 4}, {1}), k, v), "q");
    CHECK_RESOURCE_ERROR(attnscope::attention(q, k, raw({2, 3, kHuge}, {1})), "v");
#if SIZE_MAX == UINT32_MAX
    // With a 32-bit size_t (wasm32) the (T, T) trace of T = 65536 cannot be counted.
    const Tensor long_q = varied({65536, 1});
    CHECK_RESOURCE_ERROR(attnscope::attention(long_q, long_q, long_q), "attention: trace");
#endif
  }
}

TEST_CASE("self_attention rejects bad x and weights", "[errors][self_attention]") {
  const Tensor x = varied({2, 3, 6});
  const SelfAttentionWeights w = valid_attention_weights(6, 2);
  CHECK(attnscope::self_attention(x, w).output.shape == Shape{2, 3, 4});

  SECTION("x") {
    CHECK_REJECTS(attnscope::self_attention(varied({6}), w), "x has shape (6,)");
    CHECK_REJECTS(attnscope::self_attention(varied({1, 2, 3, 6}), w), "x has shape");
    CHECK_REJECTS(attnscope::self_attention(raw({2, 0, 6}, {}), w), "x has shape (2, 0, 6)");
    CHECK_REJECTS(attnscope::self_attention(varied({2, 3, 5}), w), "wq has shape (6, 8)");
    CHECK_REJECTS(attnscope::self_attention(with_value(x, 7, kNaN), w), "x has a non-finite");
    CHECK_REJECTS(attnscope::self_attention(with_value(x, 0, kInf), w), "x has a non-finite");
    CHECK_RESOURCE_ERROR(attnscope::self_attention(raw({kHuge, 3, 6}, {1}), w), "x");
  }
  SECTION("heads") {
    SelfAttentionWeights bad = w;
    bad.heads = 0;
    CHECK_REJECTS(attnscope::self_attention(x, bad), "heads is 0");
    bad.heads = 3;  // 8 columns of wq do not split into 3 heads
    CHECK_REJECTS(attnscope::self_attention(x, bad), "multiple of heads=3");
    bad = w;
    bad.wv = varied({6, 5});
    CHECK_REJECTS(attnscope::self_attention(x, bad), "wv has shape (6, 5)");
  }
  SECTION("weight shapes") {
    SelfAttentionWeights bad = w;
    bad.wq = varied({5, 8});
    CHECK_REJECTS(attnscope::self_attention(x, bad), "wq has shape (5, 8), expected (C=6");
    bad = w;
    bad.wk = varied({6, 6});
    CHECK_REJECTS(attnscope::self_attention(x, bad), "wk has shape (6, 6)");
    bad = w;
    bad.bq = varied({7});
    CHECK_REJECTS(attnscope::self_attention(x, bad), "bq has shape (7,)");
    bad = w;
    bad.bv = varied({2, 2});
    CHECK_REJECTS(attnscope::self_attention(x, bad), "bv has shape (2, 2)");
    bad = w;
    bad.wo = varied({3, 6});
    CHECK_REJECTS(attnscope::self_attention(x, bad), "wo has shape (3, 6)");
    bad = w;
    bad.bo = varied({6});
    CHECK_REJECTS(attnscope::self_attention(x, bad), "bo");
    bad.wo = varied({4, 6});
    bad.bo = varied({5});
    CHECK_REJECTS(attnscope::self_attention(x, bad), "bo has shape (5,)");
    bad = w;
    bad.wq = raw({6, 8}, std::vector<float>(47, 1.0f));
    CHECK_REJECTS(attnscope::self_attention(x, bad), "wq");
  }
  SECTION("NaN and Inf in weights") {
    SelfAttentionWeights bad = w;
    bad.wq = with_value(w.wq, 3, kNaN);
    CHECK_REJECTS(attnscope::self_attention(x, bad), "wq has a non-finite");
    bad = w;
    bad.bk = with_value(varied({8}), 2, kInf);
    CHECK_REJECTS(attnscope::self_attention(x, bad), "bk has a non-finite");
    bad = w;
    bad.wo = with_value(varied({4, 6}), 0, -kInf);
    CHECK_REJECTS(attnscope::self_attention(x, bad), "wo has a non-finite");
  }
  SECTION("padding lengths") {
    AttentionOptions options;
    options.mask.lengths = {3, 3, 3};
    CHECK_REJECTS(attnscope::self_attention(x, w, options), "mask.lengths has 3 entries");
    options.mask.lengths = {4, 1};
    CHECK_REJECTS(attnscope::self_attention(x, w, options), "mask.lengths[0] is 4");
  }
}

TEST_CASE("block parts reject bad input", "[errors][block]") {
  const Tensor x = varied({2, 4});
  SECTION("linear") {
    const Linear layer{varied({4, 3}), varied({3})};
    CHECK(attnscope::linear(x, layer).shape == Shape{2, 3});
    CHECK_REJECTS(attnscope::linear(x, Linear{varied({5, 3}), Tensor()}),
                  "linear: weight has shape (5, 3), expected (in=4");
    CHECK_REJECTS(attnscope::linear(x, Linear{varied({12}), Tensor()}), "weight has shape (12,)");
    CHECK_REJECTS(attnscope::linear(x, Linear{Tensor(), Tensor()}), "weight has shape ()");
    CHECK_REJECTS(attnscope::linear(x, Linear{varied({4, 3}), varied({4})}),
                  "linear: bias has shape (4,), expected (out=3)");
    CHECK_REJECTS(attnscope::linear(x, Linear{with_value(varied({4, 3}), 1, kNaN), Tensor()}),
                  "weight has a non-finite");
    CHECK_REJECTS(attnscope::linear(x, Linear{varied({4, 3}), with_value(varied({3}), 2, kInf)}),
                  "bias has a non-finite");
    CHECK_REJECTS(attnscope::linear(with_value(x, 1, kInf), layer), "x has a non-finite");
    CHECK_REJECTS(attnscope::linear(raw({0, 4}, {}), layer), "x has shape (0, 4)");
    CHECK_REJECTS(attnscope::linear(raw({}, {1.0f}), layer), "x has shape ()");
    CHECK_RESOURCE_ERROR(attnscope::linear(raw({kHuge, 4}, {1}), layer), "linear: x");
  }
  SECTION("positional_encoding") {
    CHECK_REJECTS(attnscope::positional_encoding(0, 4), "T=0");
    CHECK_REJECTS(attnscope::positional_encoding(4, 0), "C=0");
    CHECK_REJECTS(attnscope::positional_encoding(4, 4, 0.0f), "base is 0");
    CHECK_REJECTS(attnscope::positional_encoding(4, 4, -10.0f), "base is -10");
    CHECK_REJECTS(attnscope::positional_encoding(4, 4, kNaN), "base is nan");
    CHECK_REJECTS(attnscope::positional_encoding(4, 4, kInf), "base is inf");
    CHECK_RESOURCE_ERROR(attnscope::positional_encoding(kHuge, 4), "positional_encoding");
    CHECK_RESOURCE_ERROR(attnscope::positional_encoding(4, kHuge), "positional_encoding");
  }
  SECTION("add_positional_encoding") {
    CHECK_REJECTS(attnscope::add_positional_encoding(varied({4})),
                  "add_positional_encoding: x has shape (4,), expected (T, C) or (B, T, C)");
    CHECK_REJECTS(attnscope::add_positional_encoding(varied({1, 2, 3, 4})), "x has shape");
    CHECK_REJECTS(attnscope::add_positional_encoding(raw({3, 0}, {})), "x has shape (3, 0)");
    CHECK_REJECTS(attnscope::add_positional_encoding(with_value(x, 0, kNaN)), "x has a non-finite");
    CHECK_REJECTS(attnscope::add_positional_encoding(x, -1.0f), "base is -1");
  }
  SECTION("residual_add") {
    CHECK_REJECTS(attnscope::residual_add(x, varied({4, 2})),
                  "residual_add: b has shape (4, 2), expected (2, 4)");
    CHECK_REJECTS(attnscope::residual_add(with_value(x, 3, kNaN), x), "a has a non-finite");
    CHECK_REJECTS(attnscope::residual_add(x, with_value(x, 3, -kInf)), "b has a non-finite");
    CHECK_REJECTS(attnscope::residual_add(raw({2, 4}, {1, 2}), raw({2, 4}, {1, 2})), "a has shape");
  }
  SECTION("layer_norm") {
    CHECK_REJECTS(attnscope::layer_norm(x, varied({3}), Tensor()),
                  "layer_norm: gamma has shape (3,), expected (C=4)");
    CHECK_REJECTS(attnscope::layer_norm(x, Tensor(), varied({1, 4})),
                  "layer_norm: beta has shape (1, 4), expected (C=4)");
    CHECK_REJECTS(attnscope::layer_norm(x, with_value(varied({4}), 0, kNaN), Tensor()),
                  "gamma has a non-finite");
    CHECK_REJECTS(attnscope::layer_norm(x, Tensor(), with_value(varied({4}), 3, kInf)),
                  "beta has a non-finite");
    CHECK_REJECTS(attnscope::layer_norm(x, Tensor(), Tensor(), 0.0f), "layer_norm: eps is 0");
    CHECK_REJECTS(attnscope::layer_norm(x, Tensor(), Tensor(), -1e-5f), "eps is -1e-05");
    CHECK_REJECTS(attnscope::layer_norm(x, Tensor(), Tensor(), kNaN), "eps is nan");
    CHECK_REJECTS(attnscope::layer_norm(x, Tensor(), Tensor(), kInf), "eps is inf");
    CHECK_REJECTS(attnscope::layer_norm(with_value(x, 2, kInf), Tensor(), Tensor()),
                  "x has a non-finite");
    CHECK_REJECTS(attnscope::layer_norm(raw({2, 0}, {}), Tensor(), Tensor()), "x has shape (2, 0)");
    CHECK_RESOURCE_ERROR(attnscope::layer_norm(raw({4, kHuge}, {1}), Tensor(), Tensor()),
                         "layer_norm: x");
  }
  SECTION("feed_forward") {
    const Linear first{varied({4, 8}), varied({8})};
    const Linear second{varied({8, 4}), varied({4})};
    CHECK(attnscope::feed_forward(x, first, second, Activation::GELU).shape == Shape{2, 4});
    CHECK_REJECTS(
        attnscope::feed_forward(x, Linear{varied({3, 8}), Tensor()}, second, Activation::ReLU),
        "feed_forward: first.weight has shape (3, 8), expected (C=4");
    CHECK_REJECTS(
        attnscope::feed_forward(x, first, Linear{varied({7, 4}), Tensor()}, Activation::ReLU),
        "feed_forward: second.weight has shape (7, 4), expected (hidden=8");
    CHECK_REJECTS(
        attnscope::feed_forward(x, Linear{varied({4, 8}), varied({4})}, second, Activation::ReLU),
        "first.bias has shape (4,), expected (out=8)");
    CHECK_REJECTS(
        attnscope::feed_forward(x, first, Linear{varied({8, 4}), with_value(varied({4}), 0, kNaN)},
                                Activation::ReLU),
        "second.bias has a non-finite");
    CHECK_REJECTS(attnscope::feed_forward(x, first, second, static_cast<Activation>(7)),
                  "activation is 7");
    CHECK_REJECTS(attnscope::feed_forward(with_value(x, 0, kNaN), first, second, Activation::ReLU),
                  "feed_forward: x has a non-finite");
  }
}

TEST_CASE("transformer_block rejects bad input and weights", "[errors][transformer_block]") {
  const Tensor x = varied({2, 3, 6});
  const BlockWeights w = valid_block(6);
  CHECK(attnscope::transformer_block(x, w).output.shape == x.shape);

  CHECK_REJECTS(attnscope::transformer_block(varied({6}), w),
                "transformer_block: x has shape (6,), expected (T, C) or (B, T, C)");
  CHECK_REJECTS(attnscope::transformer_block(with_value(x, 4, kNaN), w), "x has a non-finite");
  CHECK_REJECTS(attnscope::transformer_block(raw({2, 0, 6}, {}), w), "x has shape (2, 0, 6)");
  CHECK_RESOURCE_ERROR(attnscope::transformer_block(raw({kHuge, 3, 6}, {1}), w),
                       "transformer_block: x");

  BlockWeights bad = w;
  bad.attention.wo = Tensor();
  CHECK_REJECTS(attnscope::transformer_block(x, bad),
                "attention.wo has shape (), expected (H*d_v, C=6)");
  bad = w;
  bad.attention.wo = varied({4, 5});
  CHECK_REJECTS(attnscope::transformer_block(x, bad), "attention.wo has shape (4, 5)");
  bad = w;
  bad.attention.wo = varied({3, 6});  // rows must be H*d_v = 4
  CHECK_REJECTS(attnscope::transformer_block(x, bad), "wo has shape (3, 6)");
  bad = w;
  bad.attention.wq = varied({5, 8});
  CHECK_REJECTS(attnscope::transformer_block(x, bad), "wq has shape (5, 8)");
  bad = w;
  bad.attention.heads = 3;
  CHECK_REJECTS(attnscope::transformer_block(x, bad), "heads");
  bad = w;
  bad.attention.wv = with_value(w.attention.wv, 1, kInf);
  CHECK_REJECTS(attnscope::transformer_block(x, bad), "wv has a non-finite");
  bad = w;
  bad.norm1_gamma = varied({5});
  CHECK_REJECTS(attnscope::transformer_block(x, bad),
                "transformer_block: norm1_gamma has shape (5,), expected (C=6)");
  bad = w;
  bad.norm2_beta = with_value(varied({6}), 5, kNaN);
  CHECK_REJECTS(attnscope::transformer_block(x, bad), "norm2_beta has a non-finite");
  bad = w;
  bad.ff1.weight = varied({4, 8});
  CHECK_REJECTS(attnscope::transformer_block(x, bad), "ff1.weight has shape (4, 8), expected (C=6");
  bad = w;
  bad.ff2.weight = varied({8, 5});
  CHECK_REJECTS(attnscope::transformer_block(x, bad),
                "ff2.weight has shape (8, 5), expected (hidden=8, C=6)");
  bad = w;
  bad.ff2.bias = varied({3});
  CHECK_REJECTS(attnscope::transformer_block(x, bad), "ff2.bias has shape (3,)");
  bad = w;
  bad.eps = 0.0f;
  CHECK_REJECTS(attnscope::transformer_block(x, bad), "transformer_block: eps is 0");
  bad.eps = -1.0f;
  CHECK_REJECTS(attnscope::transformer_block(x, bad), "eps is -1");
  bad = w;
  bad.activation = static_cast<Activation>(-1);
  CHECK_REJECTS(attnscope::transformer_block(x, bad), "activation");

  AttentionOptions options;
  options.mask.lengths = {3, 4};
  CHECK_REJECTS(attnscope::transformer_block(x, w, options), "mask.lengths[1] is 4");
  options.mask.lengths = {1};
  CHECK_REJECTS(attnscope::transformer_block(x, w, options), "mask.lengths has 1 entries");
}
