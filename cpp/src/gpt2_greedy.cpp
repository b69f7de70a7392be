// Greedy decoding through a bfloat16 copy of the embedding (Gpt2GreedyHead).
//
// A decode step is bound by the bytes it reads, and the LM head reads the
// whole float32 embedding (V × C) for one row of logits. The copy holds it
// in half the bytes. Its logits A_j differ from the float32 step's L_j by at
// most B_j = c·‖h‖·‖w_j‖, where
//   - rounding to bfloat16 moves each weight by at most 2⁻⁸ of itself,
//   - each dot product's float32 rounding adds at most γ_n·Σ|h_i·w_ji|
//     (γ_n = n·u / (1 − n·u), u = 2⁻²⁴, in any order of the sums, fused or not),
//   - Σ|h_i·w_ji| ≤ ‖h‖·‖w_j‖ (Cauchy–Schwarz),
// and an absolute term covers subnormal weights and underflowed products.
// The token with the largest L_j then lies among those with
// A_j + B_j ≥ max_k (A_k − B_k); only those are computed in float32, by the
// same dot product as step()'s, and the largest (the lowest id among equal
// ones) is step()'s argmax bit for bit. Where a logit or the bound is not
// finite, nothing is decided and the caller computes every logit.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "allocate.hpp"
#include "attnscope/gpt2.hpp"
#include "gpt2_internal.hpp"
#include "kernels/dot.hpp"
#include "kernels/dot_bf16.hpp"
#include "parallel_kernels.hpp"

namespace attnscope {

namespace {

using Arch = xsimd::default_arch;

/// Rows per task of the approximate pass: a multiple of 4 streams.
constexpr std::size_t kVocabGrain = 256;

/// The bound's factor c (see the top of the file) for dot products of n terms.
double bound_factor(std::size_t n) {
  const double u = std::ldexp(1.0, -24);
  const double products = static_cast<double>(n) + 2.0;  // the last adds of the lanes' sums
  const double gamma = products * u / (1.0 - products * u);
  const double rounding = std::ldexp(1.0, -8);
  // The 1e-6 covers the double-precision arithmetic of the norms and the bound.
  return (rounding + gamma * (2.0 + rounding)) * (1.0 + 1e-6);
}

/// Subnormal weights round to bfloat16 with an absolute error (≤ 2⁻¹³⁴ each),
/// and products below float32's normal range lose up to 2⁻¹⁵⁰ each, in both
/// passes.
double absolute_term(std::size_t n, double hidden_norm) {
  return std::sqrt(static_cast<double>(n)) * hidden_norm * std::ldexp(1.0, -134) +
         static_cast<double>(n) * std::ldexp(1.0, -146);
}

}  // namespace

Gpt2GreedyHead::Gpt2GreedyHead(const Gpt2Model& model)
    : model_(&model),
      weights_version_(model.weights_version_),
      vocab_(model.config().vocab_size),
      channels_(model.config().d_model),
      words_((model.config().d_model + 1) / 2) {
  try {
    rows_.assign(vocab_ * words_, 0u);
    norms_.assign(vocab_, 0.0);
  } catch (const std::bad_alloc&) {
    throw ResourceError("Gpt2GreedyHead: no memory for a bfloat16 copy of the " +
                        std::to_string(vocab_) + " × " + std::to_string(channels_) + " embedding");
  }
  const float* wte = model.storage_.data();
  std::atomic<bool> too_large{false};
  detail::parallel_ranges(vocab_, 64, vocab_ * channels_ * 4, [&](std::size_t v0, std::size_t v1) {
    for (std::size_t v = v0; v < v1; ++v) {
      const float* row = wte + v * channels_;
      std::uint32_t* out = rows_.data() + v * words_;
      double norm2 = 0.0;
      for (std::size_t i = 0; i < channels_; ++i) {
        const std::uint16_t b = kernels::to_bfloat16(row[i]);
        if (std::isinf(kernels::from_bfloat16(b))) too_large = true;
        out[i / 2] |= std::uint32_t{b} << (16 * (i % 2));
        norm2 += static_cast<double>(row[i]) * row[i];
      }
      norms_[v] = std::sqrt(norm2);
    }
  });
  usable_ = !too_large;
}

std::optional<std::int64_t> Gpt2GreedyHead::argmax(const float* hidden, const float* wte) const {
  const std::size_t V = vocab_, C = channels_;
  std::vector<float> even(words_, 0.0f), odd(words_, 0.0f);
  double hidden_norm2 = 0.0;
  for (std::size_t i = 0; i < C; ++i) {
    (i % 2 == 0 ? even : odd)[i / 2] = hidden[i];
    hidden_norm2 += static_cast<double>(hidden[i]) * hidden[i];
  }
  const double hidden_norm = std::sqrt(hidden_norm2);
  if (!std::isfinite(hidden_norm)) return std::nullopt;

  const std::unique_ptr<float[]> approx =
      detail::allocate_uninitialised({V}, "Gpt2Model::step_greedy: logits");
  const std::uint32_t* rows = rows_.data();
  detail::parallel_ranges(V, kVocabGrain, V * C, [&](std::size_t v0, std::size_t v1) {
    detail::in_four_streams(
        v0, v1,
        [&](std::size_t v, std::size_t quarter) {
          const std::uint32_t* const rows4[4] = {rows + v * words_, rows + (v + quarter) * words_,
                                                 rows + (v + 2 * quarter) * words_,
                                                 rows + (v + 3 * quarter) * words_};
          float dots[4];
          kernels::dot4_bf16<Arch>(even.data(), odd.data(), rows4, words_, dots);
          for (std::size_t j = 0; j < 4; ++j) approx[v + j * quarter] = dots[j];
        },
        [&](std::size_t v) {
          approx[v] = kernels::dot_bf16<Arch>(even.data(), odd.data(), rows + v * words_, words_);
        });
  });

  const double factor = bound_factor(C) * hidden_norm;
  const double absolute = absolute_term(C, hidden_norm);
  const auto bound_of = [&](std::size_t v) { return factor * norms_[v] + absolute; };
  // Far below float32's largest value, so that no float32 logit within the
  // bound of a finite approximation can overflow.
  const double kLargest = 1e37;
  double floor = -std::numeric_limits<double>::infinity();
  for (std::size_t v = 0; v < V; ++v) {
    const double a = approx[v], bound = bound_of(v);
    if (!(std::fabs(a) + bound < kLargest)) return std::nullopt;
    floor = std::max(floor, a - bound);
  }
  std::int64_t best = -1;
  float best_logit = 0.0f;
  for (std::size_t v = 0; v < V; ++v) {
    if (approx[v] + bound_of(v) < floor) continue;
    const float logit = kernels::dot<Arch>(hidden, wte + v * C, C);
    if (best < 0 || logit > best_logit) {
      best = static_cast<std::int64_t>(v);
      best_logit = logit;
    }
  }
  return best;
}

}  // namespace attnscope
