// A plain, double-precision multi-head attention written from the
// definitions, independent of the library's kernels, for the attention tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "attnscope/attention.hpp"

namespace attnscope::testing {

struct ReferenceResult {
  std::vector<double> output;   // (B, H, Tq, d_v)
  std::vector<double> weights;  // (B, H, Tq, Tk)
  std::vector<std::uint8_t> fully_masked;
};

/// Sizes: q (B, H, Tq, d_k), k (B, Hkv, Tk, d_k), v (B, Hkv, Tk, d_v).
struct ReferenceDims {
  std::size_t B = 1, H = 1, Hkv = 1, Tq = 1, Tk = 1, d_k = 1, d_v = 1;
};

/// Index of (b, h, i, j) in a mask tensor of rank 2 (Tq, Tk), 3 (B, Tq, Tk)
/// or 4 (B, H, Tq, Tk).
inline std::size_t mask_index(std::size_t rank, std::size_t H, std::size_t Tq, std::size_t Tk,
                              std::size_t b, std::size_t h, std::size_t i, std::size_t j) {
  const std::size_t slice = rank == 2 ? 0 : (rank == 3 ? b : b * H + h);
  return (slice * Tq + i) * Tk + j;
}
inline std::size_t mask_index(std::size_t rank, std::size_t H, std::size_t T, std::size_t b,
                              std::size_t h, std::size_t i, std::size_t j) {
  return mask_index(rank, H, T, T, b, h, i, j);
}

/// ALiBi slopes as the paper's code defines them: for a power of two n,
/// start = 2^(−2^−(log2 n − 3)) and slope h = start^(h+1); otherwise the
/// closest power of two's slopes, then the even-indexed slopes of twice it.
inline std::vector<double> reference_alibi_slopes(std::size_t n) {
  const double log2n = std::log2(double(n));
  if (std::floor(log2n) == log2n) {
    const double start = std::pow(2.0, -std::pow(2.0, -(log2n - 3.0)));
    std::vector<double> s(n);
    for (std::size_t h = 0; h < n; ++h) s[h] = std::pow(start, double(h + 1));
    return s;
  }
  const std::size_t closest = std::size_t(1) << std::size_t(std::floor(log2n));
  std::vector<double> s = reference_alibi_slopes(closest);
  const std::vector<double> twice = reference_alibi_slopes(2 * closest);
  for (std::size_t i = 0; s.size() < n; i += 2) s.push_back(twice[i]);
  return s;
}

/// Rotates rows of width d of `heads` heads (rows_per_head rows each) at
/// positions first + t, rotate-half pairs (p, p + d/2), in double.
inline std::vector<double> reference_rope(const std::vector<double>& x, std::size_t heads,
                                          std::size_t rows_per_head, std::size_t first,
                                          std::size_t d, double base) {
  std::vector<double> out(x.size());
  const std::size_t half = d / 2;
  for (std::size_t h = 0; h < heads; ++h) {
    for (std::size_t t = 0; t < rows_per_head; ++t) {
      const double pos = double(first + t);
      const double* src = x.data() + (h * rows_per_head + t) * d;
      double* dst = out.data() + (h * rows_per_head + t) * d;
      for (std::size_t p = 0; p < half; ++p) {
        const double angle = pos * std::pow(base, -2.0 * double(p) / double(d));
        dst[p] = src[p] * std::cos(angle) - src[p + half] * std::sin(angle);
        dst[p + half] = src[p + half] * std::cos(angle) + src[p] * std::sin(angle);
      }
    }
  }
  return out;
}

/// Attention with every variant, from the definitions: rope, GQA (head h
/// reads kv head h / (H / Hkv)), query i at pos = Tk − Tq + i, scores·scale
/// + ALiBi + bias + additive mask, hidden where causal (j > pos), padding,
/// the boolean mask or the window (|pos − j| >= W unless j < sinks) say so.
inline ReferenceResult reference_attention(std::vector<double> q, std::vector<double> k,
                                           const std::vector<double>& v, const ReferenceDims& d,
                                           double scale, const AttentionOptions& options) {
  const double neg_inf = -std::numeric_limits<double>::infinity();
  const Mask& mask = options.mask;
  if (options.rope.enabled) {
    q = reference_rope(q, d.B * d.H, d.Tq, d.Tk - d.Tq, d.d_k, options.rope.base);
    k = reference_rope(k, d.B * d.Hkv, d.Tk, 0, d.d_k, options.rope.base);
  }
  const std::vector<double> slopes = reference_alibi_slopes(d.H);
  const Tensor& bias = options.bias.values;
  ReferenceResult r;
  r.output.assign(d.B * d.H * d.Tq * d.d_v, 0.0);
  r.weights.assign(d.B * d.H * d.Tq * d.Tk, 0.0);
  r.fully_masked.assign(d.B * d.H * d.Tq, 0);
  std::vector<double> row(d.Tk);
  for (std::size_t b = 0; b < d.B; ++b) {
    for (std::size_t h = 0; h < d.H; ++h) {
      const std::size_t head = b * d.H + h;
      const std::size_t kv_head = b * d.Hkv + h / (d.H / d.Hkv);
      for (std::size_t i = 0; i < d.Tq; ++i) {
        const double pos = double(d.Tk - d.Tq + i);
        double max = neg_inf;
        for (std::size_t j = 0; j < d.Tk; ++j) {
          double s = 0.0;
          for (std::size_t p = 0; p < d.d_k; ++p) {
            s += q[(head * d.Tq + i) * d.d_k + p] * k[(kv_head * d.Tk + j) * d.d_k + p];
          }
          s *= scale;
          const double distance = std::abs(pos - double(j));
          if (options.bias.alibi) s -= slopes[h] * distance;
          if (!bias.empty()) {
            s += bias.data[((bias.rank() == 4 ? head : h) * d.Tq + i) * d.Tk + j];
          }
          bool hidden = (mask.causal && double(j) > pos) ||
                        (!mask.lengths.empty() && j >= mask.lengths[b]) ||
                        (mask.window && distance >= double(*mask.window) && j >= mask.sinks);
          if (!mask.additive.empty()) {
            s += mask.additive.data[mask_index(mask.additive.rank(), d.H, d.Tq, d.Tk, b, h, i, j)];
          }
          if (!mask.allowed.empty() &&
              !mask.allowed
                   .data[mask_index(mask.allowed.shape.size(), d.H, d.Tq, d.Tk, b, h, i, j)]) {
            hidden = true;
          }
          row[j] = hidden ? neg_inf : s;
          max = std::max(max, row[j]);
        }
        if (max == neg_inf) {
          r.fully_masked[head * d.Tq + i] = 1;
          continue;
        }
        double sum = 0.0;
        for (std::size_t j = 0; j < d.Tk; ++j) sum += std::exp(row[j] - max);
        for (std::size_t j = 0; j < d.Tk; ++j) {
          const double w = std::exp(row[j] - max) / sum;
          r.weights[(head * d.Tq + i) * d.Tk + j] = w;
          for (std::size_t c = 0; c < d.d_v; ++c) {
            r.output[(head * d.Tq + i) * d.d_v + c] += w * v[(kv_head * d.Tk + j) * d.d_v + c];
          }
        }
      }
    }
  }
  return r;
}

/// q, k (B,H,T,d_k), v (B,H,T,d_v) in double: plain multi-head attention.
inline ReferenceResult reference_attention(const std::vector<double>& q,
                                           const std::vector<double>& k,
                                           const std::vector<double>& v, std::size_t B,
                                           std::size_t H, std::size_t T, std::size_t d_k,
                                           std::size_t d_v, double scale, const Mask& mask) {
  AttentionOptions options;
  options.mask = mask;
  return reference_attention(q, k, v, ReferenceDims{B, H, H, T, T, d_k, d_v}, scale, options);
}

inline std::vector<double> to_double(const std::vector<float>& x) {
  return std::vector<double>(x.begin(), x.end());
}

/// Multi-head self-attention in double: returns (B, T, C_out) (or
/// (B, T, H*d_v) without wo); x is (B, T, C) flattened.
inline std::vector<double> reference_self_attention(const std::vector<float>& x, std::size_t B,
                                                    std::size_t T, std::size_t C,
                                                    const SelfAttentionWeights& w,
                                                    const AttentionOptions& options,
                                                    ReferenceResult* heads = nullptr) {
  const std::size_t H = w.heads, Hkv = w.kv_heads ? w.kv_heads : w.heads;
  const std::size_t d_k = w.wq.shape[1] / H, d_v = w.wv.shape[1] / Hkv;
  // Project straight into the per-head layout (B, H, T, d).
  auto project = [&](const Tensor& weight, const Tensor& bias, std::size_t H, std::size_t d) {
    std::vector<double> out(B * H * T * d);
    const std::size_t width = H * d;
    for (std::size_t b = 0; b < B; ++b) {
      for (std::size_t t = 0; t < T; ++t) {
        for (std::size_t col = 0; col < width; ++col) {
          double s = bias.empty() ? 0.0 : bias.data[col];
          for (std::size_t c = 0; c < C; ++c) {
            s += double(x[(b * T + t) * C + c]) * weight.data[c * width + col];
          }
          const std::size_t h = col / d, dd = col % d;
          out[((b * H + h) * T + t) * d + dd] = s;
        }
      }
    }
    return out;
  };
  const std::vector<double> q = project(w.wq, w.bq, H, d_k), k = project(w.wk, w.bk, Hkv, d_k),
                            v = project(w.wv, w.bv, Hkv, d_v);
  double scale = 1.0 / std::sqrt(double(d_k));
  if (options.scale.mode == Scale::Mode::None) scale = 1.0;
  if (options.scale.mode == Scale::Mode::Custom) scale = options.scale.factor;
  ReferenceResult r =
      reference_attention(q, k, v, ReferenceDims{B, H, Hkv, T, T, d_k, d_v}, scale, options);
  const std::size_t width = H * d_v;
  std::vector<double> concat(B * T * width);
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t h = 0; h < H; ++h) {
      for (std::size_t t = 0; t < T; ++t) {
        for (std::size_t c = 0; c < d_v; ++c) {
          concat[(b * T + t) * width + h * d_v + c] = r.output[((b * H + h) * T + t) * d_v + c];
        }
      }
    }
  }
  if (heads) *heads = r;
  if (w.wo.empty()) return concat;
  const std::size_t out_width = w.wo.shape[1];
  std::vector<double> out(B * T * out_width);
  for (std::size_t row = 0; row < B * T; ++row) {
    for (std::size_t o = 0; o < out_width; ++o) {
      double s = w.bo.empty() ? 0.0 : w.bo.data[o];
      for (std::size_t c = 0; c < width; ++c)
        s += concat[row * width + c] * w.wo.data[c * out_width + o];
      out[row * out_width + o] = s;
    }
  }
  return out;
}

inline Tensor random_tensor(std::mt19937& rng, Shape shape, float lo = -1.0f, float hi = 1.0f) {
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> data(n);
  for (float& x : data) x = dist(rng);
  return Tensor(std::move(shape), std::move(data));
}

}  // namespace attnscope::testing
