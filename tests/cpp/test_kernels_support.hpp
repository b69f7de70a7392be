// Helpers shared by the kernel, attention and block tests: fixed-seed random
// data, constant tensors, the sizes every kernel is checked at, and relative
// error measures. (random_tensor lives beside the reference, in
// test_attention_reference.hpp.)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "attnscope/tensor.hpp"

namespace attnscope::testing {

/// Below, at, between and above the vector widths (4 for sse2, 8/16 with
/// -march=native), plus odd sizes up to well past a few batches.
inline const std::vector<std::size_t> kKernelSizes = {1,  2,  3,  4,  5,  6,  7,   8,   9,
                                                      12, 13, 16, 17, 24, 31, 32,  33,  47,
                                                      48, 63, 64, 65, 67, 96, 100, 129, 257};

inline std::vector<float> random_floats(std::mt19937& rng, std::size_t n, float lo = -1.0f,
                                        float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

/// Whether a and b hold the same floats, bit for bit.
inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  // An empty vector's data() may be null, which memcmp must not be given.
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

/// A tensor of `shape` with every value `value`.
inline Tensor filled(Shape shape, float value = 0.5f) {
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;
  return Tensor(std::move(shape), std::vector<float>(n, value));
}

/// max over i of |y − ref| / max(|ref|, floor): a relative error that
/// becomes absolute (scaled by floor) where the reference is near zero.
template <class Y, class R>
double max_scaled_error(const Y& y, const R& ref, double floor) {
  double worst = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double r = static_cast<double>(ref[i]);
    const double err = std::abs(static_cast<double>(y[i]) - r) / std::max(std::abs(r), floor);
    worst = std::max(worst, std::isnan(err) ? INFINITY : err);
  }
  return worst;
}

/// A product's error: the worst |c − ref| / (Σ_p |term(i, j, p)| + |before|
/// when accumulating) over its m × n elements, row stride ldc (cancellation
/// makes a plain relative error meaningless); and whether the padding
/// columns n..ldc of c kept their former values.
struct ProductError {
  double worst = 0.0;
  bool padding_kept = true;
};
template <class Term>
ProductError product_error(const std::vector<float>& c, const std::vector<float>& before,
                           const std::vector<double>& ref, std::size_t m, std::size_t k,
                           std::size_t n, std::size_t ldc, bool accumulate, Term term) {
  ProductError e;
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < ldc; ++j) {
      const std::size_t at = i * ldc + j;
      if (j >= n) {
        e.padding_kept = e.padding_kept && c[at] == before[at];
        continue;
      }
      double magnitude = accumulate ? std::abs(double(before[at])) : 0.0;
      for (std::size_t p = 0; p < k; ++p) magnitude += std::abs(term(i, j, p));
      e.worst = std::max(e.worst, std::abs(c[at] - ref[at]) / std::max(magnitude, 1e-30));
    }
  }
  return e;
}

}  // namespace attnscope::testing
