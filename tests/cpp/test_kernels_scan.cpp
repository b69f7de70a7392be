// The scans behind the argument checks, at every position around the SIMD
// width and with the values that must trip them.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/scan.hpp"
#include "test_kernels_support.hpp"

using namespace attnscope::kernels;
using attnscope::testing::kKernelSizes;
using attnscope::testing::random_floats;

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
}  // namespace

TEST_CASE("all_finite finds NaN and ±inf at any position", "[kernels][scan]") {
  std::mt19937 rng(61);
  for (std::size_t n : kKernelSizes) {
    std::vector<float> x = random_floats(rng, n, -1e30f, 1e30f);
    INFO("n = " << n);
    CHECK(all_finite(x.data(), n));
    for (std::size_t i = 0; i < n; ++i) {
      for (float bad : {kNaN, kInf, -kInf}) {
        const float keep = x[i];
        x[i] = bad;
        CHECK_FALSE(all_finite(x.data(), n));
        x[i] = keep;
      }
    }
  }
  const std::vector<float> edge = {std::numeric_limits<float>::max(),
                                   -std::numeric_limits<float>::max(),
                                   std::numeric_limits<float>::denorm_min(), -0.0f, 0.0f};
  CHECK(all_finite(edge.data(), edge.size()));
  CHECK(all_finite(nullptr, 0));
}

TEST_CASE("max_abs matches a scalar loop at any length", "[kernels][scan]") {
  std::mt19937 rng(62);
  for (std::size_t n : kKernelSizes) {
    std::vector<float> x = random_floats(rng, n, -5.0f, 5.0f);
    for (std::size_t i = 0; i < n; ++i) {
      const float keep = x[i];
      x[i] = (i % 2 ? -1.0f : 1.0f) * 1e20f;  // the largest, at each position in turn
      CHECK(max_abs(x.data(), n) == 1e20f);
      x[i] = keep;
    }
    float expected = 0.0f;
    for (float v : x) expected = std::max(expected, std::abs(v));
    CHECK(max_abs(x.data(), n) == expected);
  }
  CHECK(max_abs(nullptr, 0) == 0.0f);
}

TEST_CASE("sum_of_squares is accurate, and +inf when float overflows", "[kernels][scan]") {
  std::mt19937 rng(63);
  for (std::size_t n : kKernelSizes) {
    const std::vector<float> x = random_floats(rng, n, -3.0f, 3.0f);
    double ref = 0.0;
    for (float v : x) ref += double(v) * v;
    INFO("n = " << n);
    CHECK(sum_of_squares(x.data(), n) == Approx(ref).epsilon(1e-6));
  }
  const std::vector<float> huge = {1.0f, 2e19f, 3.0f, 2e19f, 1.0f};
  CHECK(std::isinf(sum_of_squares(huge.data(), huge.size())));
}
