// Rotary position embedding as a pre-pass: q and k are rotated once into
// scratch, and both paths then run unchanged on the rotated copies. That is
// O((H·Tq + Hkv·Tk)·d) work against the attention's O(H·Tq·Tk·d).
#include <cmath>
#include <vector>

#include "attention_internal.hpp"

namespace attnscope::detail {

std::vector<float> rotate_rope(const float* x, std::size_t heads, std::size_t rows_per_head,
                               std::size_t first_position, std::size_t d, double base,
                               const char* fn) {
  const std::size_t half = d / 2;
  // cos and sin of pos·base^(−2p/d) in double, one table for all heads.
  std::vector<float> cosines = allocate_floats(rows_per_head * half, fn);
  std::vector<float> sines = allocate_floats(rows_per_head * half, fn);
  std::vector<double> inverse_frequency(half);
  for (std::size_t p = 0; p < half; ++p) {
    inverse_frequency[p] = std::pow(base, -2.0 * double(p) / double(d));
  }
  for (std::size_t t = 0; t < rows_per_head; ++t) {
    const double pos = double(first_position + t);
    for (std::size_t p = 0; p < half; ++p) {
      const double angle = pos * inverse_frequency[p];
      cosines[t * half + p] = static_cast<float>(std::cos(angle));
      sines[t * half + p] = static_cast<float>(std::sin(angle));
    }
  }
  std::vector<float> out = allocate_floats(heads * rows_per_head * d, fn);
  for (std::size_t h = 0; h < heads; ++h) {
    for (std::size_t t = 0; t < rows_per_head; ++t) {
      const float* src = x + (h * rows_per_head + t) * d;
      float* dst = out.data() + (h * rows_per_head + t) * d;
      const float* c = cosines.data() + t * half;
      const float* s = sines.data() + t * half;
      for (std::size_t p = 0; p < half; ++p) {
        const float a = src[p], b = src[p + half];
        dst[p] = a * c[p] - b * s[p];
        dst[p + half] = b * c[p] + a * s[p];
      }
    }
  }
  return out;
}

}  // namespace attnscope::detail
