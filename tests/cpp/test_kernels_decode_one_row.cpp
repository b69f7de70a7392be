// The decode kernel takes a single query row (a head with a key/value head of
// its own, as in a GPT-2 step) through a values pass with the components in
// the lanes. Its output must be the bits the same row gets as row 0 of a
// group, where the rows fill the lanes: the same operations on the same
// numbers in the same order. Widths and key counts around the SIMD width, the
// pass's 8 values and its chunks, and the 128-key tiles; every mask kind,
// large logits and a fully masked row.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/decode_attention.hpp"
#include "test_kernels_support.hpp"

using namespace attnscope::kernels;
using attnscope::testing::random_floats;
using attnscope::testing::same_bits;

namespace {

struct MaskCase {
  std::string name;
  HeadMask mask;
};

// Causal for one query at the last position of `keys` keys, each row a head
// of its own (queries_per_head = 1), so that rows 0 and 1 see the same keys.
HeadMask causal_last_query(std::size_t keys) {
  HeadMask causal;
  causal.seq_len = keys;
  causal.key_length = keys;
  causal.causal = true;
  causal.query_offset = keys - 1;
  causal.queries_per_head = 1;
  return causal;
}

// causal_last_query and its variants with every other kind of mask.
std::vector<MaskCase> mask_cases(std::size_t keys, const std::vector<float>& alibi_slopes,
                                 const std::vector<float>& additive) {
  const HeadMask causal = causal_last_query(keys);
  std::vector<MaskCase> cases{{"causal", causal}};
  HeadMask window = causal;
  window.window = 5;
  window.sinks = 2;
  cases.push_back({"window of 5 with 2 sinks", window});
  HeadMask padded = causal;
  padded.key_length = keys / 2;
  cases.push_back({"padding after half the keys", padded});
  HeadMask alibi = causal;
  alibi.alibi_slopes = alibi_slopes.data();
  cases.push_back({"ALiBi", alibi});
  HeadMask added = causal;
  added.additive = additive.data();
  added.additive_head_stride = 0;
  cases.push_back({"additive with -inf", added});
  HeadMask none = causal;
  none.key_length = 0;
  cases.push_back({"every key padding (fully masked)", none});
  return cases;
}

}  // namespace

TEST_CASE("decode kernel: one row gives the bits it gets as row 0 of a group",
          "[kernels][decode]") {
  std::mt19937 rng(17);
  const std::size_t widths[] = {1, 3, 4, 5, 8, 9, 31, 32, 33, 64, 100, 128};
  const std::size_t key_counts[] = {1, 7, 8, 9, 17, 129, 300};
  const std::vector<float> alibi_slopes = {0.5f, 0.25f};
  int cases = 0;
  for (std::size_t d : widths) {
    for (std::size_t keys : key_counts) {
      std::vector<float> additive = random_floats(rng, keys, -3.0f, 3.0f);
      additive[keys / 3] = -std::numeric_limits<float>::infinity();
      for (float logit_size : {1.0f, 30.0f}) {
        // Rows 0 and 1 of a group; the single row is the group's row 0.
        std::vector<float> q = random_floats(rng, 2 * d, -logit_size, logit_size);
        const std::vector<float> k = random_floats(rng, keys * d);
        const std::vector<float> v = random_floats(rng, keys * d, -2.0f, 2.0f);
        for (const MaskCase& c : mask_cases(keys, alibi_slopes, additive)) {
          std::vector<float> group_out(2 * d), row_out(d);
          std::vector<float> scores(decode_scores_size(keys)), lanes(decode_lanes_size(d, d));
          std::uint8_t group_masked[2] = {9, 9}, row_masked = 9;
          float group_norm = -1.0f, row_norm = -1.0f;
          const float scale = 0.125f;
          const bool group_finite = decode_attention(q.data(), k.data(), v.data(), 2, keys, d, d,
                                                     scale, c.mask, group_out.data(), group_masked,
                                                     scores.data(), lanes.data(), &group_norm);
          const bool row_finite =
              decode_attention(q.data(), k.data(), v.data(), 1, keys, d, d, scale, c.mask,
                               row_out.data(), &row_masked, scores.data(), lanes.data(), &row_norm);
          INFO("d = " << d << ", keys = " << keys << ", logits ~" << logit_size << ", " << c.name);
          CHECK(same_bits(row_out, std::vector<float>(group_out.begin(), group_out.begin() + d)));
          CHECK(row_masked == group_masked[0]);
          CHECK(row_finite == group_finite);
          CHECK(row_norm == group_norm);
          ++cases;
        }
      }
    }
  }
  CHECK(cases == 12 * 7 * 2 * 6);
}

TEST_CASE("decode kernel: one row's output against a double-precision softmax",
          "[kernels][decode]") {
  // The values pass sums exp(score − max)·v key by key; checked here against
  // the double softmax of the float scores at lengths around the SIMD width.
  std::mt19937 rng(23);
  for (std::size_t d : {std::size_t(3), std::size_t(4), std::size_t(33), std::size_t(64)}) {
    for (std::size_t keys : {std::size_t(1), std::size_t(9), std::size_t(130)}) {
      const std::vector<float> q = random_floats(rng, d, -4.0f, 4.0f);
      const std::vector<float> k = random_floats(rng, keys * d);
      const std::vector<float> v = random_floats(rng, keys * d);
      const HeadMask mask = causal_last_query(keys);
      std::vector<float> out(d), scores(decode_scores_size(keys)), lanes(decode_lanes_size(d, d));
      std::uint8_t masked = 9;
      const float scale = 0.5f;
      CHECK(decode_attention(q.data(), k.data(), v.data(), 1, keys, d, d, scale, mask, out.data(),
                             &masked, scores.data(), lanes.data()));
      std::vector<double> s(keys);
      double max = -1e300, sum = 0;
      for (std::size_t j = 0; j < keys; ++j) {
        for (std::size_t p = 0; p < d; ++p) s[j] += double(q[p]) * k[j * d + p];
        s[j] *= scale;
        max = std::max(max, s[j]);
      }
      for (double& x : s) sum += (x = std::exp(x - max));
      INFO("d = " << d << ", keys = " << keys);
      CHECK(masked == 0);
      for (std::size_t c = 0; c < d; ++c) {
        double expected = 0;
        for (std::size_t j = 0; j < keys; ++j) expected += s[j] / sum * v[j * d + c];
        CHECK(out[c] == Approx(expected).margin(1e-6));
      }
    }
  }
}
