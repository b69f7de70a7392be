// Double-precision references for the backward tests: attention's forward
// and its analytic backward written from the definitions (independent of the
// library), central finite differences, and a closeness check.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <random>
#include <vector>

namespace attnscope::testing {

/// One attention problem: q (B, H, Tq, dk), k (B, Hkv, Tk, dk), v (B, Hkv, Tk, dv).
struct AttentionCase {
  std::size_t B = 1, H = 1, Hkv = 1, Tq = 1, Tk = 1, dk = 1, dv = 1;
  double scale = 1.0;
  bool causal = false;
  std::vector<std::size_t> lengths;  // padding: keys j >= lengths[b] hidden
  std::size_t window = 0;            // 0 = none; else |pos(i) − j| < window
  double rope_base = 0;  // 0 = none; else q at pos(i) and k at j rotated (attention.hpp)

  bool visible(std::size_t b, std::size_t i, std::size_t j) const {
    const std::size_t pos = Tk - Tq + i;
    if (causal && j > pos) return false;
    if (!lengths.empty() && j >= lengths[b]) return false;
    if (window && (pos > j ? pos - j : j - pos) >= window) return false;
    return true;
  }
};

/// x (heads, rows, d) with each row t rotated by `sign`·(first + t)·base^(−2p/d)
/// on its pairs (p, p + d/2), computed directly in double; sign −1 undoes it.
inline std::vector<double> rotate_double(const std::vector<double>& x, std::size_t rows,
                                         std::size_t first, std::size_t d, double base,
                                         double sign = 1.0) {
  std::vector<double> out = x;
  const std::size_t half = d / 2;
  for (std::size_t at = 0; at < x.size(); at += d) {
    const double pos = double(first + (at / d) % rows);
    for (std::size_t p = 0; p < half; ++p) {
      const double angle = sign * pos * std::pow(base, -2.0 * double(p) / double(d));
      const double a = x[at + p], b = x[at + p + half];
      out[at + p] = a * std::cos(angle) - b * std::sin(angle);
      out[at + p + half] = b * std::cos(angle) + a * std::sin(angle);
    }
  }
  return out;
}

/// Softmax weights (B, H, Tq, Tk) in double; a fully masked row is all 0.
/// With rope_base, of q and k rotated first.
inline std::vector<double> attention_weights_double(const AttentionCase& c,
                                                    const std::vector<double>& q_in,
                                                    const std::vector<double>& k_in) {
  const bool rope = c.rope_base > 0;
  const std::vector<double> q =
      rope ? rotate_double(q_in, c.Tq, c.Tk - c.Tq, c.dk, c.rope_base) : q_in;
  const std::vector<double> k = rope ? rotate_double(k_in, c.Tk, 0, c.dk, c.rope_base) : k_in;
  std::vector<double> w(c.B * c.H * c.Tq * c.Tk, 0.0);
  for (std::size_t b = 0; b < c.B; ++b) {
    for (std::size_t h = 0; h < c.H; ++h) {
      const std::size_t kvh = b * c.Hkv + h / (c.H / c.Hkv), head = b * c.H + h;
      for (std::size_t i = 0; i < c.Tq; ++i) {
        double* row = &w[(head * c.Tq + i) * c.Tk];
        double max = -INFINITY;
        for (std::size_t j = 0; j < c.Tk; ++j) {
          if (!c.visible(b, i, j)) continue;
          double s = 0;
          for (std::size_t e = 0; e < c.dk; ++e) {
            s += q[(head * c.Tq + i) * c.dk + e] * k[(kvh * c.Tk + j) * c.dk + e];
          }
          row[j] = s * c.scale;
          max = std::max(max, row[j]);
        }
        if (max == -INFINITY) continue;
        double sum = 0;
        for (std::size_t j = 0; j < c.Tk; ++j) {
          if (c.visible(b, i, j)) sum += (row[j] = std::exp(row[j] - max));
        }
        for (std::size_t j = 0; j < c.Tk; ++j) row[j] /= sum;
      }
    }
  }
  return w;
}

/// Output (B, H, Tq, dv) in double.
inline std::vector<double> attention_forward_double(const AttentionCase& c,
                                                    const std::vector<double>& q,
                                                    const std::vector<double>& k,
                                                    const std::vector<double>& v) {
  const std::vector<double> w = attention_weights_double(c, q, k);
  std::vector<double> out(c.B * c.H * c.Tq * c.dv, 0.0);
  for (std::size_t b = 0; b < c.B; ++b) {
    for (std::size_t h = 0; h < c.H; ++h) {
      const std::size_t kvh = b * c.Hkv + h / (c.H / c.Hkv), head = b * c.H + h;
      for (std::size_t i = 0; i < c.Tq; ++i) {
        for (std::size_t j = 0; j < c.Tk; ++j) {
          const double p = w[(head * c.Tq + i) * c.Tk + j];
          for (std::size_t e = 0; e < c.dv; ++e) {
            out[(head * c.Tq + i) * c.dv + e] += p * v[(kvh * c.Tk + j) * c.dv + e];
          }
        }
      }
    }
  }
  return out;
}

struct AttentionGradientsDouble {
  std::vector<double> dq, dk, dv;
};

/// The analytic backward in double, written from the chain rule on P and S.
/// With rope_base: the chain rule on the rotated q and k, whose gradients
/// the inverse rotation carries back (a rotation's transpose is its inverse).
inline AttentionGradientsDouble attention_backward_double(const AttentionCase& c,
                                                          const std::vector<double>& q_in,
                                                          const std::vector<double>& k_in,
                                                          const std::vector<double>& v,
                                                          const std::vector<double>& d_out) {
  const bool rope = c.rope_base > 0;
  const std::vector<double> q =
      rope ? rotate_double(q_in, c.Tq, c.Tk - c.Tq, c.dk, c.rope_base) : q_in;
  const std::vector<double> k = rope ? rotate_double(k_in, c.Tk, 0, c.dk, c.rope_base) : k_in;
  AttentionCase plain = c;
  plain.rope_base = 0;
  const std::vector<double> w = attention_weights_double(plain, q, k);
  AttentionGradientsDouble g{std::vector<double>(q.size(), 0.0), std::vector<double>(k.size(), 0.0),
                             std::vector<double>(v.size(), 0.0)};
  std::vector<double> dp(c.Tk);
  for (std::size_t b = 0; b < c.B; ++b) {
    for (std::size_t h = 0; h < c.H; ++h) {
      const std::size_t kvh = b * c.Hkv + h / (c.H / c.Hkv), head = b * c.H + h;
      for (std::size_t i = 0; i < c.Tq; ++i) {
        const double* p = &w[(head * c.Tq + i) * c.Tk];
        const double* go = &d_out[(head * c.Tq + i) * c.dv];
        double pdp = 0;
        for (std::size_t j = 0; j < c.Tk; ++j) {
          dp[j] = 0;
          for (std::size_t e = 0; e < c.dv; ++e) dp[j] += go[e] * v[(kvh * c.Tk + j) * c.dv + e];
          pdp += p[j] * dp[j];
        }
        for (std::size_t j = 0; j < c.Tk; ++j) {
          const double ds = p[j] * (dp[j] - pdp) * c.scale;
          for (std::size_t e = 0; e < c.dv; ++e) g.dv[(kvh * c.Tk + j) * c.dv + e] += p[j] * go[e];
          for (std::size_t e = 0; e < c.dk; ++e) {
            g.dq[(head * c.Tq + i) * c.dk + e] += ds * k[(kvh * c.Tk + j) * c.dk + e];
            g.dk[(kvh * c.Tk + j) * c.dk + e] += ds * q[(head * c.Tq + i) * c.dk + e];
          }
        }
      }
    }
  }
  if (rope) {
    g.dq = rotate_double(g.dq, c.Tq, c.Tk - c.Tq, c.dk, c.rope_base, -1.0);
    g.dk = rotate_double(g.dk, c.Tk, 0, c.dk, c.rope_base, -1.0);
  }
  return g;
}

/// Central difference of f at x[i], step h (x is restored).
inline double central_difference(const std::function<double()>& f, std::vector<double>& x,
                                 std::size_t i, double h = 1e-5) {
  const double saved = x[i];
  x[i] = saved + h;
  const double up = f();
  x[i] = saved - h;
  const double down = f();
  x[i] = saved;
  return (up - down) / (2 * h);
}

/// |got − want| <= tol · (1 + max|want|) everywhere, and no NaN.
template <class Got, class Want>
void require_close_all(const Got& got, const Want& want, double tol, const char* what) {
  REQUIRE(got.size() == want.size());
  double peak = 0;
  for (std::size_t i = 0; i < want.size(); ++i) peak = std::max(peak, std::fabs(double(want[i])));
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = double(got[i]), w = double(want[i]);
    if (!(std::fabs(g - w) <= tol * (1.0 + peak))) {
      INFO(what << "[" << i << "] = " << g << ", expected " << w << " (tolerance " << tol
                << " · (1 + " << peak << "))");
      REQUIRE(std::fabs(g - w) <= tol * (1.0 + peak));
    }
  }
}

inline std::vector<double> random_doubles(std::mt19937& rng, std::size_t n, double lo = -1.0,
                                          double hi = 1.0) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = static_cast<float>(dist(rng));  // representable as float
  return v;
}

}  // namespace attnscope::testing
