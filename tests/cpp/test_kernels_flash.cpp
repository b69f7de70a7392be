// The masking step and the flash-attention kernel against the plain
// definition in double precision.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/flash_attention.hpp"
#include "kernels/mask_row.hpp"
#include "kernels/pack_keys.hpp"
#include "test_attention_reference.hpp"
#include "test_kernels_support.hpp"

using namespace attnscope::kernels;
using attnscope::testing::max_scaled_error;
using attnscope::testing::random_floats;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// flash_attention on unpacked keys (T × d_k) and values (T × d_v), packed as
// attention_fast packs them.
void flash_unpacked(const std::vector<float>& q, const std::vector<float>& k,
                    const std::vector<float>& v, std::size_t T, std::size_t d_k, std::size_t d_v,
                    float scale, const HeadMask& mask, std::vector<float>& out,
                    std::vector<std::uint8_t>& flags) {
  std::vector<float> keys(packed_keys_size(T, d_k, kKeyTile), kInf);
  std::vector<float> values(packed_values_size(T, d_v), kInf);
  pack_key_tiles(k.data(), T, d_k, kKeyTile, keys.data());
  pack_value_panels(v.data(), T, d_v, values.data());
  FlashWorkspace ws;
  size_workspace(ws, d_k, d_v);
  flash_attention(q.data(), keys.data(), values.data(), T, T, d_k, d_v, scale, mask, out.data(),
                  flags.data(), ws);
}

// The double-precision reference attention of one head under `mask`,
// restated as the library's Mask: q, k (T × d_k), v (T × d_v).
attnscope::testing::ReferenceResult reference_head(const std::vector<float>& q,
                                                   const std::vector<float>& k,
                                                   const std::vector<float>& v, std::size_t T,
                                                   std::size_t d_k, std::size_t d_v, double scale,
                                                   const HeadMask& mask) {
  attnscope::Mask m;
  m.causal = mask.causal;
  if (mask.key_length < T) m.lengths = {mask.key_length};
  if (mask.additive) {
    m.additive =
        attnscope::Tensor({T, T}, std::vector<float>(mask.additive, mask.additive + T * T));
  }
  if (mask.allowed) {
    m.allowed.shape = {T, T};
    m.allowed.data.assign(mask.allowed, mask.allowed + T * T);
  }
  using attnscope::testing::to_double;
  return attnscope::testing::reference_attention(to_double(q), to_double(k), to_double(v), 1, 1, T,
                                                 d_k, d_v, scale, m);
}

struct FlashCase {
  std::size_t T, d_k, d_v;
  bool causal;
  std::size_t key_length;
  bool additive, allowed;
};

void check_flash(const FlashCase& fc, std::mt19937& rng) {
  const std::size_t T = fc.T;
  const std::vector<float> q = random_floats(rng, T * fc.d_k, -2.0f, 2.0f);
  const std::vector<float> k = random_floats(rng, T * fc.d_k, -2.0f, 2.0f);
  const std::vector<float> v = random_floats(rng, T * fc.d_v);
  std::vector<float> additive = random_floats(rng, T * T, -1.0f, 1.0f);
  std::vector<std::uint8_t> allowed(T * T);
  std::bernoulli_distribution coin(0.7);
  for (std::size_t i = 0; i < T * T; ++i) {
    allowed[i] = coin(rng) ? 1 : 0;
    if (i % 11 == 3) additive[i] = -kInf;
  }
  if (T > 2) std::fill(allowed.begin() + T, allowed.begin() + 2 * T, 0);  // query 1: no key

  HeadMask mask;
  mask.seq_len = T;
  mask.causal = fc.causal;
  mask.key_length = fc.key_length;
  mask.additive = fc.additive ? additive.data() : nullptr;
  mask.allowed = fc.allowed ? allowed.data() : nullptr;
  const float scale = 1.0f / std::sqrt(float(fc.d_k));

  std::vector<float> out(T * fc.d_v, 123.0f);
  std::vector<std::uint8_t> flags(T, 7);
  flash_unpacked(q, k, v, T, fc.d_k, fc.d_v, scale, mask, out, flags);
  const auto reference = reference_head(q, k, v, T, fc.d_k, fc.d_v, scale, mask);
  const std::vector<double>& ref = reference.output;
  const std::vector<std::uint8_t>& ref_flags = reference.fully_masked;
  INFO("T = " << T << ", d_k = " << fc.d_k << ", d_v = " << fc.d_v << ", causal = " << fc.causal
              << ", key_length = " << fc.key_length << ", additive = " << fc.additive
              << ", allowed = " << fc.allowed);
  // Outputs are averages of v (|v| <= 1), so 1e-5 absolute is 1e-5 relative
  // to the scale of the values.
  CHECK(max_scaled_error(out, ref, 1.0) <= 1e-5);
  CHECK(flags == ref_flags);
  for (std::size_t i = 0; i < T; ++i) {
    if (!flags[i]) continue;
    for (std::size_t c = 0; c < fc.d_v; ++c) CHECK(out[i * fc.d_v + c] == 0.0f);
  }
}

// Unscaled flash attention with d = 1 and every query 1, so the scores are
// the keys: its error against the reference, and whether the flags agree.
struct OneDimResult {
  double error;
  bool flags_match;
};

OneDimResult flash_one_dim(const std::vector<float>& k, const std::vector<float>& v,
                           const HeadMask& mask) {
  const std::size_t T = k.size(), d = 1;
  const std::vector<float> q(T, 1.0f);
  std::vector<float> out(T);
  std::vector<std::uint8_t> flags(T);
  flash_unpacked(q, k, v, T, d, d, 1.0f, mask, out, flags);
  const auto reference = reference_head(q, k, v, T, d, d, 1.0, mask);
  return {max_scaled_error(out, reference.output, 1.0), flags == reference.fully_masked};
}

// A mask that hides nothing: T queries, T keys.
HeadMask unmasked(std::size_t T) {
  HeadMask mask;
  mask.seq_len = T;
  mask.key_length = T;
  return mask;
}

// exponents_in_range for queries q and keys k (T × d each), keys packed as
// the kernel packs them.
bool keys_in_range(const std::vector<float>& q, const std::vector<float>& k, std::size_t T,
                   std::size_t d, float scale) {
  std::vector<float> packed(packed_keys_size(T, d, kKeyTile)), scratch(kKeyTile);
  pack_key_tiles(k.data(), T, d, kKeyTile, packed.data());
  return exponents_in_range<xsimd::default_arch>(q.data(), packed.data(), T, d, scale,
                                                 scratch.data());
}

}  // namespace

TEST_CASE("mask_row adds, hides and pads", "[kernels][mask]") {
  const std::size_t T = 6;
  std::vector<float> additive(T * T, 0.5f);
  additive[2 * T + 1] = -kInf;
  std::vector<std::uint8_t> allowed(T * T, 1);
  allowed[2 * T + 0] = 0;
  HeadMask mask;
  mask.seq_len = T;
  mask.causal = true;
  mask.key_length = 5;
  mask.additive = additive.data();
  mask.allowed = allowed.data();
  std::vector<float> row(T, 1.0f);
  mask_row(row.data(), 2, 0, T, mask);
  CHECK(row == std::vector<float>{-kInf, -kInf, 1.5f, -kInf, -kInf, -kInf});
  // A tile starting inside the row, for query 5: keys 3, 4 visible, 5 padding.
  std::vector<float> tile(3, 0.0f);
  mask_row(tile.data(), 5, 3, 3, mask);
  CHECK(tile == std::vector<float>{0.5f, 0.5f, -kInf});
}

TEST_CASE("flash_attention matches the reference without masks", "[kernels][flash]") {
  std::mt19937 rng(21);
  for (std::size_t T : {1u,  2u,  3u,  4u,  5u,   7u,   8u,   15u,  16u,  17u,  33u,
                        63u, 64u, 65u, 67u, 127u, 128u, 129u, 130u, 255u, 257u, 300u}) {
    check_flash({T, 8, 8, false, T, false, false}, rng);
  }
  for (std::size_t d : {1u, 3u, 4u, 5u, 9u, 16u, 31u, 64u}) {
    check_flash({37, d, 5, false, 37, false, false}, rng);
    check_flash({70, 6, d, false, 70, false, false}, rng);
  }
}

TEST_CASE("flash_attention matches the reference with every mask combination", "[kernels][flash]") {
  std::mt19937 rng(22);
  for (std::size_t T : {1u, 3u, 16u, 17u, 64u, 65u, 100u, 150u, 270u}) {
    for (int combo = 0; combo < 16; ++combo) {
      const bool causal = combo & 1, padded = combo & 2, additive = combo & 4, allowed = combo & 8;
      const std::size_t key_length = padded ? (T * 2) / 3 : T;
      check_flash({T, 7, 4, causal, key_length, additive, allowed}, rng);
    }
    check_flash({T, 4, 4, true, 0, false, false}, rng);  // every key is padding
  }
}

TEST_CASE("flash_attention is stable for huge logits", "[kernels][flash]") {
  // Scores of 90..100 and ±1e4 overflow a naive exp; the online max must
  // also survive a later key tile raising the max by thousands.
  for (std::size_t T : {5u, 64u, 65u, 129u}) {
    std::vector<float> k(T), v(T);
    for (std::size_t j = 0; j < T; ++j) {
      k[j] = (j % 5 == 4) ? 1e4f : (j % 5 == 0 ? -1e4f : 90.0f + float(j % 10));
      v[j] = float(j % 7) - 3.0f;
    }
    const OneDimResult r = flash_one_dim(k, v, unmasked(T));
    INFO("T = " << T);
    CHECK(r.error <= 1e-5);
  }
}

TEST_CASE("flash_attention follows a max that grows across key tiles, slowly or sharply",
          "[kernels][flash]") {
  // The running max is lazy: a tile whose max exceeds it by at most
  // kLazyMaxSlack = 5.545 keeps it, with weights up to 256; a larger jump
  // redoes the tile. Scores rising by `step` per key tile exercise both, and
  // a falling run the plain case.
  const std::size_t T = 5 * kKeyTile + 9;
  for (float step : {0.5f, 3.0f, 5.5f, 5.6f, 20.0f, 300.0f, -4.0f}) {
    std::vector<float> k(T), v(T);
    for (std::size_t j = 0; j < T; ++j) {
      k[j] = step * float(j / kKeyTile) + 0.01f * float(j % 13);
      v[j] = float(j % 7) - 3.0f;
    }
    const OneDimResult r = flash_one_dim(k, v, unmasked(T));
    INFO("step = " << step);
    CHECK(r.error <= 1e-5);
    // Steps up to 5.6 (and the falling run) keep every exponent in range, so
    // they take the in-range exp pass, whose max moves when a tile's weights
    // sum above 256; 20 and 300 take the clamped one.
    CHECK(keys_in_range(std::vector<float>(T, 1.0f), k, T, 1, 1.0f) == (std::abs(step) < 10.0f));
  }
}

TEST_CASE("flash_attention keeps unnormalised weights within 256 when the max jumps",
          "[kernels][flash]") {
  // attention_fast relies on weights <= kMaxUnnormalisedWeight: values up to
  // FLT_MAX / (256·2T) must not overflow the partial sums. A second key tile
  // scoring `jump` above the first must move the max, through the sum of its
  // weights (in-range exp pass, jump 10) or its max (clamped pass, jump 200).
  const std::size_t T = 2 * kKeyTile;
  const float big = std::numeric_limits<float>::max() / (kMaxUnnormalisedWeight * 2 * T);
  for (float jump : {10.0f, 200.0f}) {
    std::vector<float> k(T), v(T, big);
    for (std::size_t j = kKeyTile; j < T; ++j) k[j] = jump;
    const OneDimResult r = flash_one_dim(k, v, unmasked(T));
    INFO("jump = " << jump);
    CHECK(r.error <= 1e-5);
  }
}

TEST_CASE("exponents_in_range takes power-of-two scales and scores the norms bound",
          "[kernels][flash]") {
  std::mt19937 rng(23);
  const std::size_t T = 300, d = 16;
  std::vector<float> q = random_floats(rng, T * d, -2.0f, 2.0f);
  std::vector<float> k = random_floats(rng, T * d, -2.0f, 2.0f);
  // The longest query and key: norm 8 each, so scores lie within ±64·scale.
  std::fill(q.begin() + 7 * d, q.begin() + 8 * d, 2.0f);
  std::fill(k.begin() + 200 * d, k.begin() + 201 * d, -2.0f);
  const auto in_range = [&](float scale) { return keys_in_range(q, k, T, d, scale); };
  CHECK(in_range(0.5f));  // exponents within ±2·32·1.01·log2 e = ±93
  CHECK(in_range(0x1p-60f));
  CHECK_FALSE(in_range(1.0f));                    // ±186: past ±120
  CHECK_FALSE(in_range(0x1p-61f));                // outside the exact range
  CHECK_FALSE(in_range(1.0f / std::sqrt(8.0f)));  // not a power of two
  CHECK_FALSE(in_range(-0.25f));
  CHECK_FALSE(in_range(0.0f));
  // One long key (norm 240, in the last, partial tile) is enough to leave it.
  std::fill(k.end() - d, k.end(), 60.0f);
  CHECK_FALSE(in_range(0.5f));
}

TEST_CASE("flash_attention ignores huge scores that masks hide, and follows additive lifts",
          "[kernels][flash]") {
  // Masks hide keys scoring 1000 more than the visible ones, or an additive
  // mask lifts one key per query by 100: the max each tile is exponentiated
  // against must be that of the visible, masked scores.
  const std::size_t T = 150;
  std::vector<float> k(T), v(T);
  for (std::size_t j = 0; j < T; ++j) {
    k[j] = (j % 3 == 0 ? 1000.0f : 0.0f) + 0.01f * float(j % 7);
    v[j] = float(j % 5) - 2.0f;
  }
  std::vector<std::uint8_t> allowed(T * T);
  std::vector<float> additive(T * T, 0.0f);
  for (std::size_t i = 0; i < T; ++i) {
    for (std::size_t j = 0; j < T; ++j) allowed[i * T + j] = (j % 3 == 0) ? 0 : 1;
    additive[i * T + (i * 7) % T] = 100.0f;
  }
  for (int variant = 0; variant < 3; ++variant) {
    HeadMask mask = unmasked(T);
    std::vector<float> keys = k;
    if (variant == 0) mask.allowed = allowed.data();  // hides every 1000
    if (variant == 1) {                               // causal: later 1000s hidden
      mask.causal = true;
      for (std::size_t j = 0; j < T; ++j) keys[j] = j < 40 ? 0.01f * float(j % 7) : 1000.0f;
    }
    if (variant == 2) {  // small scores, one key per query lifted by 100
      for (float& x : keys) x = 0.01f * x;
      mask.additive = additive.data();
    }
    const OneDimResult r = flash_one_dim(keys, v, mask);
    INFO("variant = " << variant);
    CHECK(r.error <= 1e-5);
    CHECK(r.flags_match);
  }
}
