// The worked examples of the tutorials attnscope follows, reproduced
// exactly (in double precision, to float rounding); where a tutorial prints
// rounded figures, the rounding itself is reproduced exactly or the figure
// is left to a comment.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

#include "attnscope/attnscope.hpp"

using attnscope::AttentionOptions;
using attnscope::Scale;
using attnscope::SelfAttentionWeights;
using attnscope::Shape;
using attnscope::Tensor;

namespace {

void check_matrix(const Tensor& got, const std::vector<std::vector<double>>& want, double tol) {
  const std::size_t cols = want[0].size();
  REQUIRE(got.size() == want.size() * cols);
  for (std::size_t i = 0; i < want.size(); ++i) {
    for (std::size_t j = 0; j < cols; ++j) {
      INFO("row " << i << ", column " << j);
      CHECK(got.data[i * cols + j] == Approx(want[i][j]).margin(tol));
    }
  }
}

// Softmax of one row in double, max-subtracted.
std::vector<double> softmax(const std::vector<double>& s) {
  double mx = s[0], sum = 0.0;
  for (double v : s) mx = std::max(mx, v);
  std::vector<double> w(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) sum += (w[i] = std::exp(s[i] - mx));
  for (double& v : w) v /= sum;
  return w;
}

}  // namespace

// Seed 001: "Detailed Explanation of Self-Attention Mechanism", §5.1.
TEST_CASE("seed 001: X = I, W_Q = W_K = I, W_V = [[1,2],[3,4]], scaled", "[seeds][seed001]") {
  const Tensor x({2, 2}, {1, 0, 0, 1});
  SelfAttentionWeights w;
  w.wq = Tensor({2, 2}, {1, 0, 0, 1});
  w.wk = Tensor({2, 2}, {1, 0, 0, 1});
  w.wv = Tensor({2, 2}, {1, 2, 3, 4});

  // softmax(1/√2, 0) = (e^(1/√2), 1) / (e^(1/√2) + 1)
  const double e = std::exp(1.0 / std::sqrt(2.0));
  const double a = e / (1.0 + e);  // 0.6697615…
  REQUIRE(a == Approx(0.6697615).margin(1e-7));
  const std::vector<std::vector<double>> exact_weights{{a, 1 - a}, {1 - a, a}};
  // Output = weights · V with V = W_V: row 0 = a·[1,2] + (1-a)·[3,4].
  const std::vector<std::vector<double>> exact_output{{a * 1 + (1 - a) * 3, a * 2 + (1 - a) * 4},
                                                      {(1 - a) * 1 + a * 3, (1 - a) * 2 + a * 4}};

  for (bool trace : {true, false}) {
    AttentionOptions options;  // Scale::inv_sqrt_dk() is the default
    options.trace = trace;
    const attnscope::SelfAttentionResult r = attnscope::self_attention(x, w, options);
    INFO("trace = " << trace);
    REQUIRE(r.output.shape == Shape{2, 2});
    check_matrix(r.output, {{1.660477, 2.660477}, {2.339523, 3.339523}}, 1e-6);
    check_matrix(r.output, exact_output, 1e-6);
    // (The tutorial prints 1.6602, … : its weights rounded to 0.6699 before
    // multiplying; the exact figures above are the ones to hold to.)
    CHECK(r.fully_masked_count == 0);
    if (!trace) {
      CHECK_FALSE(r.trace.has_value());
      continue;
    }
    REQUIRE(r.trace.has_value());
    const attnscope::SelfAttentionTrace& t = *r.trace;
    // Q = X·W_Q = I, K = I, V = W_V  (tutorial eqs. 13–15)
    check_matrix(t.q, {{1, 0}, {0, 1}}, 0.0);
    check_matrix(t.k, {{1, 0}, {0, 1}}, 0.0);
    check_matrix(t.v, {{1, 2}, {3, 4}}, 0.0);
    // scores = Q·Kᵀ = I; scaled = I/√2  (eqs. 17–18)
    check_matrix(t.scores, {{1, 0}, {0, 1}}, 0.0);
    const double r2 = 1.0 / std::sqrt(2.0);
    check_matrix(t.scaled, {{r2, 0}, {0, r2}}, 1e-7);
    check_matrix(t.weights, exact_weights, 1e-6);  // eq. 27 prints them as 0.6699, 0.3301
  }

  // The same through attention() on the given Q, K, V.
  const attnscope::AttentionResult direct = attnscope::attention(
      Tensor({2, 2}, {1, 0, 0, 1}), Tensor({2, 2}, {1, 0, 0, 1}), Tensor({2, 2}, {1, 2, 3, 4}));
  REQUIRE(direct.output.shape == Shape{2, 2});
  check_matrix(direct.output, exact_output, 1e-6);
  REQUIRE(direct.trace.has_value());
  check_matrix(direct.trace->weights, exact_weights, 1e-6);
}

// Seed 002: "Illustrated: Self-Attention", dot-product (unscaled) attention.
TEST_CASE("seed 002: three inputs of width 4, unscaled dot-product attention", "[seeds][seed002]") {
  const Tensor x({3, 4}, {1, 0, 1, 0,  //
                          0, 2, 0, 2,  //
                          1, 1, 1, 1});
  SelfAttentionWeights w;
  w.wk = Tensor({4, 3}, {0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 1, 0});
  w.wq = Tensor({4, 3}, {1, 0, 1, 1, 0, 0, 0, 0, 1, 0, 1, 1});
  w.wv = Tensor({4, 3}, {0, 2, 0, 0, 3, 0, 1, 0, 3, 1, 1, 0});
  AttentionOptions options;
  options.scale = Scale::none();

  const attnscope::SelfAttentionResult r = attnscope::self_attention(x, w, options);
  REQUIRE(r.trace.has_value());
  const attnscope::SelfAttentionTrace& t = *r.trace;
  // Fig. 1.3a–c, exactly as printed.
  const std::vector<std::vector<double>> keys{{0, 1, 1}, {4, 4, 0}, {2, 3, 1}};
  const std::vector<std::vector<double>> values{{1, 2, 3}, {2, 8, 0}, {2, 6, 3}};
  const std::vector<std::vector<double>> queries{{1, 0, 2}, {2, 2, 2}, {2, 1, 3}};
  check_matrix(t.k, keys, 0.0);
  check_matrix(t.v, values, 0.0);
  check_matrix(t.q, queries, 0.0);
  // Step 4: Input 1's scores [2, 4, 4].
  REQUIRE(t.scores.size() == 9);
  CHECK(t.scores.data[0] == 2.0f);
  CHECK(t.scores.data[1] == 4.0f);
  CHECK(t.scores.data[2] == 4.0f);
  // Unscaled: scaled equals scores.
  CHECK(t.scaled.data == t.scores.data);

  // Every output row from the formula, in double.
  for (std::size_t i = 0; i < 3; ++i) {
    std::vector<double> s(3);
    for (std::size_t j = 0; j < 3; ++j) {
      for (std::size_t e = 0; e < 3; ++e) s[j] += queries[i][e] * keys[j][e];
      CHECK(t.scores.data[i * 3 + j] == s[j]);
    }
    const std::vector<double> weights = softmax(s);
    for (std::size_t e = 0; e < 3; ++e) {
      double want = 0.0;
      for (std::size_t j = 0; j < 3; ++j) want += weights[j] * values[j][e];
      INFO("output " << i + 1 << ", component " << e);
      CHECK(r.output.data[i * 3 + e] == Approx(want).epsilon(1e-6));
      CHECK(t.weights.data[i * 3 + e] == Approx(weights[e]).epsilon(1e-6));
    }
  }

  // Step 5 prints softmax([2, 4, 4]) "rounded to 1 decimal" as [0.0, 0.5, 0.5];
  // the exact weights are [0.0634, 0.4683, 0.4683] (0.0634 truncated to 0.0).
  CHECK(t.weights.data[0] == Approx(1.0 / (1.0 + 2.0 * std::exp(2.0))).epsilon(1e-6));
  // Steps 6–7 multiply those rounded weights with the values: with exactly
  // [0.0, 0.5, 0.5] the weighted sum is [2.0, 7.0, 1.5], as printed.
  const Tensor rounded_mix = attnscope::linear(
      Tensor({3}, {0.0f, 0.5f, 0.5f}), attnscope::Linear{Tensor({3, 3}, t.v.data), Tensor()});
  CHECK(rounded_mix.data == std::vector<float>{2.0f, 7.0f, 1.5f});
  // The exact Output 1, [1.936, 6.683, 1.595], is checked with the others above.
}

// Seed 000: "Self-Attention Mechanism" (Uzair Ahmad).
TEST_CASE("seed 000: softmax of the example logits, diffused and one-hot", "[seeds][seed000]") {
  const std::vector<double> logits{0.1, 0.4, -0.9, 0.02, 0.35, -0.62};
  const std::size_t n = logits.size();
  // Scores equal to the logits for every query: q = 1 (d_k = 1), k = logits.
  const Tensor q({n, 1}, std::vector<float>(n, 1.0f));
  Tensor k({n, 1}, std::vector<float>(logits.begin(), logits.end()));
  std::vector<float> identity(n * n, 0.0f);
  for (std::size_t i = 0; i < n; ++i) identity[i * n + i] = 1.0f;
  const Tensor v({n, n}, identity);  // output row = weights row

  struct Case {
    float factor;
    std::vector<double> printed;
  };
  // torch.softmax(logits).round(2) and torch.softmax(logits * 100).round(2).
  for (const Case& c : {Case{1.0f, {0.18, 0.25, 0.07, 0.17, 0.24, 0.09}},
                        Case{100.0f, {0.0, 0.99, 0.0, 0.0, 0.01, 0.0}}}) {
    std::vector<double> scaled(n);
    for (std::size_t j = 0; j < n; ++j) scaled[j] = logits[j] * c.factor;
    const std::vector<double> exact = softmax(scaled);
    for (bool trace : {true, false}) {
      AttentionOptions options;
      options.scale = Scale::custom(c.factor);
      options.trace = trace;
      const attnscope::AttentionResult r = attnscope::attention(q, k, v, options);
      INFO("factor " << c.factor << ", trace = " << trace);
      for (std::size_t i = 0; i < n; ++i) {
        double row_sum = 0.0;
        for (std::size_t j = 0; j < n; ++j) {
          const double got = r.output.data[i * n + j];
          row_sum += got;
          CHECK(got == Approx(exact[j]).margin(1e-6));
          CHECK(std::round(got * 100.0) / 100.0 == Approx(c.printed[j]).margin(1e-12));
          if (trace) CHECK(r.trace->weights.data[i * n + j] == Approx(exact[j]).margin(1e-6));
        }
        CHECK(row_sum == Approx(1.0).margin(1e-6));
      }
    }
  }
}

TEST_CASE("seed 000: B=6, T=8, C=32, head size 16, with look-ahead and padding masks",
          "[seeds][seed000]") {
  const std::size_t B = 6, T = 8, C = 32, d = 16;
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  auto random = [&](Shape shape) {
    std::size_t count = 1;
    for (std::size_t s : shape) count *= s;
    std::vector<float> data(count);
    for (float& value : data) value = dist(rng);
    return Tensor(shape, data);
  };
  const Tensor x = random({B, T, C});
  SelfAttentionWeights w;
  w.wk = random({C, d});
  w.wq = random({C, d});
  w.wv = random({C, d});

  SECTION("shapes, and weights are a distribution over the keys") {
    const attnscope::SelfAttentionResult r = attnscope::self_attention(x, w);
    REQUIRE(r.trace.has_value());
    CHECK(r.trace->k.shape == Shape{B, 1, T, d});
    CHECK(r.trace->q.shape == Shape{B, 1, T, d});
    CHECK(r.trace->v.shape == Shape{B, 1, T, d});
    CHECK(r.trace->scores.shape == Shape{B, 1, T, T});
    CHECK(r.trace->weights.shape == Shape{B, 1, T, T});
    CHECK(r.output.shape == Shape{B, T, d});
    for (std::size_t row = 0; row < B * T; ++row) {
      double sum = 0.0;
      for (std::size_t j = 0; j < T; ++j) {
        const float wj = r.trace->weights.data[row * T + j];
        CHECK(wj >= 0.0f);
        sum += wj;
      }
      CHECK(sum == Approx(1.0).margin(1e-6));
    }
    // Attention(Q_i, K_j) = Q_i·K_j / √d
    for (std::size_t i = 0; i < T * T; ++i) {
      CHECK(r.trace->scaled.data[i] == Approx(r.trace->scores.data[i] / 4.0).epsilon(1e-6));
    }
  }
  SECTION("look-ahead: the third token never attends to the fourth and later") {
    AttentionOptions options;
    options.mask.causal = true;
    const attnscope::SelfAttentionResult r = attnscope::self_attention(x, w, options);
    REQUIRE(r.trace.has_value());
    for (std::size_t b = 0; b < B; ++b) {
      for (std::size_t i = 0; i < T; ++i) {
        double sum = 0.0;
        for (std::size_t j = 0; j < T; ++j) {
          const float wj = r.trace->weights.data[(b * T + i) * T + j];
          if (j > i) CHECK(wj == 0.0f);
          sum += wj;
        }
        CHECK(sum == Approx(1.0).margin(1e-6));
      }
    }
    // The first token attends only to itself: its output is its value.
    for (std::size_t e = 0; e < d; ++e) {
      CHECK(r.output.data[e] == Approx(r.trace->v.data[e]).margin(1e-5));
    }
  }
  SECTION("padding: keys past each sentence's length get zero weight") {
    AttentionOptions options;
    options.mask.lengths = {8, 7, 5, 3, 1, 8};
    const attnscope::SelfAttentionResult r = attnscope::self_attention(x, w, options);
    REQUIRE(r.trace.has_value());
    for (std::size_t b = 0; b < B; ++b) {
      for (std::size_t i = 0; i < T; ++i) {
        for (std::size_t j = options.mask.lengths[b]; j < T; ++j) {
          CHECK(r.trace->weights.data[(b * T + i) * T + j] == 0.0f);
        }
      }
    }
    CHECK(r.fully_masked_count == 0);
  }
}

// Seed 003: "The animal didn't cross the street because it was too tired."
TEST_CASE("seed 003: relevance scores of \"it\" are dot products of Q and K", "[seeds][seed003]") {
  // Word, Query (Q), Key (K) — the tutorial's table, in its order:
  // The, animal, didn't, cross, street, it, was, tired.
  const Tensor q({8, 3}, {0.1f, 0.2f, 0.3f, 0.5f, 0.4f, 0.3f, 0.2f, 0.1f, 0.1f, 0.0f, 0.1f, 0.2f,
                          0.4f, 0.3f, 0.2f, 0.6f, 0.5f, 0.4f, 0.1f, 0.1f, 0.0f, 0.7f, 0.6f, 0.5f});
  const Tensor k({8, 3}, {0.2f, 0.1f, 0.0f, 0.6f, 0.5f, 0.4f, 0.1f, 0.2f, 0.1f, 0.2f, 0.1f, 0.3f,
                          0.5f, 0.4f, 0.3f, 0.7f, 0.6f, 0.5f, 0.1f, 0.0f, 0.2f, 0.9f, 0.8f, 0.7f});
  const Tensor v = k;  // the values do not enter the scores
  AttentionOptions options;
  options.scale = Scale::none();  // the tutorial takes the plain dot product
  const attnscope::AttentionResult r = attnscope::attention(q, k, v, options);
  REQUIRE(r.trace.has_value());
  const std::size_t it = 5;
  const float* scores = r.trace->scores.data.data() + it * 8;
  CHECK(scores[0] == Approx(0.17).margin(1e-6));  // "The"
  CHECK(scores[1] == Approx(0.77).margin(1e-6));  // "animal"
  CHECK(scores[7] == Approx(1.22).margin(1e-6));  // "tired"
  // The softmax of these scores (the tutorial's weights are illustrative,
  // not computed) ranks keys exactly as the scores do.
  const float* weights = r.trace->weights.data.data() + it * 8;
  for (std::size_t a = 0; a < 8; ++a) {
    for (std::size_t b = 0; b < 8; ++b) {
      if (scores[a] > scores[b] + 1e-6f) CHECK(weights[a] > weights[b]);
    }
  }
}
