// matmul_transposed_b (c = a·bᵀ, b stored row by row) against its
// double-precision reference, and bit for bit against matmul on Bᵀ written
// out, whatever split of the columns a caller makes.
//
// GCC 12 at -O3 reports "iteration 4611686018427387903 invokes undefined
// behavior" for the kernels' leftover loops once inlined here (a trip count
// it derives for a k below one batch, which the loops' own bounds exclude;
// the same calls run clean under the sanitizers in scripts/test.sh). Set
// before the includes: GCC places the warning in the kernels' headers.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Waggressive-loop-optimizations"
#endif

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/matmul.hpp"
#include "kernels/matmul_transposed_b.hpp"
#include "test_kernels_support.hpp"

using namespace attnscope::kernels;
using attnscope::testing::product_error;
using attnscope::testing::ProductError;
using attnscope::testing::random_floats;

namespace {

using Arch = xsimd::default_arch;

// c = a·bᵀ with padded strides; checks the padding of c is untouched and
// |c − ref| ≤ 1e-6 · Σ_p |a_ip·b_jp| per element.
void check_transposed(std::size_t m, std::size_t k, std::size_t n, std::size_t pad,
                      std::mt19937& rng) {
  const std::size_t lda = k + pad, ldb = k + 2 * pad, ldc = n + pad;
  const std::vector<float> a = random_floats(rng, m * lda), b = random_floats(rng, n * ldb);
  std::vector<float> c = random_floats(rng, m * ldc);
  const std::vector<float> before = c;
  std::vector<float> scratch(matmul_transposed_b_scratch(m, k), NAN);
  matmul_transposed_b<Arch>(a.data(), lda, b.data(), ldb, c.data(), ldc, m, k, n, scratch.data());
  std::vector<double> ref(m * ldc);
  matmul_transposed_b_reference(a.data(), lda, b.data(), ldb, ref.data(), ldc, m, k, n);
  const ProductError e = product_error(c, before, ref, m, k, n, ldc, false,
                                       [&](std::size_t i, std::size_t j, std::size_t p) {
                                         return double(a[i * lda + p]) * b[j * ldb + p];
                                       });
  REQUIRE(e.padding_kept);
  INFO("m = " << m << ", k = " << k << ", n = " << n << ", pad = " << pad);
  CHECK(e.worst <= 1e-6);
}

// Whether matmul_transposed_b gives matmul's bits on Bᵀ written out, whole and
// split into calls over column ranges.
void check_bit_for_bit(std::size_t m, std::size_t k, std::size_t n, std::mt19937& rng) {
  const std::vector<float> a = random_floats(rng, m * k), b = random_floats(rng, n * k);
  std::vector<float> whole(m * n), split(m * n);
  std::vector<float> scratch(matmul_transposed_b_scratch(m, k), NAN);
  matmul_transposed_b<Arch>(a.data(), k, b.data(), k, whole.data(), n, m, k, n, scratch.data());
  for (std::size_t j0 = 0; j0 < n; j0 += 64) {
    matmul_transposed_b<Arch>(a.data(), k, b.data() + j0 * k, k, split.data() + j0, n, m, k,
                              std::min<std::size_t>(64, n - j0), scratch.data());
  }
  CHECK(whole == split);

  constexpr std::size_t W = xsimd::batch<float, Arch>::size;
  const std::size_t full = n - n % W;
  std::vector<float> b_t(k * full), plain(m * full);
  for (std::size_t j = 0; j < full; ++j) {
    for (std::size_t p = 0; p < k; ++p) b_t[p * full + j] = b[j * k + p];
  }
  matmul<Arch>(a.data(), k, b_t.data(), full, plain.data(), full, m, k, full);
  for (std::size_t i = 0; i < m; ++i) {
    INFO("row " << i);
    CHECK(std::equal(plain.begin() + i * full, plain.begin() + (i + 1) * full,
                     whole.begin() + i * n));
  }
}

}  // namespace

TEST_CASE("matmul_transposed_b matches its reference around the panel width", "[kernels][matmul]") {
  // Panels are 8 columns wide in wasm and SSE2, 16 with AVX2, 32 with AVX-512;
  // the last partial panel is padded with zeros. Depths cross the shared
  // dimension's blocks (256).
  std::mt19937 rng(21);
  for (std::size_t n : {1u, 3u, 4u, 5u, 7u, 8u, 9u, 15u, 16u, 17u, 31u, 32u, 33u, 64u, 67u}) {
    for (std::size_t m : {1u, 2u, 3u, 4u, 5u, 9u}) check_transposed(m, 11, n, 0, rng);
    for (std::size_t pad : {1u, 5u}) check_transposed(6, 9, n, pad, rng);
  }
  for (std::size_t k : {1u, 2u, 3u, 4u, 5u, 64u, 255u, 256u, 257u, 600u}) {
    check_transposed(7, k, 41, 0, rng);
  }
  // A's row stride of GPT-2 small's width, which the product reads at
  // compile time (with_row_stride).
  check_transposed(9, 768, 41, 0, rng);
}

TEST_CASE("matmul_transposed_b with no shared dimension gives zeros", "[kernels][matmul]") {
  std::vector<float> c(3 * 10, 7.0f), scratch(matmul_transposed_b_scratch(3, 0), NAN);
  const float none = 0.0f;
  matmul_transposed_b<Arch>(&none, 0, &none, 0, c.data(), 10, 3, 0, 10, scratch.data());
  CHECK(std::all_of(c.begin(), c.end(), [](float x) { return x == 0.0f; }));
}

TEST_CASE("matmul_transposed_b equals matmul on Bᵀ bit for bit, however its columns are split",
          "[kernels][matmul]") {
  // Whole batches of columns in matmul (no scalar tail): the same terms in
  // the same order through multiply_add. Split into calls over column ranges
  // starting at multiples of 64, as the LM head splits the vocabulary over
  // threads, every element stays the same, the last partial panel included.
  std::mt19937 rng(22);
  check_bit_for_bit(13, 300, 197, rng);
  check_bit_for_bit(9, 768, 75, rng);
}
