// Weights stored in panels (panel_matrix.hpp): the layout round trip, and the
// products that read it in place against the same products on the row-major
// matrix (bit for bit) and a double-precision reference.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "kernels/matmul_panels.hpp"
#include "test_kernels_support.hpp"

using namespace attnscope::kernels;
using attnscope::testing::random_floats;
using attnscope::testing::same_bits;

namespace {

using Arch = xsimd::default_arch;
constexpr std::size_t P = matmul_panel_width<Arch>();

std::vector<float> in_panels(const std::vector<float>& b, std::size_t k, std::size_t n,
                             std::size_t width) {
  std::vector<float> panels(k * n, NAN);
  pack_panels(b.data(), k, n, width, panels.data());
  return panels;
}

}  // namespace

TEST_CASE("pack_panels stores each element where PanelMatrix says, and unpack_panels undoes it",
          "[kernels][matmul]") {
  std::mt19937 rng(41);
  for (std::size_t width : {8u, 16u, 32u}) {
    for (std::size_t n : {1u, 7u, 8u, 9u, 31u, 32u, 33u, 64u, 100u}) {
      for (std::size_t k : {1u, 3u, 17u}) {
        const std::vector<float> b = random_floats(rng, k * n);
        const std::vector<float> panels = in_panels(b, k, n, width);
        const PanelMatrix pm{panels.data(), k, n, width};
        INFO("width " << width << ", k " << k << ", n " << n);
        bool placed = true;
        for (std::size_t p = 0; p < k; ++p) {
          for (std::size_t j = 0; j < n; ++j) {
            const float got =
                j < panel_columns(pm)
                    ? panel_at(pm, j - j % width)[p * width + j % width]
                    : rest_of(pm)[p * (n - panel_columns(pm)) + (j - panel_columns(pm))];
            placed = placed && got == b[p * n + j];
          }
        }
        CHECK(placed);
        std::vector<float> back(k * n, NAN);
        unpack_panels(panels.data(), k, n, width, back.data());
        CHECK(same_bits(back, b));
      }
    }
  }
}

TEST_CASE("matmul_panels equals matmul on the row-major matrix bit for bit, and its reference",
          "[kernels][matmul]") {
  // Row groups of 4, 2 and 1; depths around kMatmulDepthBlock; columns in
  // whole panels, with a tail narrower than a panel and than a batch; column
  // ranges starting at 0, at one panel and at a pass width; A with a
  // transformer width's row stride (read at compile time) and another.
  std::mt19937 rng(42);
  for (std::size_t k : {0u, 1u, 5u, 255u, 256u, 257u, 600u}) {
    for (std::size_t n : {std::size_t{3}, P, P + 3, 2 * P + 1, std::size_t{64}, std::size_t{203}}) {
      for (std::size_t m : {1u, 2u, 3u, 5u, 9u, 17u}) {
        for (std::size_t lda : {k, std::size_t{768}}) {
          if (lda < k) continue;
          const std::vector<float> a = random_floats(rng, m * std::max<std::size_t>(lda, 1));
          const std::vector<float> b = random_floats(rng, k * n);
          const std::vector<float> panels = in_panels(b, k, n, P);
          const PanelMatrix pm{panels.data(), k, n, P};
          for (std::size_t j0 : {std::size_t{0}, P, std::size_t{64}}) {
            if (j0 >= n) continue;
            for (bool accumulate : {false, true}) {
              const std::vector<float> c0 = random_floats(rng, m * n);
              std::vector<float> got = c0, want = c0;
              matmul_panels<Arch>(a.data(), lda, pm, j0, n, got.data(), n, m, accumulate);
              matmul<Arch>(a.data(), lda, b.data() + j0, n, want.data() + j0, n, m, k, n - j0,
                           accumulate);
              INFO("m " << m << ", k " << k << ", n " << n << ", lda " << lda << ", j0 " << j0
                        << ", accumulate " << accumulate);
              CHECK(same_bits(got, want));
              if (j0 == 0 && k > 0 && m == 5) {
                std::vector<double> ref(c0.begin(), c0.end());
                matmul_reference(a.data(), lda, b.data(), n, ref.data(), n, m, k, n, accumulate);
                double worst = 0;
                for (std::size_t i = 0; i < ref.size(); ++i) {
                  worst = std::max(worst, std::abs(got[i] - ref[i]) / (1.0 + std::abs(ref[i])));
                }
                CHECK(worst < 1e-5 * std::sqrt(double(k)) + 1e-6);
              }
            }
          }
        }
      }
    }
  }
}

TEST_CASE("vector_matrix_panels equals vector_matrix_strided bit for bit, rows and columns in part",
          "[kernels][matmul]") {
  // Every panel width a product may be stored with (the CPU's register tile
  // can be wider than this build's batches), groups of panels and the ones
  // left over, a column tail, and a run of rows from the middle (one head's
  // part of c_proj, as the value norms read it).
  std::mt19937 rng(43);
  for (std::size_t width : {std::size_t{8}, std::size_t{16}, std::size_t{32}}) {
    if (width % xsimd::batch<float, Arch>::size != 0) continue;
    for (std::size_t n :
         {std::size_t{5}, width, 3 * width + 2, std::size_t{203}, std::size_t{768}}) {
      const std::size_t k = 70;
      const std::vector<float> b = random_floats(rng, k * n);
      const std::vector<float> panels = in_panels(b, k, n, width);
      const PanelMatrix pm{panels.data(), k, n, width};
      for (const auto [row0, rows] :
           {std::pair<std::size_t, std::size_t>{0, k}, {13, 40}, {69, 1}}) {
        for (std::size_t j0 : {std::size_t{0}, width, std::size_t{64}}) {
          if (j0 >= n) continue;
          const std::vector<float> x = random_floats(rng, rows);
          const std::vector<float> y0 = random_floats(rng, n);
          std::vector<float> got = y0, want = y0;
          vector_matrix_panels<Arch>(x.data(), pm, row0, rows, j0, n, got.data());
          vector_matrix_strided<Arch>(x.data(), b.data() + row0 * n + j0, rows, n - j0, n,
                                      want.data() + j0);
          INFO("width " << width << ", n " << n << ", rows " << row0 << " + " << rows << ", j0 "
                        << j0);
          CHECK(same_bits(got, want));
          double worst = 0;
          for (std::size_t j = j0; j < n; ++j) {
            double ref = y0[j];
            for (std::size_t p = 0; p < rows; ++p) ref += double(x[p]) * b[(row0 + p) * n + j];
            worst = std::max(worst, std::abs(got[j] - ref) / (1.0 + std::abs(ref)));
          }
          CHECK(worst < 1e-5);
        }
      }
    }
  }
}

TEST_CASE("matmul_panels at a GPT-2 block's sizes equals matmul bit for bit", "[kernels][matmul]") {
  std::mt19937 rng(44);
  for (const auto [k, n] : {std::pair<std::size_t, std::size_t>{768, 2304}, {3072, 768}}) {
    const std::size_t m = 64;
    const std::vector<float> a = random_floats(rng, m * k), b = random_floats(rng, k * n);
    const std::vector<float> panels = in_panels(b, k, n, P);
    const PanelMatrix pm{panels.data(), k, n, P};
    const std::vector<float> c0 = random_floats(rng, m * n);
    std::vector<float> got = c0, want = c0;
    matmul_panels<Arch>(a.data(), k, pm, 0, n, got.data(), n, m, true);
    matmul<Arch>(a.data(), k, b.data(), n, want.data(), n, m, k, n, true);
    INFO("k " << k << ", n " << n);
    CHECK(same_bits(got, want));
  }
}
