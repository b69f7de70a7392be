// The register tile's height in the products that read B in panels
// (attnscope/matmul_tile.hpp): its setting, and 6-row tiles giving the same
// bits as matmul's 4-row tiles through matmul_packed, matmul_panels and
// matmul_transposed_b, for every count of rows a 6-row tile leaves over.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "attnscope/matmul_tile.hpp"
#include "kernels/matmul_panels.hpp"
#include "kernels/matmul_transposed_b.hpp"
#include "test_kernels_support.hpp"
#include "test_tile_rows.hpp"

using namespace attnscope::kernels;
using attnscope::testing::random_floats;
using attnscope::testing::same_bits;
using attnscope::testing::TileRows;

namespace {

using Arch = xsimd::default_arch;
constexpr std::size_t P = matmul_panel_width<Arch>();

const std::size_t kRowCounts[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 17, 64};

}  // namespace

TEST_CASE("the tile height is 4 or 6, and no other value is taken", "[kernels][matmul]") {
  const std::size_t rows = attnscope::matmul_tile_rows();
  CHECK((rows == 4 || rows == attnscope::kMatmulTallRows));
  {
    TileRows tall(attnscope::kMatmulTallRows);
    CHECK(attnscope::matmul_tile_rows() == attnscope::kMatmulTallRows);
    // A model loaded after a height was set does not measure over it.
    attnscope::measure_matmul_tile_rows_once();
    CHECK(attnscope::matmul_tile_rows() == attnscope::kMatmulTallRows);
    CHECK_THROWS_WITH(attnscope::set_matmul_tile_rows(5),
                      Catch::Contains("must be 4 or 6") && Catch::Contains("got 5"));
    CHECK(attnscope::matmul_tile_rows() == attnscope::kMatmulTallRows);
  }
  CHECK(attnscope::matmul_tile_rows() == rows);
  TileRows measured(0);
  const std::size_t again = attnscope::matmul_tile_rows();
  CHECK((again == 4 || again == attnscope::kMatmulTallRows));
#if !defined(__wasm__)
  CHECK(again == 4);  // measured only in WebAssembly
#endif
}

TEST_CASE("6-row tiles give matmul_packed and matmul_panels the bits of matmul's 4-row tiles",
          "[kernels][matmul]") {
  std::mt19937 rng(61);
  for (std::size_t rows : {std::size_t{4}, attnscope::kMatmulTallRows}) {
    TileRows height(rows);
    for (std::size_t k : {1u, 255u, 256u, 257u, 600u}) {
      for (std::size_t n : {std::size_t{3}, P, 2 * P + 1, std::size_t{64}, std::size_t{203}}) {
        for (std::size_t m : kRowCounts) {
          for (std::size_t lda : {k, std::size_t{768}}) {
            if (lda < k) continue;
            const std::vector<float> a = random_floats(rng, m * lda);
            const std::vector<float> b = random_floats(rng, k * n);
            const std::vector<float> c0 = random_floats(rng, m * n);
            std::vector<float> panels(k * n);
            pack_panels(b.data(), k, n, P, panels.data());
            const PanelMatrix pm{panels.data(), k, n, P};
            std::vector<float> scratch(matmul_packed_scratch(k, n));
            for (bool accumulate : {false, true}) {
              std::vector<float> want = c0, packed = c0, in_panels = c0;
              matmul<Arch>(a.data(), lda, b.data(), n, want.data(), n, m, k, n, accumulate);
              matmul_packed<Arch>(a.data(), lda, b.data(), n, packed.data(), n, m, k, n,
                                  scratch.data(), accumulate);
              matmul_panels<Arch>(a.data(), lda, pm, 0, n, in_panels.data(), n, m, accumulate);
              INFO("rows " << rows << ", m " << m << ", k " << k << ", n " << n << ", lda " << lda
                           << ", accumulate " << accumulate);
              CHECK(same_bits(packed, want));
              CHECK(same_bits(in_panels, want));
            }
          }
        }
      }
    }
  }
}

TEST_CASE("6-row tiles give matmul_transposed_b the bits of matmul on Bᵀ", "[kernels][matmul]") {
  std::mt19937 rng(62);
  TileRows tall(attnscope::kMatmulTallRows);
  for (std::size_t m : kRowCounts) {
    for (std::size_t k : {1u, 300u, 768u}) {
      // Whole panels, so that matmul has no scalar tail (its sums there are
      // added in another order).
      const std::size_t n = 4 * P;
      const std::vector<float> a = random_floats(rng, m * k);
      const std::vector<float> b = random_floats(rng, n * k);  // n × k: Bᵀ is k × n
      std::vector<float> bt(k * n);
      for (std::size_t j = 0; j < n; ++j) {
        for (std::size_t p = 0; p < k; ++p) bt[p * n + j] = b[j * k + p];
      }
      std::vector<float> got(m * n, NAN), want(m * n, NAN);
      std::vector<float> scratch(matmul_transposed_b_scratch(m, k));
      matmul_transposed_b<Arch>(a.data(), k, b.data(), k, got.data(), n, m, k, n, scratch.data());
      matmul<Arch>(a.data(), k, bt.data(), n, want.data(), n, m, k, n);
      INFO("m " << m << ", k " << k);
      CHECK(same_bits(got, want));
    }
  }
}
