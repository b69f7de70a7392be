// The README's worked example through the installed library: X = I,
// W_Q = W_K = I, W_V = [[1, 2], [3, 4]], scale 1/sqrt(2), no mask. Each row's
// weights are softmax([1, 0] / sqrt(2)) or its mirror, computed here in double
// precision; the program fails unless the library agrees to float rounding.
#include <attnscope/attnscope.hpp>

#include <cmath>
#include <cstdio>

int main() {
  using namespace attnscope;
  Tensor x({2, 2}, {1, 0, 0, 1});
  SelfAttentionWeights w;
  w.wq = Tensor({2, 2}, {1, 0, 0, 1});
  w.wk = Tensor({2, 2}, {1, 0, 0, 1});
  w.wv = Tensor({2, 2}, {1, 2, 3, 4});
  w.heads = 1;
  const SelfAttentionResult r = self_attention(x, w, AttentionOptions{});

  const double near = 1.0 / (1.0 + std::exp(-1.0 / std::sqrt(2.0)));  // weight on itself
  const double far = 1.0 - near;
  const double v[2][2] = {{1, 2}, {3, 4}};
  const double weights[2][2] = {{near, far}, {far, near}};
  int failures = 0;
  for (int i = 0; i < 2; ++i) {
    for (int c = 0; c < 2; ++c) {
      const double expected = weights[i][0] * v[0][c] + weights[i][1] * v[1][c];
      const double got = r.output.data[i * 2 + c];
      std::printf("output[%d][%d] = %.6f (expected %.6f)\n", i, c, got, expected);
      if (std::fabs(got - expected) > 1e-5) ++failures;
    }
  }
  std::printf("attnscope %s, %s: %s\n", version(), simd_arch(), failures ? "FAILED" : "ok");
  return failures == 0 ? 0 : 1;
}
