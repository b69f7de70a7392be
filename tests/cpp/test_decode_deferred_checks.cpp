// A decode step that reads every key and value checks k and v only when its
// output is not finite (attention_internal.hpp: DeferredChecks). These cases
// put each kind of bad value where it could hide: in the last and first key,
// behind a weight that underflows to 0, and as a -inf score that would pass
// for a masked key. Each must still give the eager path's named error.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "attnscope/attention.hpp"
#include "test_attention_reference.hpp"

using namespace attnscope;
using attnscope::testing::random_tensor;
using Catch::Matchers::Contains;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr std::size_t H = 4, Hkv = 2, Tk = 37, d = 8;

struct Step {
  std::mt19937 rng{7};
  Tensor q = random_tensor(rng, {1, H, 1, d});
  Tensor k = random_tensor(rng, {1, Hkv, Tk, d});
  Tensor v = random_tensor(rng, {1, Hkv, Tk, d});
};

AttentionOptions fast_causal() {
  AttentionOptions o;
  o.trace = false;
  o.mask.causal = true;
  return o;
}

std::string index_of(std::size_t head, std::size_t row, std::size_t col) {
  return "at flat index " + std::to_string((head * Tk + row) * d + col);
}

}  // namespace

TEST_CASE("decode step: a non-finite key or value is named wherever it sits",
          "[attention][errors][decode]") {
  for (std::size_t row : {std::size_t(0), Tk / 2, Tk - 1}) {
    for (float bad : {kNaN, kInf, -kInf}) {
      Step k_case;
      k_case.k.data[(1 * Tk + row) * d + 3] = bad;
      CHECK_THROWS_WITH(
          attention(k_case.q, k_case.k, k_case.v, fast_causal()),
          Contains("attention: k has a non-finite value") && Contains(index_of(1, row, 3)));
      Step v_case;
      v_case.v.data[(0 * Tk + row) * d + 5] = bad;
      CHECK_THROWS_WITH(
          attention(v_case.q, v_case.k, v_case.v, fast_causal()),
          Contains("attention: v has a non-finite value") && Contains(index_of(0, row, 5)));
    }
  }
}

TEST_CASE("decode step: a -inf score is not taken for a masked key",
          "[attention][errors][decode]") {
  Step s;
  for (std::size_t p = 0; p < d; ++p) s.q.data[p] = 1.0f;  // head 0 reads kv head 0
  s.k.data[4 * d + 2] = -kInf;                             // q·k = -inf, weight 0 if unchecked
  CHECK_THROWS_WITH(attention(s.q, s.k, s.v, fast_causal()),
                    Contains("k has a non-finite value (-inf)") && Contains(index_of(0, 4, 2)));
}

TEST_CASE("decode step: a value behind a weight of 0 is still checked",
          "[attention][errors][decode]") {
  Step s;
  for (std::size_t p = 0; p < d; ++p) s.k.data[7 * d + p] = -1e3f * s.q.data[p];  // exp underflows
  s.v.data[7 * d] = kInf;
  CHECK_THROWS_WITH(attention(s.q, s.k, s.v, fast_causal()),
                    Contains("v has a non-finite value (+inf)") && Contains(index_of(0, 7, 0)));
}

TEST_CASE("decode step: scores that overflow are named as on the checked path",
          "[attention][errors][decode]") {
  for (float sign : {1.0f, -1.0f}) {
    Step s;
    for (std::size_t p = 0; p < d; ++p) {
      s.q.data[p] = 1e20f;
      s.k.data[9 * d + p] = sign * 1e20f;  // one key's score: ±8e40
    }
    CHECK_THROWS_WITH(attention(s.q, s.k, s.v, fast_causal()),
                      Contains("scores of batch 0, head 0 may reach"));
  }
}

TEST_CASE("decode step: the deferred checks leave good inputs' results unchanged",
          "[attention][decode]") {
  Step s;
  AttentionOptions traced = fast_causal();
  traced.trace = true;
  const AttentionResult fast = attention(s.q, s.k, s.v, fast_causal());
  const AttentionResult slow = attention(s.q, s.k, s.v, traced);
  REQUIRE(fast.output.data.size() == slow.output.data.size());
  for (std::size_t i = 0; i < fast.output.data.size(); ++i) {
    CHECK(fast.output.data[i] == Approx(slow.output.data[i]).margin(1e-6));
  }
}
