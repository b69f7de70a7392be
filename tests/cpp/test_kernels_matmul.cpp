// matmul (plain, strided, accumulating, packed, B as column panels), key and
// value packing against references.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/matmul.hpp"
#include "kernels/pack_keys.hpp"
#include "test_kernels_support.hpp"

using namespace attnscope::kernels;
using attnscope::testing::kKernelSizes;
using attnscope::testing::product_error;
using attnscope::testing::ProductError;
using attnscope::testing::random_floats;

namespace {

// How the product under test gets its operands.
enum class Form {
  strided,         // matmul, A rows lda apart
  packed_b,        // matmul_packed: B copied into panels first
  fixed_lda,       // matmul<Arch, kFixedLda>: A's row stride known at compile time
  row_panels,      // matmul<Arch, kPackedA> on A packed by pack_row_panels
  b_panels,        // matmul_with on B as PanelsB<kPanelWidth> (a tile within a panel)
  b_batch_panels,  // matmul_with on B as panels one batch wide (a panel per batch)
};

// B (k × n, row stride ldb) copied into panels of `width` columns, `stride`
// floats apart (more than k·width, so that a stride mistaken for k·width
// shows); everything else NaN.
std::vector<float> pack_b_panels(const std::vector<float>& b, std::size_t ldb, std::size_t k,
                                 std::size_t n, std::size_t width, std::size_t stride) {
  std::vector<float> panels((n + width - 1) / width * stride, NAN);
  for (std::size_t p = 0; p < k; ++p) {
    for (std::size_t j = 0; j < n; ++j)
      panels[(j / width) * stride + p * width + j % width] = b[p * ldb + j];
  }
  return panels;
}
constexpr std::size_t kFixedLda = 24;

// |c − ref| bounded by tol · Σ_p |a_ip·b_pj| per element: relative to the
// magnitude of the terms, so cancellation cannot hide or fake an error.
void check_matmul(std::size_t m, std::size_t k, std::size_t n, std::size_t pad, bool accumulate,
                  std::mt19937& rng, Form form = Form::strided) {
  const std::size_t lda = form == Form::fixed_lda ? kFixedLda : k + pad;
  const std::size_t ldb = n + pad, ldc = n + pad;
  const std::vector<float> a = random_floats(rng, m * lda), b = random_floats(rng, k * ldb);
  std::vector<float> c = random_floats(rng, m * ldc);
  std::vector<double> ref(c.begin(), c.end());
  const std::vector<float> before = c;
  using Arch = xsimd::default_arch;
  if (form == Form::packed_b) {
    std::vector<float> scratch(matmul_packed_scratch(k, n), NAN);
    matmul_packed(a.data(), lda, b.data(), ldb, c.data(), ldc, m, k, n, scratch.data(), accumulate);
  } else if (form == Form::fixed_lda) {
    matmul<Arch, kFixedLda>(a.data(), lda, b.data(), ldb, c.data(), ldc, m, k, n, accumulate);
  } else if (form == Form::b_panels) {
    const std::size_t stride = k * kPanelWidth + 5;
    const std::vector<float> panels = pack_b_panels(b, ldb, k, n, kPanelWidth, stride);
    matmul_with<Arch>(a.data(), lda, Panels{panels.data(), stride}, c.data(), ldc, m, k, n,
                      accumulate);
  } else if (form == Form::b_batch_panels) {
    constexpr std::size_t W = xsimd::batch<float, Arch>::size;
    const std::size_t stride = k * W + 3;
    const std::vector<float> panels = pack_b_panels(b, ldb, k, n, W, stride);
    matmul_with<Arch>(a.data(), lda, PanelsB<W>{panels.data(), stride}, c.data(), ldc, m, k, n,
                      accumulate);
  } else if (form == Form::row_panels) {
    std::vector<float> panels(m * k, NAN);
    pack_row_panels(a.data(), lda, m, k, panels.data());
    matmul<Arch, kPackedA>(panels.data(), lda, b.data(), ldb, c.data(), ldc, m, k, n, accumulate);
  } else {
    matmul(a.data(), lda, b.data(), ldb, c.data(), ldc, m, k, n, accumulate);
  }
  matmul_reference(a.data(), lda, b.data(), ldb, ref.data(), ldc, m, k, n, accumulate);
  const ProductError e = product_error(c, before, ref, m, k, n, ldc, accumulate,
                                       [&](std::size_t i, std::size_t j, std::size_t p) {
                                         return double(a[i * lda + p]) * b[p * ldb + j];
                                       });
  REQUIRE(e.padding_kept);  // padding columns of C must be left alone
  INFO("m = " << m << ", k = " << k << ", n = " << n << ", pad = " << pad
              << ", accumulate = " << accumulate << ", form = " << int(form));
  CHECK(e.worst <= 1e-6);
}

}  // namespace

TEST_CASE("matmul matches its reference over sizes around the vector width", "[kernels][matmul]") {
  std::mt19937 rng(11);
  for (std::size_t n : kKernelSizes) {
    if (n > 100) continue;
    for (std::size_t m : {1u, 3u, 4u, 5u, 8u, 9u}) {
      check_matmul(m, 7, n, 0, false, rng);
      check_matmul(m, n, 5, 0, false, rng);
    }
  }
  for (std::size_t k : {1u, 2u, 16u, 33u, 64u, 67u}) check_matmul(13, k, 67, 0, false, rng);
}

TEST_CASE("matmul honours leading dimensions and accumulation", "[kernels][matmul]") {
  std::mt19937 rng(12);
  for (std::size_t n : {1u, 4u, 7u, 8u, 13u, 32u, 67u}) {
    for (std::size_t pad : {1u, 3u, 8u}) {
      check_matmul(6, 9, n, pad, false, rng);
      check_matmul(6, 9, n, pad, true, rng);
    }
  }
}

TEST_CASE("matmul_packed matches its reference around the panel and pass widths",
          "[kernels][matmul]") {
  // Panels are 8 columns wide in wasm and SSE2 (16 with AVX2, 32 with
  // AVX-512); columns past the last full panel are read in place. A pass
  // over B's rows packs kMatmulPackWidth (64) columns: the last pass may
  // hold fewer panels.
  std::mt19937 rng(14);
  for (std::size_t n : {1u, 7u, 8u, 9u, 15u, 16u, 17u, 31u, 32u, 33u, 63u, 64u, 65u, 67u, 72u, 127u,
                        128u, 129u, 200u}) {
    for (std::size_t m : {1u, 2u, 3u, 4u, 5u, 17u}) {
      check_matmul(m, 11, n, 0, false, rng, Form::packed_b);
    }
    for (std::size_t pad : {1u, 8u}) {
      check_matmul(6, 9, n, pad, false, rng, Form::packed_b);
      check_matmul(6, 9, n, pad, true, rng, Form::packed_b);
    }
  }
  for (std::size_t k : {1u, 4u, 64u, 130u}) check_matmul(20, k, 40, 0, false, rng, Form::packed_b);
}

TEST_CASE("matmul_packed blocks the shared dimension and still equals matmul bit for bit",
          "[kernels][matmul]") {
  // Depths around kMatmulDepthBlock and several blocks deep; the blocked
  // product must add each tile's steps in the unblocked order.
  std::mt19937 rng(16);
  for (std::size_t k : {0u, 255u, 256u, 257u, 600u, 768u}) {
    for (std::size_t n : {8u, 33u, 64u, 136u, 203u}) {
      const std::size_t m = 9;
      if (k > 0) check_matmul(m, k, n, 0, false, rng, Form::packed_b);
      for (bool accumulate : {false, true}) {
        const std::vector<float> a = random_floats(rng, m * k), b = random_floats(rng, k * n);
        std::vector<float> blocked = random_floats(rng, m * n), plain = blocked;
        std::vector<float> scratch(matmul_packed_scratch(k, n) + 1, NAN);
        matmul_packed(a.data(), k, b.data(), n, blocked.data(), n, m, k, n, scratch.data(),
                      accumulate);
        matmul(a.data(), k, b.data(), n, plain.data(), n, m, k, n, accumulate);
        INFO("k = " << k << ", n = " << n << ", accumulate = " << accumulate);
        CHECK(std::equal(blocked.begin(), blocked.end(), plain.begin()));
      }
    }
  }
}

TEST_CASE("matmul_packed on A with a row stride of a transformer width equals matmul bit for bit",
          "[kernels][matmul]") {
  // Strides matmul_packed reads as compile-time constants (with_row_stride)
  // and two it reads at run time; A a column slice of wider rows (k < lda),
  // row groups of 4, 2 and 1, two depth blocks, a column tail.
  std::mt19937 rng(17);
  for (std::size_t lda : {767u, 768u, 1024u, 3072u, 4096u, 4097u}) {
    const std::size_t m = 7, k = 300, n = 41;
    const std::vector<float> a = random_floats(rng, m * lda), b = random_floats(rng, k * n);
    for (bool accumulate : {false, true}) {
      std::vector<float> packed = random_floats(rng, m * n), plain = packed;
      std::vector<float> scratch(matmul_packed_scratch(k, n), NAN);
      matmul_packed(a.data(), lda, b.data(), n, packed.data(), n, m, k, n, scratch.data(),
                    accumulate);
      matmul(a.data(), lda, b.data(), n, plain.data(), n, m, k, n, accumulate);
      INFO("lda = " << lda << ", accumulate = " << accumulate);
      CHECK(std::equal(packed.begin(), packed.end(), plain.begin()));
    }
  }
}

TEST_CASE("matmul with a compile-time row stride or packed row panels of A matches its reference",
          "[kernels][matmul]") {
  // Row groups of 4, then 2, then 1 (m = 1 … 7, 9, 17), every column tail,
  // k up to the fixed stride, plain and accumulating.
  std::mt19937 rng(15);
  for (Form form : {Form::fixed_lda, Form::row_panels}) {
    for (std::size_t m : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 9u, 17u}) {
      for (std::size_t n : {1u, 3u, 4u, 7u, 8u, 9u, 16u, 17u, 33u}) {
        for (std::size_t k : {1u, 5u, 24u}) {
          check_matmul(m, k, n, 1, false, rng, form);
          check_matmul(m, k, n, 2, true, rng, form);
        }
      }
    }
  }
}

TEST_CASE("matmul reading B as column panels matches its reference", "[kernels][matmul]") {
  // Panels of 16 columns (two 2-batch tiles each in wasm and SSE2, one with
  // AVX2) and panels one batch wide (each batch of a tile in its own panel,
  // as AVX-512 reads 16-column panels); every column tail, row groups of 4,
  // 2 and 1, plain and accumulating.
  std::mt19937 rng(16);
  for (Form form : {Form::b_panels, Form::b_batch_panels}) {
    for (std::size_t n : {1u, 3u, 4u, 5u, 8u, 12u, 15u, 16u, 17u, 24u, 31u, 32u, 33u, 64u, 67u}) {
      for (std::size_t m : {1u, 2u, 3u, 4u, 7u, 16u}) {
        check_matmul(m, 9, n, 0, false, rng, form);
        check_matmul(m, 9, n, 2, true, rng, form);
      }
    }
    for (std::size_t k : {1u, 2u, 64u, 128u}) check_matmul(16, k, 64, 0, true, rng, form);
  }
}

TEST_CASE("pack_row_panels stores each row group column by column", "[kernels][matmul]") {
  // 7 rows of 3: a group of 4 (rows 0-3), of 2 (rows 4-5), of 1 (row 6).
  std::vector<float> a(7 * 5);
  for (std::size_t i = 0; i < 7; ++i) {
    for (std::size_t p = 0; p < 3; ++p) a[i * 5 + p] = float(10 * i + p);
  }
  std::vector<float> panels(7 * 3, NAN);
  pack_row_panels(a.data(), 5, 7, 3, panels.data());
  const std::vector<float> expected = {0,  10, 20, 30, 1,  11, 21, 31, 2, 12, 22, 32,  // rows 0-3
                                       40, 50, 41, 51, 42, 52,                         // rows 4-5
                                       60, 61, 62};                                    // row 6
  CHECK(panels == expected);

  // Groups of 4 rows go through 4 × 4 blocks, then the columns past the
  // last block one by one: every m and k around them.
  for (std::size_t m : {1u, 4u, 5u, 8u, 11u}) {
    for (std::size_t k : {1u, 3u, 4u, 5u, 8u, 9u, 64u}) {
      const std::size_t lda = k + 3;
      std::vector<float> rows(m * lda);
      for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = float(i);
      std::vector<float> packed(m * k, NAN);
      pack_row_panels(rows.data(), lda, m, k, packed.data());
      bool same = true;
      std::size_t i = 0;
      for (std::size_t group : {4u, 2u, 1u}) {
        for (; i + group <= m; i += group) {
          for (std::size_t p = 0; p < k; ++p) {
            for (std::size_t r = 0; r < group; ++r) {
              same = same && packed[i * k + p * group + r] == rows[(i + r) * lda + p];
            }
          }
        }
      }
      INFO("m = " << m << ", k = " << k);
      CHECK(same);
    }
  }
}

TEST_CASE("pack_key_tiles lays out transposed key tiles as panels, zero padded",
          "[kernels][matmul]") {
  std::mt19937 rng(13);
  for (std::size_t T : {1u, 3u, 16u, 17u, 64u, 65u, 130u}) {
    for (std::size_t d_k : {1u, 2u, 16u, 33u}) {
      for (std::size_t tile : {16u, 64u, 128u}) {
        const std::vector<float> keys = random_floats(rng, T * d_k);
        const std::size_t tiles = (T + tile - 1) / tile;
        REQUIRE(packed_keys_size(T, d_k, tile) == tiles * d_k * tile);
        std::vector<float> packed(packed_keys_size(T, d_k, tile), -7.0f);
        pack_key_tiles(keys.data(), T, d_k, tile, packed.data());
        bool same = true;
        for (std::size_t t = 0; t < tiles; ++t) {
          // Read through the layout the flash kernel gives matmul_with.
          const Panels block = key_tile_panels(packed.data() + t * d_k * tile, d_k);
          for (std::size_t p = 0; p < d_k; ++p) {
            for (std::size_t j = 0; j < tile; ++j) {
              const std::size_t key = t * tile + j;
              const float expected = key < T ? keys[key * d_k + p] : 0.0f;
              same = same && block.at(p, j) == expected;
            }
          }
        }
        INFO("T = " << T << ", d_k = " << d_k << ", tile = " << tile);
        CHECK(same);
        CHECK(std::count(packed.begin(), packed.end(), -7.0f) == 0);  // every float written
      }
    }
  }
}

TEST_CASE("pack_value_panels lays out values as panels of kPanelWidth columns",
          "[kernels][matmul]") {
  std::mt19937 rng(17);
  for (std::size_t T : {1u, 5u, 128u, 130u}) {
    for (std::size_t d_v : {1u, 4u, 15u, 16u, 17u, 64u, 70u}) {
      const std::vector<float> values = random_floats(rng, T * d_v);
      REQUIRE(packed_values_size(T, d_v) == (d_v + 15) / 16 * 16 * T);
      std::vector<float> packed(packed_values_size(T, d_v), -7.0f);
      pack_value_panels(values.data(), T, d_v, packed.data());
      bool same = true;
      for (std::size_t t0 : {std::size_t{0}, T / 2}) {
        const Panels rows = value_panels(packed.data(), T, t0);
        for (std::size_t t = t0; t < T; ++t) {
          for (std::size_t j = 0; j < d_v; ++j)
            same = same && rows.at(t - t0, j) == values[t * d_v + j];
        }
      }
      INFO("T = " << T << ", d_v = " << d_v);
      CHECK(same);
      // The last panel's columns past d_v are zero, not left unwritten.
      CHECK(std::count(packed.begin(), packed.end(), -7.0f) == 0);
    }
  }
}
