// vec_exp, vec_exp2 and the softmax steps against their double-precision
// references.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/dot.hpp"
#include "kernels/softmax_rows.hpp"
#include "kernels/vec_exp.hpp"
#include "test_kernels_support.hpp"

using namespace attnscope::kernels;
using attnscope::testing::kKernelSizes;
using attnscope::testing::max_scaled_error;
using attnscope::testing::random_floats;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<double> exp_reference(const std::vector<float>& x) {
  std::vector<double> ref(x.size());
  vec_exp_reference(x.data(), ref.data(), x.size());
  return ref;
}

std::vector<double> softmax_reference(const std::vector<float>& x, std::size_t rows, std::size_t n,
                                      std::vector<unsigned char>* has_keys = nullptr) {
  std::vector<double> ref(x.size());
  softmax_rows_reference(x.data(), ref.data(), rows, n, has_keys ? has_keys->data() : nullptr);
  return ref;
}

std::vector<float> softmax(const std::vector<float>& x, std::size_t rows, std::size_t n,
                           std::vector<unsigned char>* has_keys = nullptr) {
  std::vector<float> y(x.size(), -1.0f);
  softmax_rows(x.data(), y.data(), rows, n, has_keys ? has_keys->data() : nullptr);
  return y;
}

}  // namespace

TEST_CASE("vec_exp matches exp over the float range", "[kernels][exp]") {
  std::mt19937 rng(1);
  for (std::size_t n : kKernelSizes) {
    INFO("n = " << n);
    for (auto range : {std::pair<float, float>{-1.0f, 1.0f}, {-87.0f, 0.0f}, {0.0f, 88.0f}}) {
      const std::vector<float> x = random_floats(rng, n, range.first, range.second);
      std::vector<float> y(n);
      vec_exp(x.data(), y.data(), n);
      CHECK(max_scaled_error(y, exp_reference(x), 0.0) <= 3e-7);
    }
  }
}

TEST_CASE("vec_exp is exact at 0 and the edges of its range", "[kernels][exp]") {
  const std::vector<float> x = {0.0f,  -kInf, -1000.0f, -104.0f, -87.5f, -87.0f,
                                88.0f, 88.5f, kInf,     1.0f,    -1.0f};
  std::vector<float> y(x.size());
  vec_exp(x.data(), y.data(), x.size());
  CHECK(y[0] == 1.0f);
  CHECK(y[1] == 0.0f);
  CHECK(y[2] == 0.0f);
  CHECK(y[3] == 0.0f);
  CHECK(y[4] == 0.0f);  // below ln(FLT_MIN): flushed, std::exp gives a denormal
  CHECK(y[5] == Approx(std::exp(-87.0)).epsilon(3e-7));
  CHECK(y[6] == Approx(std::exp(88.0)).epsilon(3e-7));
  CHECK(y[7] == kInf);  // documented saturation above 127.5·ln 2
  CHECK(y[8] == kInf);
  CHECK(y[9] == Approx(std::exp(1.0)).epsilon(3e-7));
  CHECK(y[10] == Approx(std::exp(-1.0)).epsilon(3e-7));
  for (float v : y) CHECK_FALSE(std::isnan(v));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  float in[5] = {nan, 0.0f, nan, 1.0f, nan}, out[5];
  vec_exp(in, out, 5);
  CHECK(std::isnan(out[0]));
  CHECK(out[1] == 1.0f);
  CHECK(std::isnan(out[4]));
}

TEST_CASE("vec_exp works in place", "[kernels][exp]") {
  std::mt19937 rng(2);
  std::vector<float> x = random_floats(rng, 37, -5.0f, 5.0f);
  const std::vector<double> ref = exp_reference(x);
  vec_exp(x.data(), x.data(), x.size());
  CHECK(max_scaled_error(x, ref, 0.0) <= 3e-7);
}

TEST_CASE("vec_exp2 matches exp2 over the softmax range", "[kernels][exp]") {
  std::mt19937 rng(4);
  for (std::size_t n : kKernelSizes) {
    INFO("n = " << n);
    for (auto range : {std::pair<float, float>{-1.0f, 1.0f}, {-126.0f, 0.0f}, {0.0f, 127.0f}}) {
      const std::vector<float> x = random_floats(rng, n, range.first, range.second);
      std::vector<float> y(n);
      std::vector<double> ref(n);
      vec_exp2(x.data(), y.data(), n);
      vec_exp2_reference(x.data(), ref.data(), n);
      CHECK(max_scaled_error(y, ref, 0.0) <= 2e-7);
    }
  }
}

TEST_CASE("vec_exp2 is exact at integers and flushes below -127", "[kernels][exp]") {
  const std::vector<float> x = {0.0f,   1.0f,    -1.0f,   -126.0f, 127.0f, -kInf,
                                -1e30f, -127.0f, -126.7f, -126.2f, 0.5f,   -0.5f};
  std::vector<float> y(x.size());
  vec_exp2(x.data(), y.data(), x.size());
  CHECK(y[0] == 1.0f);
  CHECK(y[1] == 2.0f);
  CHECK(y[2] == 0.5f);
  CHECK(y[3] == std::ldexp(1.0f, -126));
  CHECK(y[4] == std::ldexp(1.0f, 127));
  CHECK(y[5] == 0.0f);
  CHECK(y[6] == 0.0f);
  CHECK(y[7] == 0.0f);
  CHECK(y[8] == 0.0f);  // rounds to 2^-127: flushed
  CHECK(y[9] > 0.0f);   // a subnormal, close to 2^-126.2
  CHECK(y[9] == Approx(std::exp2(-126.2)).epsilon(1e-5));
  CHECK(y[10] == Approx(std::sqrt(2.0)).epsilon(2e-7));
  CHECK(y[11] == Approx(std::sqrt(0.5)).epsilon(2e-7));
}

TEST_CASE("vec_exp2_in_range matches exp2 over its range, ties included", "[kernels][exp]") {
  using batch = xsimd::batch<float>;
  constexpr std::size_t W = batch::size;
  std::mt19937 rng(6);
  std::vector<float> x = random_floats(rng, 64 * W, -126.0f, 127.0f);
  // Integers, halves (ties of the rounding to an integer, whose exponent and
  // remainder must agree) and the ends of the range.
  const std::vector<float> exact = {-126.0f, -125.5f, -0.5f, 0.0f,   0.5f,
                                    1.5f,    2.5f,    -3.5f, 126.5f, 127.0f};
  std::copy(exact.begin(), exact.end(), x.begin());
  std::vector<float> y(x.size());
  std::vector<double> ref(x.size());
  for (std::size_t i = 0; i < x.size(); i += W) {
    vec_exp2_in_range(batch::load_unaligned(x.data() + i)).store_unaligned(y.data() + i);
  }
  vec_exp2_reference(x.data(), ref.data(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    INFO("x = " << x[i]);
    CHECK(std::abs(y[i] - ref[i]) <= 2e-7 * ref[i]);
  }
}

TEST_CASE("exp_sum_row_in_range gives exp_sum_max_row's weights and sum bit for bit",
          "[kernels][softmax]") {
  // For a power-of-two scale, 2^((x − max/scale)·scale·log2 e) is
  // exactly the weight exp_sum_max_row computes from x·scale − max.
  std::mt19937 rng(7);
  // Past 128, exp_sum_row_in_range works in chunks of 128 scores. n is a
  // multiple of the batch width W (4, 8 or 16 floats), as the kernel requires.
  constexpr std::size_t W = xsimd::batch<float>::size;
  for (std::size_t batches : {1u, 2u, 3u, 4u, 5u, 16u, 32u, 33u, 65u, 98u}) {
    const std::size_t n = batches * W;
    for (float scale : {1.0f, 0.125f, 0.5f, 4.0f, 0x1p-20f, 0x1p20f}) {
      // Scaled scores in [-30, 10], shifted against one of them.
      std::vector<float> x = random_floats(rng, n, -30.0f, 10.0f);
      for (float& v : x) v /= scale;
      const float shift = x[n / 3] * scale;
      std::vector<float> y(n, -1.0f), y_in_range(n, -2.0f);
      float unused = 0.0f;
      const float sum = exp_sum_max_row(x.data(), y.data(), n, scale, shift, &unused);
      const float sum_in_range =
          exp_sum_row_in_range(x.data(), y_in_range.data(), n, shift / scale, scale * kLog2e);
      INFO("n = " << n << ", scale = " << scale);
      CHECK(y_in_range == y);
      CHECK(sum_in_range == sum);
    }
  }
}

TEST_CASE("exp_sum_max_row scales, exponentiates, sums and finds the max in one pass",
          "[kernels][softmax]") {
  std::mt19937 rng(5);
  constexpr std::size_t W = xsimd::batch<float>::size;  // n is a multiple of it
  for (std::size_t batches : {1u, 2u, 3u, 4u, 5u, 16u, 32u}) {
    const std::size_t n = batches * W;
    for (float scale : {1.0f, 0.125f, -2.0f}) {
      // Scaled scores z in [-30, 10]: weights e^-36 … e^4 against the shift.
      std::vector<float> x = random_floats(rng, n, -30.0f, 10.0f);
      for (float& v : x) v /= scale;
      if (n > 4 && scale > 0) x[n / 2] = -kInf;  // a masked key
      const float shift = 6.0f;
      std::vector<float> y(n, -1.0f);
      float x_max = 0.0f;
      const float sum = exp_sum_max_row(x.data(), y.data(), n, scale, shift, &x_max);
      double ref_sum = 0.0, ref_max = -kInf;
      std::vector<double> ref(n);
      for (std::size_t i = 0; i < n; ++i) {
        // x·scale − shift rounds in float, as in the kernel; compare the exp only.
        const float z = x[i] * scale;
        ref[i] = std::exp(double(z - shift));
        ref_sum += ref[i];
        ref_max = std::max(ref_max, double(z));
      }
      INFO("n = " << n << ", scale = " << scale);
      // Relative error |t|·6e-8 from rounding t·log2 e (|t| <= 36 here),
      // measured against the largest weight.
      CHECK(max_scaled_error(y, ref, 1.0) <= 3e-7);
      CHECK(sum == Approx(ref_sum).epsilon(1e-6));
      CHECK(x_max == ref_max);
      if (n > 4 && scale > 0) CHECK(y[n / 2] == 0.0f);
    }
  }
  // An all-masked row: zeros, sum 0, max -inf.
  std::vector<float> masked(2 * W, -kInf), y(2 * W, 1.0f);
  float x_max = 0.0f;
  CHECK(exp_sum_max_row(masked.data(), y.data(), 2 * W, 1.0f, 0.0f, &x_max) == 0.0f);
  CHECK(x_max == -kInf);
  for (float v : y) CHECK(v == 0.0f);
}

TEST_CASE("dot matches its reference", "[kernels][dot]") {
  std::mt19937 rng(3);
  for (std::size_t n : kKernelSizes) {
    INFO("n = " << n);
    const std::vector<float> a = random_floats(rng, n), b = random_floats(rng, n);
    double magnitude = 0.0;
    for (std::size_t i = 0; i < n; ++i) magnitude += std::abs(double(a[i]) * b[i]);
    const double ref = dot_reference(a.data(), b.data(), n);
    // Cancellation makes a plain relative error meaningless; bound it by the
    // sum of magnitudes instead.
    CHECK(std::abs(dot(a.data(), b.data(), n) - ref) <= 1e-6 * magnitude);
  }
}

TEST_CASE("dot4 gives dot's bits for each of its four vectors", "[kernels][dot]") {
  std::mt19937 rng(4);
  for (std::size_t n : kKernelSizes) {
    INFO("n = " << n);
    // One buffer, the four vectors at odd offsets (unaligned), one of them
    // with large values.
    const std::vector<float> a = random_floats(rng, n + 1);
    std::vector<float> b = random_floats(rng, 4 * n + 7);
    for (std::size_t i = 2 * n + 5; i < 3 * n + 5; ++i) b[i] *= 1e30f;
    const float* const rows[4] = {b.data() + 1, b.data() + n + 3, b.data() + 2 * n + 5,
                                  b.data() + 3 * n + 7 - n % 2};
    float out[4];
    dot4(a.data() + 1, rows, n, out);
    for (std::size_t j = 0; j < 4; ++j) {
      INFO("vector " << j);
      const float expected = dot(a.data() + 1, rows[j], n);
      CHECK(std::memcmp(&out[j], &expected, sizeof(float)) == 0);
    }
  }
}

TEST_CASE("row_max finds the maximum at every position", "[kernels][softmax]") {
  for (std::size_t n : kKernelSizes) {
    for (std::size_t at = 0; at < n; at += (n > 16 ? 7 : 1)) {
      std::vector<float> x(n, -5.0f);
      x[at] = 3.0f;
      INFO("n = " << n << ", at = " << at);
      CHECK(row_max(x.data(), n) == 3.0f);
    }
    std::vector<float> masked(n, -kInf);
    CHECK(row_max(masked.data(), n) == -kInf);
  }
}

TEST_CASE("softmax_rows matches its reference on random logits", "[kernels][softmax]") {
  std::mt19937 rng(4);
  for (std::size_t n : kKernelSizes) {
    INFO("n = " << n);
    const std::size_t rows = 3;
    const std::vector<float> x = random_floats(rng, rows * n, -8.0f, 8.0f);
    CHECK(max_scaled_error(softmax(x, rows, n), softmax_reference(x, rows, n), 1e-30) <= 2e-6);
  }
}

TEST_CASE("softmax_rows is exact for logits that overflow a naive exp", "[kernels][softmax]") {
  std::mt19937 rng(5);
  for (std::size_t n : kKernelSizes) {
    INFO("n = " << n);
    const std::vector<float> high = random_floats(rng, n, 90.0f, 100.0f);
    const std::vector<float> y = softmax(high, 1, n);
    CHECK(max_scaled_error(y, softmax_reference(high, 1, n), 1e-30) <= 2e-6);

    std::vector<float> extreme(n);
    for (std::size_t i = 0; i < n; ++i) extreme[i] = (i % 3 == 1) ? 1e4f : -1e4f;
    const std::vector<float> ye = softmax(extreme, 1, n);
    CHECK(max_scaled_error(ye, softmax_reference(extreme, 1, n), 1e-30) <= 2e-6);
    for (std::size_t i = 0; i < n; ++i) {
      // exp(-2e4) underflows: exactly zero once a 1e4 logit is present.
      if (n > 1 && extreme[i] < 0) CHECK(ye[i] == 0.0f);
    }
    const std::vector<float> negative = random_floats(rng, n, -1e4f, -0.99e4f);
    CHECK(max_scaled_error(softmax(negative, 1, n), softmax_reference(negative, 1, n), 1e-30) <=
          2e-6);
  }
}

TEST_CASE("softmax_rows of tiny logits is uniform", "[kernels][softmax]") {
  std::mt19937 rng(6);
  for (std::size_t n : kKernelSizes) {
    INFO("n = " << n);
    const std::vector<float> x = random_floats(rng, n, -1e-30f, 1e-30f);
    const std::vector<float> y = softmax(x, 1, n);
    for (float w : y) CHECK(w == Approx(1.0 / n).epsilon(2e-6));
  }
}

TEST_CASE("softmax_rows gives exact zeros for -inf and flags fully masked rows",
          "[kernels][softmax]") {
  std::mt19937 rng(7);
  for (std::size_t n : kKernelSizes) {
    INFO("n = " << n);
    const std::size_t rows = 3;
    std::vector<float> x = random_floats(rng, rows * n, -3.0f, 3.0f);
    for (std::size_t i = 0; i < n; ++i) {
      if (i % 2 == 1) x[i] = -kInf;  // row 0: every other key masked
      x[2 * n + i] = -kInf;          // row 2: all keys masked
    }
    std::vector<unsigned char> has_keys(rows), ref_has_keys(rows);
    const std::vector<float> y = softmax(x, rows, n, &has_keys);
    const std::vector<double> ref = softmax_reference(x, rows, n, &ref_has_keys);
    CHECK(max_scaled_error(y, ref, 1e-30) <= 2e-6);
    CHECK(has_keys == std::vector<unsigned char>{1, 1, 0});
    CHECK(ref_has_keys == has_keys);
    for (std::size_t i = 0; i < n; ++i) {
      if (i % 2 == 1) CHECK(y[i] == 0.0f);
      CHECK(y[2 * n + i] == 0.0f);
      CHECK_FALSE(std::isnan(y[i]));
    }
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) sum += y[n + i];
    CHECK(sum == Approx(1.0).epsilon(2e-6));
  }
}

TEST_CASE("softmax_rows works in place", "[kernels][softmax]") {
  std::mt19937 rng(8);
  std::vector<float> x = random_floats(rng, 2 * 29, -4.0f, 4.0f);
  const std::vector<double> ref = softmax_reference(x, 2, 29);
  softmax_rows(x.data(), x.data(), 2, 29, nullptr);
  CHECK(max_scaled_error(x, ref, 1e-30) <= 2e-6);
}
