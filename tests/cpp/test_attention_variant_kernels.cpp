// The fast path's own kernels for two variants, each against the traced path
// and the double reference: the decode kernel (a few query rows per key/value
// head, read in place, rows in the vector lanes) and ALiBi's ramp inside the
// flash kernel's exp pass. Lengths and widths around the SIMD widths and the
// tile sizes, large logits, and rows that see no key.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "attnscope/attnscope.hpp"
#include "kernels/decode_attention.hpp"
#include "kernels/dispatch.hpp"
#include "test_attention_reference.hpp"
#include "test_kernels_support.hpp"

using namespace attnscope;
using attnscope::testing::max_scaled_error;
using attnscope::testing::random_tensor;
using attnscope::testing::reference_attention;
using attnscope::testing::ReferenceDims;
using attnscope::testing::to_double;

namespace {

Shape shape4(std::size_t b, std::size_t h, std::size_t t, std::size_t d) { return {b, h, t, d}; }

struct Inputs {
  ReferenceDims dims;
  Tensor q, k, v;
};

Inputs make_inputs(std::mt19937& rng, std::size_t B, std::size_t H, std::size_t Hkv, std::size_t Tq,
                   std::size_t Tk, std::size_t d_k, std::size_t d_v) {
  Inputs in;
  in.dims = ReferenceDims{B, H, Hkv, Tq, Tk, d_k, d_v};
  in.q = random_tensor(rng, shape4(B, H, Tq, d_k));
  in.k = random_tensor(rng, shape4(B, Hkv, Tk, d_k));
  in.v = random_tensor(rng, shape4(B, Hkv, Tk, d_v));
  return in;
}

/// Checks both paths against the reference (and each other) for `options`.
void check_paths(const Inputs& in, AttentionOptions options, double tolerance = 2e-5) {
  const auto ref =
      reference_attention(to_double(in.q.data), to_double(in.k.data), to_double(in.v.data), in.dims,
                          1.0 / std::sqrt(double(in.dims.d_k)), options);
  options.trace = true;
  const AttentionResult traced = attention(in.q, in.k, in.v, options);
  options.trace = false;
  const AttentionResult fast = attention(in.q, in.k, in.v, options);
  CHECK(max_scaled_error(fast.output.data, ref.output, 1.0) <= tolerance);
  CHECK(max_scaled_error(fast.output.data, traced.output.data, 1.0) <= tolerance);
  CHECK(fast.fully_masked == ref.fully_masked);
  CHECK(fast.fully_masked_count == traced.fully_masked_count);
}

}  // namespace

TEST_CASE("decode steps match the reference for group sizes up to 16 rows, every mask",
          "[attention][variants][decode]") {
  // Rows per key/value head 1..16 (the lanes of one to four batches), head
  // widths around the SIMD widths, keys around the 8-key blocks and the
  // 128-key tiles; causal, padding (one sequence with no key at all),
  // window with sinks, ALiBi and an additive mask.
  std::mt19937 rng(2026);
  for (std::size_t group : {1u, 3u, 4u, 5u, 8u, 9u, 13u, 16u}) {
    for (std::size_t Tq : {1u, 2u}) {
      if (group * Tq > 16) continue;
      for (std::size_t d_k : {1u, 4u, 7u, 16u, 33u}) {
        for (std::size_t Tk : {2u, 7u, 8u, 9u, 127u, 128u, 129u, 300u}) {
          const Inputs in = make_inputs(rng, 2, 2 * group, 2, Tq, Tk, d_k, 5);
          for (int mask = 0; mask < 5; ++mask) {
            AttentionOptions o;
            o.mask.causal = true;
            if (mask == 1) o.mask.lengths = {0, (Tk + 1) / 2};
            if (mask == 2) {
              o.mask.window = static_cast<std::int64_t>((Tk + 2) / 3);
              o.mask.sinks = std::min<std::size_t>(Tk, 2);
            }
            if (mask == 3) o.bias.alibi = true;
            if (mask == 4) o.mask.additive = random_tensor(rng, {Tq, Tk}, -3.0f, 3.0f);
            INFO("group = " << group << ", Tq = " << Tq << ", d_k = " << d_k << ", Tk = " << Tk
                            << ", mask = " << mask);
            check_paths(in, o);
          }
        }
      }
    }
  }
}

TEST_CASE("decode steps round their scores as the traced path does at extreme scales",
          "[attention][variants][decode]") {
  // Scores near 1e8, where one ulp is 8: a different order of the products
  // in a score would pick different weights than the traced path.
  std::mt19937 rng(44);
  for (std::size_t group : {1u, 4u, 16u}) {
    for (std::size_t d_k : {4u, 9u, 128u}) {
      const std::size_t Tk = 300;
      Inputs in = make_inputs(rng, 1, group, 1, 1, Tk, d_k, 4);
      for (float& x : in.q.data) x *= 1e-30f;
      for (float& x : in.k.data) x *= 3e30f;
      AttentionOptions o;
      o.scale = Scale::custom(1e8f);
      o.mask.causal = true;
      o.trace = true;
      const AttentionResult traced = attention(in.q, in.k, in.v, o);
      o.trace = false;
      const AttentionResult fast = attention(in.q, in.k, in.v, o);
      INFO("group = " << group << ", d_k = " << d_k);
      CHECK(max_scaled_error(fast.output.data, traced.output.data, 1.0) <= 1e-5);
    }
  }
}

TEST_CASE("ALiBi on the fast path matches the reference around the tiles, large logits too",
          "[attention][variants][alibi]") {
  // Query blocks of 128 rows and key tiles of 128 keys: lengths below, at
  // and past them, queries at the bottom right of longer keys, causal or not,
  // padding; scaled-up logits make the running max move from tile to tile.
  std::mt19937 rng(1021);
  for (std::size_t Tk : {5u, 127u, 128u, 129u, 255u, 300u}) {
    for (std::size_t Tq : {Tk, (Tk + 2) / 3}) {
      for (float logit_scale : {1.0f, 40.0f}) {
        Inputs in = make_inputs(rng, 2, 4, 2, Tq, Tk, 8, 6);
        for (float& x : in.q.data) x *= logit_scale;
        for (int mask = 0; mask < 3; ++mask) {
          AttentionOptions o;
          o.bias.alibi = true;
          o.mask.causal = mask != 1;
          if (mask == 2) o.mask.lengths = {Tk, (Tk + 1) / 2};
          INFO("Tk = " << Tk << ", Tq = " << Tq << ", logits ×" << logit_scale
                       << ", mask = " << mask);
          // Scores near 40·|q||k|/√8 are rounded to ~1e-5 in float.
          check_paths(in, o, logit_scale > 1.0f ? 2e-3 : 2e-5);
        }
      }
    }
  }
}

TEST_CASE("ALiBi's start for the running max stays below every row's max at extreme scales",
          "[attention][variants][alibi]") {
  // Scores near 1e8, where one ulp is 8: the start, a dot product of the
  // nearest key, rounds differently from the tile product. Were it not
  // lowered by its rounding bound, it could sit tens of units above the
  // row's max and push the row's weights under the smallest float.
  std::mt19937 rng(45);
  for (std::size_t d_k : {8u, 128u}) {
    for (std::size_t T : {129u, 300u}) {
      Inputs in = make_inputs(rng, 1, 4, 4, T, T, d_k, 4);
      for (float& x : in.q.data) x *= 1e-30f;
      for (float& x : in.k.data) x *= 3e30f;
      for (bool causal : {true, false}) {
        AttentionOptions o;
        o.scale = Scale::custom(1e8f);
        o.bias.alibi = true;
        o.mask.causal = causal;
        o.trace = true;
        const AttentionResult traced = attention(in.q, in.k, in.v, o);
        o.trace = false;
        const AttentionResult fast = attention(in.q, in.k, in.v, o);
        INFO("d_k = " << d_k << ", T = " << T << ", causal = " << causal);
        CHECK(max_scaled_error(fast.output.data, traced.output.data, 1.0) <= 1e-5);
        CHECK(fast.fully_masked_count == 0);
      }
    }
  }
}

TEST_CASE("the decode kernel on 4-lane batches gives the dispatched kernel's output",
          "[attention][variants][decode][kernels]") {
  // Natively the dispatched kernel may run on 8 or 16 lanes; wasm runs on 4,
  // where 5..16 rows take two to four batches of lanes. Both must agree.
  using namespace attnscope::kernels;
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (std::size_t rows : {1u, 4u, 5u, 8u, 9u, 12u, 13u, 16u}) {
    for (std::size_t Tk : {3u, 129u, 300u}) {
      const std::size_t d_k = 12, d_v = 19;
      std::vector<float> q(rows * d_k), k(Tk * d_k), v(Tk * d_v);
      for (auto* x : {&q, &k, &v}) {
        for (float& f : *x) f = uniform(rng);
      }
      HeadMask mask;
      mask.seq_len = Tk;
      mask.key_length = Tk;
      mask.causal = true;
      mask.query_offset = Tk - 1;
      mask.queries_per_head = 1;  // one query per head, `rows` heads
      std::vector<float> scores(decode_scores_size(Tk)), lanes(decode_lanes_size(d_k, d_v));
      std::vector<float> four(rows * d_v), best(rows * d_v);
      std::vector<std::uint8_t> masked_four(rows), masked_best(rows);
      CHECK(decode_attention<xsimd::sse2>(q.data(), k.data(), v.data(), rows, Tk, d_k, d_v, 0.3f,
                                          mask, four.data(), masked_four.data(), scores.data(),
                                          lanes.data()));
      CHECK(decode_attention_best(q.data(), k.data(), v.data(), rows, Tk, d_k, d_v, 0.3f, mask,
                                  best.data(), masked_best.data(), scores.data(), lanes.data()));
      INFO("rows = " << rows << ", Tk = " << Tk);
      CHECK(max_scaled_error(four, best, 1.0) <= 1e-5);
      CHECK(masked_four == masked_best);
    }
  }
}
