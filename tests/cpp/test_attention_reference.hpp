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
  std::vector<double> output;   // (B, H, T, d_v)
  std::vector<double> weights;  // (B, H, T, T)
  std::vector<std::uint8_t> fully_masked;
};

inline std::size_t mask_index(std::size_t rank, std::size_t H, std::size_t T, std::size_t b,
                              std::size_t h, std::size_t i, std::size_t j) {
  const std::size_t slice = rank == 2 ? 0 : (rank == 3 ? b : b * H + h);
  return (slice * T + i) * T + j;
}

/// q, k (B,H,T,d_k), v (B,H,T,d_v) in double.
inline ReferenceResult reference_attention(const std::vector<double>& q,
                                           const std::vector<double>& k,
                                           const std::vector<double>& v, std::size_t B,
                                           std::size_t H, std::size_t T, std::size_t d_k,
                                           std::size_t d_v, double scale, const Mask& mask) {
  const double neg_inf = -std::numeric_limits<double>::infinity();
  ReferenceResult r;
  r.output.assign(B * H * T * d_v, 0.0);
  r.weights.assign(B * H * T * T, 0.0);
  r.fully_masked.assign(B * H * T, 0);
  std::vector<double> row(T);
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t h = 0; h < H; ++h) {
      const std::size_t head = b * H + h;
      for (std::size_t i = 0; i < T; ++i) {
        double max = neg_inf;
        for (std::size_t j = 0; j < T; ++j) {
          double s = 0.0;
          for (std::size_t p = 0; p < d_k; ++p) {
            s += q[(head * T + i) * d_k + p] * k[(head * T + j) * d_k + p];
          }
          s *= scale;
          bool hidden = (mask.causal && j > i) ||
                        (!mask.lengths.empty() && j >= mask.lengths[b]);
          if (!mask.additive.empty()) {
            s += mask.additive.data[mask_index(mask.additive.rank(), H, T, b, h, i, j)];
          }
          if (!mask.allowed.empty() &&
              !mask.allowed.data[mask_index(mask.allowed.shape.size(), H, T, b, h, i, j)]) {
            hidden = true;
          }
          row[j] = hidden ? neg_inf : s;
          max = std::max(max, row[j]);
        }
        if (max == neg_inf) {
          r.fully_masked[head * T + i] = 1;
          continue;
        }
        double sum = 0.0;
        for (std::size_t j = 0; j < T; ++j) sum += std::exp(row[j] - max);
        for (std::size_t j = 0; j < T; ++j) {
          const double w = std::exp(row[j] - max) / sum;
          r.weights[(head * T + i) * T + j] = w;
          for (std::size_t c = 0; c < d_v; ++c) {
            r.output[(head * T + i) * d_v + c] += w * v[(head * T + j) * d_v + c];
          }
        }
      }
    }
  }
  return r;
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
  const std::size_t H = w.heads;
  const std::size_t d_k = w.wq.shape[1] / H, d_v = w.wv.shape[1] / H;
  // Project straight into the per-head layout (B, H, T, d).
  auto project = [&](const Tensor& weight, const Tensor& bias, std::size_t d) {
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
  const std::vector<double> q = project(w.wq, w.bq, d_k), k = project(w.wk, w.bk, d_k),
                            v = project(w.wv, w.bv, d_v);
  double scale = 1.0 / std::sqrt(double(d_k));
  if (options.scale.mode == Scale::Mode::None) scale = 1.0;
  if (options.scale.mode == Scale::Mode::Custom) scale = options.scale.factor;
  ReferenceResult r = reference_attention(q, k, v, B, H, T, d_k, d_v, scale, options.mask);
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
      for (std::size_t c = 0; c < width; ++c) s += concat[row * width + c] * w.wo.data[c * out_width + o];
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
