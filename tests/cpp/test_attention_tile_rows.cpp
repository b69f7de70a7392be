// The flash path in 6-row register tiles (as attnscope::matmul_tile_rows()
// chooses where the engine runs them faster) gives the bits of its 4-row
// tiles: with the queries read in place (d_k 64 and 128) and from panels (any
// other head size), at lengths around the 16-row and 128-key tiles, under
// every kind of mask, for GQA groups, with scores too large for the in-range
// exp pass, with fully masked rows, and on the pool's threads.
#include <catch2/catch.hpp>

#include <cstddef>
#include <limits>
#include <random>

#include "attnscope/attention.hpp"
#include "attnscope/threads.hpp"
#include "test_attention_reference.hpp"
#include "test_kernels_support.hpp"
#include "test_one_thread_after.hpp"
#include "test_tile_rows.hpp"

using namespace attnscope;
using attnscope::testing::OneThreadAfter;
using attnscope::testing::random_tensor;
using attnscope::testing::same_bits;
using attnscope::testing::TileRows;

namespace {

constexpr std::size_t B = 2, H = 4;
constexpr int kMaskKinds = 7;

/// Mask, bias and scale of one kind of case; q and k hold values in ±1.
AttentionOptions options_of(int kind, std::size_t Tq, std::size_t Tk, std::mt19937& rng) {
  AttentionOptions o;
  o.trace = false;
  switch (kind) {
    case 1:
      o.mask.causal = true;
      break;
    case 2:  // padding, with a sequence that sees no key at all
      o.mask.lengths = {0, Tk - Tk / 3};
      break;
    case 3:
      o.mask.causal = true;
      o.mask.window = 50;
      o.mask.sinks = 4;
      break;
    case 4:
      o.mask.causal = true;
      o.bias.alibi = true;
      break;
    case 5: {  // dense: an additive mask with holes
      Tensor additive = random_tensor(rng, {Tq, Tk}, -3.0f, 3.0f);
      for (std::size_t i = 5; i < additive.size(); i += 11) {
        additive.data[i] = -std::numeric_limits<float>::infinity();
      }
      o.mask.additive = std::move(additive);
      break;
    }
    case 6:  // scores far beyond the in-range exp pass's bound
      o.scale = Scale::custom(8.0f);
      break;
    default:
      break;
  }
  return o;
}

struct Run {
  AttentionResult result;
  Tensor log_sum_exp;
};

Run run(std::size_t rows, const Tensor& q, const Tensor& k, const Tensor& v,
        const AttentionOptions& o) {
  TileRows height(rows);
  return {attention(q, k, v, o), attention_with_log_sum_exp(q, k, v, o).log_sum_exp};
}

void check_same_bits(std::mt19937& rng, std::size_t d_k, std::size_t d_v, std::size_t kv_heads,
                     std::size_t Tq, std::size_t Tk, int kind) {
  const Tensor q = random_tensor(rng, {B, H, Tq, d_k});
  const Tensor k = random_tensor(rng, {B, kv_heads, Tk, d_k});
  const Tensor v = random_tensor(rng, {B, kv_heads, Tk, d_v});
  const AttentionOptions o = options_of(kind, Tq, Tk, rng);
  const Run four = run(4, q, k, v, o);
  const Run six = run(kMatmulTallRows, q, k, v, o);
  INFO("d_k=" << d_k << " d_v=" << d_v << " kv heads=" << kv_heads << " Tq=" << Tq << " Tk=" << Tk
              << " kind=" << kind);
  CHECK(same_bits(six.result.output.data, four.result.output.data));
  CHECK(six.result.fully_masked == four.result.fully_masked);
  CHECK(same_bits(six.log_sum_exp.data, four.log_sum_exp.data));
  if (kind == 2) CHECK(six.result.fully_masked_count == H * Tq);
}

}  // namespace

TEST_CASE("the flash path gives the same bits in 6-row tiles as in 4-row tiles",
          "[attention][tile rows]") {
  std::mt19937 rng(67);
  for (std::size_t d_k : {64u, 128u, 40u}) {
    const std::size_t d_v = d_k == 40 ? 24 : d_k;
    for (std::size_t T : {17u, 127u, 129u, 200u}) {
      for (int kind = 0; kind < kMaskKinds; ++kind) {
        check_same_bits(rng, d_k, d_v, kind % 2 ? 2 : H, T, T, kind);
      }
    }
  }
  // Fewer queries than keys: causal rows end part-way through a key tile.
  for (int kind = 0; kind < kMaskKinds; ++kind) check_same_bits(rng, 64, 64, 2, 40, 300, kind);
}

// A WebAssembly build without threads has no pool (test_threads.cpp).
#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)

TEST_CASE("the flash path's 6-row tiles give the same bits on the pool's threads",
          "[attention][tile rows][threads]") {
  const OneThreadAfter restore;
  std::mt19937 rng(71);
  for (std::size_t threads : {2u, 3u}) {
    set_threads(threads);
    for (int kind = 0; kind < kMaskKinds; ++kind) check_same_bits(rng, 64, 64, 2, 257, 257, kind);
  }
}

#endif
