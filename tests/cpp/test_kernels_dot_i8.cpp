// dot4_i8 and dot_i8: exact integer sums, against 64-bit sums of the same
// products, for random values and for the extremes the greedy head uses
// (±127 in the rows, the largest magnitude its n allows in the vector), with
// four different rows side by side.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/dot_i8.hpp"

using namespace attnscope::kernels;

namespace {

std::int64_t exact_dot(const std::vector<std::int16_t>& x, const std::int8_t* row, std::size_t n) {
  std::int64_t sum = 0;
  for (std::size_t k = 0; k < n; ++k) sum += std::int64_t{x[k]} * row[k];
  return sum;
}

}  // namespace

TEST_CASE("dot4_i8 sums int16 · int8 products exactly", "[kernels][dot_i8]") {
  std::mt19937 rng(17);
  for (const std::size_t n : {16u, 32u, 48u, 64u, 256u, 768u, 1024u}) {
    // The greedy head's limit: every partial sum within n · 127 · levels < 2³¹.
    const int levels = static_cast<int>(std::min<std::int64_t>(32767, 2147483647 / (127 * n)));
    for (const bool extremes : {false, true}) {
      INFO("n " << n << (extremes ? ", extremes" : ", random"));
      std::uniform_int_distribution<int> row_value(-127, 127), x_value(-levels, levels);
      std::vector<std::int16_t> x(n);
      std::vector<std::int8_t> rows(4 * n);
      for (std::size_t k = 0; k < n; ++k) {
        x[k] = static_cast<std::int16_t>(extremes ? (k % 3 == 0 ? -levels : levels) : x_value(rng));
      }
      for (std::size_t i = 0; i < rows.size(); ++i) {
        // With extremes, row 0 takes every product at its largest, with x's signs.
        const std::size_t j = i / n, k = i % n;
        const int extreme = (j == 0) == (k % 3 == 0) ? -127 : 127;
        rows[i] = static_cast<std::int8_t>(extremes ? extreme : row_value(rng));
      }
      const std::int8_t* const four[4] = {rows.data(), rows.data() + n, rows.data() + 2 * n,
                                          rows.data() + 3 * n};
      std::int32_t out[4];
      dot4_i8(x.data(), four, n, out);
      for (std::size_t j = 0; j < 4; ++j) {
        INFO("row " << j);
        CHECK(out[j] == exact_dot(x, four[j], n));
        CHECK(dot_i8(x.data(), four[j], n) == exact_dot(x, four[j], n));
      }
      if (extremes) CHECK(exact_dot(x, four[0], n) == std::int64_t{127} * levels * std::int64_t(n));
    }
  }
}
