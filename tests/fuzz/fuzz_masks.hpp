// Masks from fuzz bytes: causal, padding lengths, additive and boolean, in
// every accepted rank and, with `perturb`, in wrong ones; and the score scale.
#pragma once

#include <limits>

#include "fuzz_input.hpp"

namespace fuzz {

inline attnscope::Shape mask_shape(Input& in, std::size_t B, std::size_t H, std::size_t Tq,
                                   std::size_t Tk, bool perturb) {
  attnscope::Shape s;
  switch (in.byte() % 3) {
    case 0:
      s = {Tq, Tk};
      break;
    case 1:
      s = {B, Tq, Tk};
      break;
    default:
      s = {B, H, Tq, Tk};
      break;
  }
  if (perturb && in.byte() % 4 == 0) s[in.byte() % s.size()] += 1;
  return s;
}

/// Every scale mode: 1/sqrt(d_k), none, or a custom factor that may be a
/// moderate value or any float bit pattern (NaN, +-inf, huge).
inline attnscope::Scale scale_of(Input& in, int kind) {
  switch (in.byte() % 4) {
    case 0:
      return attnscope::Scale::inv_sqrt_dk();
    case 1:
      return attnscope::Scale::none();
    case 2:
      return attnscope::Scale::custom(in.value(kind));
    default:
      return attnscope::Scale::custom(in.raw_float());
  }
}

/// Masks for Tq queries and Tk keys (see mask_of below for Tq = Tk = T).
inline attnscope::Mask mask_of(Input& in, std::size_t B, std::size_t H, std::size_t Tq,
                               std::size_t Tk, int kind, bool perturb) {
  const std::size_t T = Tk;  // lengths count keys
  attnscope::Mask mask;
  const std::uint8_t which = in.byte();
  mask.causal = which & 1;
  if (which & 2) {
    const std::size_t n = perturb && in.flag() ? B + 1 : B;
    for (std::size_t b = 0; b < n; ++b) {
      const std::uint8_t l = in.byte();
      // Mostly in [0, T]; sometimes past T or huge.
      mask.lengths.push_back(l < 240 ? l % (T + 1)
                                     : (l < 250 ? T + 1 : std::numeric_limits<std::size_t>::max()));
    }
  }
  if (which & 4) {
    attnscope::Shape s = mask_shape(in, B, H, Tq, Tk, perturb);
    std::size_t n = 1;
    for (std::size_t d : s) n *= d;
    mask.additive.shape = s;
    mask.additive.data.resize(n);
    for (float& a : mask.additive.data) {
      a = in.byte() < 64 ? -std::numeric_limits<float>::infinity() : in.value(kind);
    }
  }
  if (which & 8) {
    attnscope::Shape s = mask_shape(in, B, H, Tq, Tk, perturb);
    std::size_t n = 1;
    for (std::size_t d : s) n *= d;
    mask.allowed.shape = s;
    mask.allowed.data.resize(n);
    // Any byte: the core must treat every non-zero as "may attend".
    for (auto& a : mask.allowed.data) a = in.byte() < 200 ? 1 : in.byte() % 3;
  }
  return mask;
}

inline attnscope::Mask mask_of(Input& in, std::size_t B, std::size_t H, std::size_t T, int kind,
                               bool perturb) {
  return mask_of(in, B, H, T, T, kind, perturb);
}

/// The variants: window (sometimes <= 0, which must be rejected) and sinks
/// (sometimes past Tk) on the mask; rope (sometimes with a bad base) and
/// ALiBi and a per-head bias (H, Tq, Tk) in the options.
inline void variants_of(Input& in, std::uint8_t which, std::size_t H, std::size_t Tq,
                        std::size_t Tk, int kind, attnscope::AttentionOptions& options) {
  if (which & 1) {
    options.rope.enabled = true;
    // Real bases, and bad ones that must be rejected. (Bases below 1 give
    // angles so large that float and double round them apart.)
    static const double kBases[] = {10000.0,
                                    500.0,
                                    2.0,
                                    1e6,
                                    0.0,
                                    -1.0,
                                    std::numeric_limits<double>::infinity(),
                                    std::numeric_limits<double>::quiet_NaN()};
    options.rope.base = kBases[in.byte() % 8];
  }
  options.bias.alibi = (which >> 1) & 1;
  if ((which >> 2) & 1) options.mask.window = std::int64_t(in.byte() % 12) - 1;
  if ((which >> 3) & 1) options.mask.sinks = in.byte() % (Tk + 2);
  if ((which >> 4) & 1) {
    attnscope::Shape s = {H, Tq, Tk};
    std::size_t n = H * Tq * Tk;
    options.bias.values.shape = s;
    options.bias.values.data.resize(n);
    for (float& a : options.bias.values.data) a = in.value(kind);
  }
}

}  // namespace fuzz
