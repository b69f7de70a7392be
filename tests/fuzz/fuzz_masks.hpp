// Masks from fuzz bytes: causal, padding lengths, additive and boolean, in
// every accepted rank and, with `perturb`, in wrong ones; and the score scale.
#pragma once

#include <limits>

#include "fuzz_input.hpp"

namespace fuzz {

inline attnscope::Shape mask_shape(Input& in, std::size_t B, std::size_t H, std::size_t T,
                                   bool perturb) {
  attnscope::Shape s;
  switch (in.byte() % 3) {
    case 0: s = {T, T}; break;
    case 1: s = {B, T, T}; break;
    default: s = {B, H, T, T}; break;
  }
  if (perturb && in.byte() % 4 == 0) s[in.byte() % s.size()] += 1;
  return s;
}

/// Every scale mode: 1/sqrt(d_k), none, or a custom factor that may be a
/// moderate value or any float bit pattern (NaN, +-inf, huge).
inline attnscope::Scale scale_of(Input& in, int kind) {
  switch (in.byte() % 4) {
    case 0: return attnscope::Scale::inv_sqrt_dk();
    case 1: return attnscope::Scale::none();
    case 2: return attnscope::Scale::custom(in.value(kind));
    default: return attnscope::Scale::custom(in.raw_float());
  }
}

inline attnscope::Mask mask_of(Input& in, std::size_t B, std::size_t H, std::size_t T, int kind,
                               bool perturb) {
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
    attnscope::Shape s = mask_shape(in, B, H, T, perturb);
    std::size_t n = 1;
    for (std::size_t d : s) n *= d;
    mask.additive.shape = s;
    mask.additive.data.resize(n);
    for (float& a : mask.additive.data) {
      a = in.byte() < 64 ? -std::numeric_limits<float>::infinity() : in.value(kind);
    }
  }
  if (which & 8) {
    attnscope::Shape s = mask_shape(in, B, H, T, perturb);
    std::size_t n = 1;
    for (std::size_t d : s) n *= d;
    mask.allowed.shape = s;
    mask.allowed.data.resize(n);
    // Any byte: the core must treat every non-zero as "may attend".
    for (auto& a : mask.allowed.data) a = in.byte() < 200 ? 1 : in.byte() % 3;
  }
  return mask;
}

}  // namespace fuzz
