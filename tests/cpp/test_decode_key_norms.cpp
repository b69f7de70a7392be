// A decode step whose checks are deferred (attention_internal.hpp:
// DeferredChecks) bounds its scores after the kernel, with the key norms the
// kernel took while reading the keys. These cases check that it accepts and
// refuses exactly what the traced path does, with the same message, and that
// the kernel's norms are the checks' own sums of squares to the bit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "attnscope/attention.hpp"
#include "kernels/decode_attention.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/scan.hpp"
#include "test_attention_reference.hpp"

using namespace attnscope;
using attnscope::testing::random_tensor;

namespace {

constexpr std::size_t H = 8, Hkv = 2, Tk = 45, d = 16;  // groups of 4 query heads

struct Step {
  std::mt19937 rng{11};
  Tensor q = random_tensor(rng, {1, H, 1, d});
  Tensor k = random_tensor(rng, {1, Hkv, Tk, d});
  Tensor v = random_tensor(rng, {1, Hkv, Tk, d});
};

AttentionOptions options(bool trace, bool rope) {
  AttentionOptions o;
  o.trace = trace;
  o.mask.causal = true;
  o.rope.enabled = rope;
  return o;
}

// The message attention() throws, or "" when it returns.
std::string error_of(const Step& s, const AttentionOptions& o) {
  try {
    attention(s.q, s.k, s.v, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("decode step: keys whose norms break the score bound are refused as on the traced path",
          "[attention][errors][decode]") {
  for (bool rope : {false, true}) {
    Step s;
    // kv head 1 (query heads 4..7): one key of norm 4e19·4 against queries
    // of norm 4e19·4, so |q|·|k| ≈ 2.6e39 > FLT_MAX; every value finite.
    for (std::size_t p = 0; p < d; ++p) {
      s.k.data[(1 * Tk + 30) * d + p] = 4e19f;
      s.q.data[5 * d + p] = 4e19f;
    }
    const std::string traced = error_of(s, options(true, rope));
    CAPTURE(rope, traced);
    CHECK_THAT(traced, Catch::Matchers::Contains("attention: scores of batch 0, head 5 may reach"));
    CHECK(error_of(s, options(false, rope)) == traced);
  }
}

TEST_CASE("decode step: a key row whose float sum of squares overflows is measured in double",
          "[attention][decode]") {
  for (bool rope : {false, true}) {
    Step s;
    // |k|² = 16·1e40 overflows float, |k| = 4e20 does not: with queries of
    // norm about 1e-3 the bound holds, and holds only if it is taken in
    // double, as max_row_norm takes it.
    for (std::size_t p = 0; p < d; ++p) s.k.data[(0 * Tk + 12) * d + p] = 1e20f;
    for (float& x : s.q.data) x *= 1e-3f;
    CAPTURE(rope);
    const AttentionResult fast = attention(s.q, s.k, s.v, options(false, rope));
    const AttentionResult traced = attention(s.q, s.k, s.v, options(true, rope));
    for (std::size_t i = 0; i < fast.output.data.size(); ++i) {
      CHECK(fast.output.data[i] == Approx(traced.output.data[i]).margin(1e-6));
    }
    // Queries a little larger make the double bound fail on both paths alike.
    for (float& x : s.q.data) x *= 1e21f;
    const std::string refused = error_of(s, options(true, rope));
    CHECK_THAT(refused,
               Catch::Matchers::Contains("attention: scores of batch 0, head 0 may reach"));
    CHECK(error_of(s, options(false, rope)) == refused);
  }
}

TEST_CASE("decode kernel: its key norms are the checks' sums of squares to the bit",
          "[kernels][decode]") {
  // The library's checks sum with sum_of_squares<KeyNormArch>, the baseline
  // instruction set, which this file is compiled for too; the kernel may run
  // a wider one (decode_attention_best).
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-3.0f, 3.0f);
  for (std::size_t width : {std::size_t(7), std::size_t(64), std::size_t(128)}) {
    for (std::size_t rows : {std::size_t(1), std::size_t(4), std::size_t(9)}) {
      const std::size_t keys = 131;
      std::vector<float> q(rows * width), k(keys * width), v(keys * width);
      for (float& x : q) x = value(rng);
      for (float& x : k) x = value(rng);
      for (float& x : v) x = value(rng);
      float expected = 0.0f;
      for (std::size_t j = 0; j < keys; ++j) {
        expected = std::max(
            expected, kernels::sum_of_squares<kernels::KeyNormArch>(k.data() + j * width, width));
      }
      kernels::HeadMask mask;  // causal, the query last: every key is read
      mask.seq_len = keys;
      mask.key_length = keys;
      mask.causal = true;
      mask.query_offset = keys - 1;
      mask.queries_per_head = 1;
      std::vector<float> out(rows * width), scores(kernels::decode_scores_size(keys));
      std::vector<float> lanes(kernels::decode_lanes_size(width, width));
      std::vector<std::uint8_t> fully_masked(rows);
      float norm2_max = -1.0f;
      CHECK(kernels::decode_attention_best(q.data(), k.data(), v.data(), rows, keys, width, width,
                                           0.25f, mask, out.data(), fully_masked.data(),
                                           scores.data(), lanes.data(), &norm2_max));
      CAPTURE(width, rows);
      CHECK(norm2_max == expected);
    }
  }
}

TEST_CASE("decode kernel: it reports a non-finite scaled score wherever the key sits",
          "[kernels][decode]") {
  // attention() defers its checks of k to this flag (with the norms above);
  // a -inf key gives a -inf score, which would otherwise pass as a masked key.
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const std::size_t keys = 131, width = 64;
  for (std::size_t rows : {std::size_t(1), std::size_t(4), std::size_t(9)}) {
    std::vector<float> q(rows * width), k(keys * width), v(keys * width);
    for (float& x : q) x = value(rng);
    for (float& x : k) x = value(rng);
    for (float& x : v) x = value(rng);
    kernels::HeadMask mask;  // no mask: every key is read
    mask.seq_len = keys;
    mask.key_length = keys;
    std::vector<float> out(rows * width), scores(kernels::decode_scores_size(keys));
    std::vector<float> lanes(kernels::decode_lanes_size(width, width));
    std::vector<std::uint8_t> fully_masked(rows);
    const auto finite = [&] {
      return kernels::decode_attention_best(q.data(), k.data(), v.data(), rows, keys, width, width,
                                            0.125f, mask, out.data(), fully_masked.data(),
                                            scores.data(), lanes.data());
    };
    CAPTURE(rows);
    CHECK(finite());
    // The first key of a pass, one inside it, and the last (a pass of its own).
    for (std::size_t key : {std::size_t(0), std::size_t(66), keys - 1}) {
      CAPTURE(key);
      const float kept = k[key * width + 5];
      k[key * width + 5] = -INFINITY;
      CHECK_FALSE(finite());
      k[key * width + 5] = kept;
    }
    // A finite key whose score overflows once scaled.
    for (std::size_t p = 0; p < width; ++p) k[70 * width + p] = 3e37f;
    for (float& x : q) x = std::abs(x) + 1.0f;
    CHECK_FALSE(finite());
  }
}
