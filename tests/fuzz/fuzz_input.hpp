// Turns the fuzzer's bytes into shapes, values and options. Every read past
// the end yields zeros, so any byte string is a valid (if dull) input.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <vector>

#include "attnscope/attnscope.hpp"

namespace fuzz {

class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  bool flag() { return byte() & 1; }
  /// Uniform-ish integer in [lo, hi].
  std::size_t range(std::size_t lo, std::size_t hi) { return lo + byte() % (hi - lo + 1); }

  /// Raw 32 bits as a float: reaches every NaN payload, denormal and inf.
  float raw_float() {
    std::uint32_t bits = 0;
    for (int i = 0; i < 4; ++i) bits = (bits << 8) | byte();
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }

  /// A value of the kind chosen for the whole call.
  float value(int kind) {
    switch (kind) {
      case 0:  // moderate: small integers and halves, exact in float
        return (static_cast<int>(byte()) - 128) / 16.0f;
      case 1:  // edge values, finite only
        return finite_edge();
      case 2:  // anything: NaN, ±inf, denormals
        return raw_float();
      default:  // mostly moderate with a few edge values mixed in
        return byte() < 16 ? special() : (static_cast<int>(byte()) - 128) / 8.0f;
    }
  }

  std::vector<float> values(std::size_t n, int kind) {
    std::vector<float> out(n);
    for (float& x : out) x = value(kind);
    return out;
  }

  bool empty() const { return pos_ >= size_; }

 private:
  float finite_edge() {
    static const float kTable[] = {0.0f,
                                   -0.0f,
                                   1.0f,
                                   -1.0f,
                                   std::numeric_limits<float>::denorm_min(),
                                   -std::numeric_limits<float>::denorm_min(),
                                   std::numeric_limits<float>::min(),
                                   std::numeric_limits<float>::max(),
                                   -std::numeric_limits<float>::max(),
                                   1e19f,
                                   -1e19f,
                                   1e30f,
                                   -1e30f,
                                   1e-30f,
                                   3.0e38f,
                                   88.7f,
                                   -88.7f,
                                   1e6f,
                                   -1e6f,
                                   0.5f};
    const std::uint8_t b = byte();
    if (b < 160) return kTable[b % (sizeof kTable / sizeof kTable[0])];
    const float f = raw_float();
    return std::isfinite(f) ? f : 0.0f;
  }

  float special() {
    static const float kTable[] = {std::numeric_limits<float>::quiet_NaN(),
                                   std::numeric_limits<float>::infinity(),
                                   -std::numeric_limits<float>::infinity(),
                                   std::numeric_limits<float>::denorm_min(),
                                   std::numeric_limits<float>::max(),
                                   -0.0f,
                                   1e30f};
    return kTable[byte() % (sizeof kTable / sizeof kTable[0])];
  }

  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

/// Every float finite?
inline bool all_finite(const std::vector<float>& v) {
  for (float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

[[noreturn]] inline void finding(const char* what) {
  std::fprintf(stderr, "FINDING: %s\n", what);
  std::abort();
}

inline void require(bool ok, const char* what) {
  if (!ok) finding(what);
}

/// Shape of n dims, each in [1, cap]; with `perturb`, one dim may become 0
/// or be off by one so the core's shape checks get exercised.
inline attnscope::Shape shape_of(Input& in, std::initializer_list<std::size_t> dims, bool perturb) {
  attnscope::Shape s(dims);
  if (perturb && !s.empty()) {
    const std::size_t i = in.byte() % s.size();
    switch (in.byte() % 3) {
      case 0:
        s[i] = 0;
        break;
      case 1:
        s[i] += 1;
        break;
      default:
        s[i] = s[i] > 1 ? s[i] - 1 : 2;
        break;
    }
  }
  return s;
}

/// A tensor whose data size normally matches its shape; with `mismatch`
/// the data is one value short or long (the public fields allow that).
inline attnscope::Tensor tensor_of(Input& in, attnscope::Shape shape, int kind, bool mismatch) {
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;
  if (mismatch) n = in.flag() ? n + 1 : (n ? n - 1 : 1);
  attnscope::Tensor t;
  t.shape = std::move(shape);
  t.data = in.values(n, kind);
  return t;
}

/// Runs fn; attnscope::Error (and its ResourceError) is the only allowed
/// exception. Returns true if fn returned normally.
template <class Fn>
bool run_expecting_only_library_errors(Fn&& fn) {
  try {
    fn();
    return true;
  } catch (const attnscope::Error&) {
    return false;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FINDING: unexpected std::exception: %s\n", e.what());
    std::abort();
  } catch (...) {
    finding("unexpected non-std exception");
  }
}

}  // namespace fuzz
