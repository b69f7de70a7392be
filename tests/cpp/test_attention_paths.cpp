// The fast (flash) path agrees with the traced path for every shape and
// mask combination, and both treat fully masked queries the same way.
#include <catch2/catch.hpp>

#include <random>
#include <tuple>

#include "attnscope/attention.hpp"
#include "test_attention_reference.hpp"
#include "test_kernels_support.hpp"

using namespace attnscope;
using attnscope::testing::max_scaled_error;
using attnscope::testing::random_tensor;

namespace {

Mask make_mask(int combo, std::size_t additive_rank, std::size_t B, std::size_t H, std::size_t T,
               std::mt19937& rng) {
  Mask mask;
  mask.causal = combo & 1;
  if (combo & 2) {
    std::uniform_int_distribution<std::size_t> len(1, T);
    for (std::size_t b = 0; b < B; ++b) mask.lengths.push_back(len(rng));
  }
  Shape shape = {T, T};
  if (additive_rank >= 3) shape.insert(shape.begin(), additive_rank == 4 ? H : B);
  if (additive_rank == 4) shape.insert(shape.begin(), B);
  if (combo & 4) {
    mask.additive = random_tensor(rng, shape, -3.0f, 3.0f);
    for (std::size_t i = 7; i < mask.additive.size(); i += 13) {
      mask.additive.data[i] = -std::numeric_limits<float>::infinity();
    }
  }
  if (combo & 8) {
    mask.allowed.shape = shape;
    std::bernoulli_distribution coin(0.8);
    std::size_t n = 1;
    for (std::size_t dim : shape) n *= dim;
    for (std::size_t i = 0; i < n; ++i) mask.allowed.data.push_back(coin(rng) ? 1 : 0);
  }
  return mask;
}

}  // namespace

TEST_CASE("fast path agrees with the traced path for random shapes and masks",
          "[attention][paths]") {
  std::mt19937 rng(41);
  std::uniform_int_distribution<std::size_t> pick_b(1, 3), pick_h(1, 4), pick_d(1, 24);
  const std::size_t lengths[] = {1, 2, 5, 15, 16, 17, 31, 64, 65, 70, 129, 200, 257};
  int cases = 0;
  for (std::size_t T : lengths) {
    for (int combo = 0; combo < 16; ++combo) {
      const std::size_t B = pick_b(rng), H = pick_h(rng), d_k = pick_d(rng), d_v = pick_d(rng);
      const std::size_t additive_rank = 2 + (combo + T) % 3;
      const Mask mask = make_mask(combo, additive_rank, B, H, T, rng);
      const Tensor q = random_tensor(rng, {B, H, T, d_k}, -2.0f, 2.0f);
      const Tensor k = random_tensor(rng, {B, H, T, d_k}, -2.0f, 2.0f);
      const Tensor v = random_tensor(rng, {B, H, T, d_v});
      AttentionOptions o;
      o.mask = mask;
      o.trace = true;
      const AttentionResult traced = attention(q, k, v, o);
      o.trace = false;
      const AttentionResult fast = attention(q, k, v, o);
      INFO("B=" << B << " H=" << H << " T=" << T << " d_k=" << d_k << " d_v=" << d_v
                << " combo=" << combo << " additive rank=" << additive_rank);
      CHECK_FALSE(fast.trace.has_value());
      CHECK(fast.output.shape == traced.output.shape);
      // Outputs average rows of v (|v| <= 1): 1e-5 relative to that scale.
      CHECK(max_scaled_error(fast.output.data, traced.output.data, 1.0) <= 1e-5);
      CHECK(fast.fully_masked == traced.fully_masked);
      CHECK(fast.fully_masked_count == traced.fully_masked_count);
      ++cases;
    }
  }
  CHECK(cases == 16 * 13);
}

TEST_CASE("both paths agree for extreme keys and scales, zero and negative scales",
          "[attention][paths]") {
  // Keys of 1e37 with a scale of 100 (the scaled keys would overflow, the
  // scores do not), scale 0, a negative scale, and scores near 1e8 where
  // one ulp is 8: both paths must round the scaled scores alike.
  std::mt19937 rng(43);
  const std::size_t T = 150, d = 4;
  for (auto [key_size, query_size, factor] :
       {std::tuple{1e37f, 1e-38f, 100.0f}, std::tuple{1.0f, 1.0f, 0.0f},
        std::tuple{1.0f, 1.0f, -3.0f}, std::tuple{3e30f, 1e-30f, 1e8f},
        std::tuple{4.0f, 4.0f, 1e7f}}) {
    Tensor q = random_tensor(rng, {1, 1, T, d}, -1.0f, 1.0f);
    Tensor k = random_tensor(rng, {1, 1, T, d}, -1.0f, 1.0f);
    for (float& x : q.data) x *= query_size;
    for (float& x : k.data) x *= key_size;
    const Tensor v = random_tensor(rng, {1, 1, T, d});
    AttentionOptions o;
    o.scale = Scale::custom(factor);
    o.mask.causal = true;
    o.trace = true;
    const AttentionResult traced = attention(q, k, v, o);
    o.trace = false;
    const AttentionResult fast = attention(q, k, v, o);
    INFO("keys ~" << key_size << ", queries ~" << query_size << ", scale " << factor);
    CHECK(max_scaled_error(fast.output.data, traced.output.data, 1.0) <= 1e-5);
  }
}

TEST_CASE("fully masked queries give zero output and are flagged in both paths",
          "[attention][paths]") {
  std::mt19937 rng(42);
  const std::size_t B = 2, H = 2, T = 20, d = 6;
  const Tensor q = random_tensor(rng, {B, H, T, d}), k = random_tensor(rng, {B, H, T, d}),
               v = random_tensor(rng, {B, H, T, d});
  Mask mask;
  mask.lengths = {0, T};  // sequence 0 is all padding
  mask.allowed.shape = {B, H, T, T};
  mask.allowed.data.assign(B * H * T * T, 1);
  // Sequence 1, head 1: queries 3 and 19 may attend to nothing.
  for (std::size_t j = 0; j < T; ++j) {
    mask.allowed.data[((1 * H + 1) * T + 3) * T + j] = 0;
    mask.allowed.data[((1 * H + 1) * T + 19) * T + j] = 0;
  }
  for (bool trace : {true, false}) {
    AttentionOptions o;
    o.mask = mask;
    o.trace = trace;
    const AttentionResult r = attention(q, k, v, o);
    INFO("trace = " << trace);
    CHECK(r.fully_masked_count == H * T + 2);
    for (std::size_t b = 0; b < B; ++b) {
      for (std::size_t h = 0; h < H; ++h) {
        for (std::size_t i = 0; i < T; ++i) {
          const std::size_t row = (b * H + h) * T + i;
          const bool expected = b == 0 || (h == 1 && (i == 3 || i == 19));
          CHECK(r.fully_masked[row] == (expected ? 1 : 0));
          for (std::size_t c = 0; c < d; ++c) {
            const float out = r.output.data[row * d + c];
            CHECK(out == out);  // never NaN
            if (expected) CHECK(out == 0.0f);
          }
          if (trace && expected) {
            for (std::size_t j = 0; j < T; ++j) {
              CHECK(r.trace->weights.data[row * T + j] == 0.0f);
              CHECK(r.trace->masked.data[row * T + j] == -std::numeric_limits<float>::infinity());
            }
          }
        }
      }
    }
  }
}

TEST_CASE("an additive -inf row and a causal row-0 boolean hole are fully masked",
          "[attention][paths]") {
  std::mt19937 rng(43);
  const std::size_t T = 5, d = 2;
  const Tensor q = random_tensor(rng, {T, d}), k = random_tensor(rng, {T, d}),
               v = random_tensor(rng, {T, d});
  Mask mask;
  mask.causal = true;
  mask.additive = Tensor({T, T}, std::vector<float>(T * T, 0.0f));
  for (std::size_t j = 0; j < T; ++j)
    mask.additive.data[2 * T + j] = -std::numeric_limits<float>::infinity();
  mask.allowed.shape = {T, T};
  mask.allowed.data.assign(T * T, 1);
  mask.allowed.data[0] = 0;  // query 0's only causal key
  for (bool trace : {true, false}) {
    AttentionOptions o;
    o.mask = mask;
    o.trace = trace;
    const AttentionResult r = attention(q, k, v, o);
    CHECK(r.fully_masked == std::vector<std::uint8_t>{1, 0, 1, 0, 0});
    CHECK(r.fully_masked_count == 2);
  }
}
