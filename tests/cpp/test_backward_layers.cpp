// The layer backward passes (backward_layers.hpp) against analytic
// double-precision gradients and central finite differences of a double
// forward, at sizes around the SIMD width; the cross-entropy with huge logits.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "backward_layers.hpp"
#include "test_backward_reference.hpp"

using attnscope::testing::central_difference;
using attnscope::testing::random_doubles;
using attnscope::testing::require_close_all;

namespace {

const std::size_t kSizes[] = {1, 3, 4, 7, 8, 9, 16, 17};
constexpr double kPi = 3.14159265358979323846;

std::vector<float> floats(const std::vector<double>& x) { return {x.begin(), x.end()}; }

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

/// Every entry of `grad` against a central difference of f with respect to x.
void check_finite_differences(const std::function<double()>& f, std::vector<double>& x,
                              const std::vector<double>& grad, const char* what,
                              double tol = 1e-7) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    INFO(what << "[" << i << "] against a central difference");
    REQUIRE(std::fabs(central_difference(f, x, i) - grad[i]) <= tol * (1 + std::fabs(grad[i])));
  }
}

std::vector<double> layer_norm_double(const std::vector<double>& x, const std::vector<double>& g,
                                      const std::vector<double>& b, std::size_t rows,
                                      std::size_t n) {
  std::vector<double> y(x.size());
  for (std::size_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (std::size_t i = 0; i < n; ++i) mean += x[r * n + i] / double(n);
    for (std::size_t i = 0; i < n; ++i) var += std::pow(x[r * n + i] - mean, 2) / double(n);
    for (std::size_t i = 0; i < n; ++i) {
      y[r * n + i] = (x[r * n + i] - mean) / std::sqrt(var + 1e-5) * g[i] + b[i];
    }
  }
  return y;
}

double gelu_double(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / kPi) * (x + 0.044715 * x * x * x)));
}

}  // namespace

TEST_CASE("linear_backward: dx, dw, db", "[backward][layers]") {
  std::mt19937 rng(3);
  for (std::size_t rows : {1, 5}) {
    for (std::size_t in : kSizes) {
      for (std::size_t out : {1, 4, 9, 17}) {
        INFO("rows=" << rows << " in=" << in << " out=" << out);
        std::vector<double> x = random_doubles(rng, rows * in), w = random_doubles(rng, in * out),
                            b = random_doubles(rng, out), dy = random_doubles(rng, rows * out);
        auto loss = [&] {
          double s = 0;
          for (std::size_t r = 0; r < rows; ++r) {
            for (std::size_t j = 0; j < out; ++j) {
              double y = b[j];
              for (std::size_t i = 0; i < in; ++i) y += x[r * in + i] * w[i * out + j];
              s += y * dy[r * out + j];
            }
          }
          return s;
        };
        // Analytic: dx = dy·wᵀ, dw = xᵀ·dy, db = Σ_r dy.
        std::vector<double> dx(rows * in, 0), dw(in * out, 0), db(out, 0);
        for (std::size_t r = 0; r < rows; ++r) {
          for (std::size_t j = 0; j < out; ++j) {
            db[j] += dy[r * out + j];
            for (std::size_t i = 0; i < in; ++i) {
              dx[r * in + i] += dy[r * out + j] * w[i * out + j];
              dw[i * out + j] += x[r * in + i] * dy[r * out + j];
            }
          }
        }
        check_finite_differences(loss, x, dx, "dx");
        check_finite_differences(loss, w, dw, "dw");
        check_finite_differences(loss, b, db, "db");
        const std::vector<float> fx = floats(x), fw = floats(w), fdy = floats(dy);
        // dw and db accumulate: start them at 1.
        std::vector<float> gx(rows * in), gw(in * out, 1.0f), gb(out, 1.0f);
        attnscope::detail::linear_backward(fx.data(), fw.data(), fdy.data(), rows, in, out,
                                           gx.data(), gw.data(), gb.data());
        for (float& g : gw) g -= 1.0f;
        for (float& g : gb) g -= 1.0f;
        require_close_all(gx, dx, 1e-6, "dx");
        require_close_all(gw, dw, 1e-6, "dw");
        require_close_all(gb, db, 1e-6, "db");
      }
    }
  }
}

TEST_CASE("layer_norm_backward: dx, dgamma, dbeta", "[backward][layers]") {
  std::mt19937 rng(4);
  for (std::size_t n : kSizes) {
    const std::size_t rows = 3;
    INFO("n=" << n);
    std::vector<double> x = random_doubles(rng, rows * n, -2, 2),
                        g = random_doubles(rng, n, 0.5, 1.5), b = random_doubles(rng, n),
                        dy = random_doubles(rng, rows * n);
    auto loss = [&] { return dot(layer_norm_double(x, g, b, rows, n), dy); };
    // Analytic, from x̂ = (x − μ)/σ: dx = (g − mean g − x̂·mean(g·x̂))/σ with g = dy·γ.
    std::vector<double> dx(rows * n), dg(n, 0), dbeta(n, 0);
    for (std::size_t r = 0; r < rows; ++r) {
      double mean = 0, var = 0;
      for (std::size_t i = 0; i < n; ++i) mean += x[r * n + i] / double(n);
      for (std::size_t i = 0; i < n; ++i) var += std::pow(x[r * n + i] - mean, 2) / double(n);
      const double sigma = std::sqrt(var + 1e-5);
      double gm = 0, gxm = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const double xh = (x[r * n + i] - mean) / sigma, gi = dy[r * n + i] * g[i];
        gm += gi / double(n);
        gxm += gi * xh / double(n);
        dg[i] += dy[r * n + i] * xh;
        dbeta[i] += dy[r * n + i];
      }
      for (std::size_t i = 0; i < n; ++i) {
        const double xh = (x[r * n + i] - mean) / sigma;
        dx[r * n + i] = (dy[r * n + i] * g[i] - gm - xh * gxm) / sigma;
      }
    }
    check_finite_differences(loss, x, dx, "dx", 1e-6);
    check_finite_differences(loss, g, dg, "dgamma");
    check_finite_differences(loss, b, dbeta, "dbeta");
    const std::vector<float> fx = floats(x), fg = floats(g), fdy = floats(dy);
    std::vector<float> gx(rows * n, 0.0f), gg(n, 0.0f), gb(n, 0.0f);
    attnscope::detail::layer_norm_backward(fx.data(), fg.data(), fdy.data(), rows, n, 1e-5f,
                                           gx.data(), gg.data(), gb.data());
    require_close_all(gx, dx, 1e-5, "dx");
    require_close_all(gg, dg, 1e-6, "dgamma");
    require_close_all(gb, dbeta, 1e-6, "dbeta");
  }
}

TEST_CASE("gelu_tanh_backward", "[backward][layers]") {
  std::mt19937 rng(5);
  for (std::size_t n : kSizes) {
    std::vector<double> x = random_doubles(rng, n, -6, 6), dy = random_doubles(rng, n);
    auto loss = [&] {
      double s = 0;
      for (std::size_t i = 0; i < n; ++i) s += gelu_double(x[i]) * dy[i];
      return s;
    };
    std::vector<double> dx(n);
    const double k = std::sqrt(2 / kPi);
    for (std::size_t i = 0; i < n; ++i) {
      const double u = k * (x[i] + 0.044715 * x[i] * x[i] * x[i]);
      const double sech2 = 1 / std::pow(std::cosh(u), 2);
      dx[i] = dy[i] * (0.5 * (1 + std::tanh(u)) +
                       0.5 * x[i] * sech2 * k * (1 + 3 * 0.044715 * x[i] * x[i]));
    }
    check_finite_differences(loss, x, dx, "dx");
    const std::vector<float> fx = floats(x), fdy = floats(dy);
    std::vector<float> gx(n);
    attnscope::detail::gelu_tanh_backward(fx.data(), fdy.data(), n, gx.data());
    require_close_all(gx, dx, 1e-6, "dx");
  }
}

TEST_CASE("cross_entropy: loss and dlogits, stable for huge logits", "[backward][layers]") {
  std::mt19937 rng(6);
  for (std::size_t vocab : kSizes) {
    for (double spread : {1.0, 1e3, 3e37}) {
      INFO("vocab=" << vocab << " logits in ±" << spread);
      const std::size_t rows = 4;
      std::vector<double> z = random_doubles(rng, rows * vocab, -spread, spread);
      std::vector<std::int64_t> targets(rows);
      for (std::size_t r = 0; r < rows; ++r) targets[r] = std::int64_t((r * 7 + 3) % vocab);
      // log-sum-exp minus the target's logit, mean over rows; p − one-hot over rows.
      auto loss = [&] {
        double total = 0;
        for (std::size_t r = 0; r < rows; ++r) {
          double max = -INFINITY, sum = 0;
          for (std::size_t v = 0; v < vocab; ++v) max = std::max(max, z[r * vocab + v]);
          for (std::size_t v = 0; v < vocab; ++v) sum += std::exp(z[r * vocab + v] - max);
          total += max + std::log(sum) - z[r * vocab + std::size_t(targets[r])];
        }
        return total / double(rows);
      };
      std::vector<double> dz(rows * vocab);
      for (std::size_t r = 0; r < rows; ++r) {
        double max = -INFINITY, sum = 0;
        for (std::size_t v = 0; v < vocab; ++v) max = std::max(max, z[r * vocab + v]);
        for (std::size_t v = 0; v < vocab; ++v) sum += std::exp(z[r * vocab + v] - max);
        for (std::size_t v = 0; v < vocab; ++v) {
          dz[r * vocab + v] = (std::exp(z[r * vocab + v] - max) / sum -
                               (v == std::size_t(targets[r]) ? 1.0 : 0.0)) /
                              double(rows);
        }
      }
      if (spread == 1.0) check_finite_differences(loss, z, dz, "dlogits");
      const std::vector<float> fz = floats(z);
      std::vector<float> gz(rows * vocab);
      const double got =
          attnscope::detail::cross_entropy(fz.data(), targets.data(), rows, vocab, gz.data());
      REQUIRE(std::isfinite(got));
      REQUIRE(std::fabs(got - loss()) <= 1e-9 * (1 + std::fabs(loss())));
      require_close_all(gz, dz, 1e-7, "dlogits");
    }
  }
}

TEST_CASE("embedding_backward scatters into token and position rows", "[backward][layers]") {
  const std::size_t C = 5, V = 4, Tmax = 6;
  const std::vector<std::int64_t> tokens = {2, 0, 2, 3};
  std::mt19937 rng(8);
  const std::vector<double> dx = random_doubles(rng, tokens.size() * C);
  std::vector<double> dwte(V * C, 0), dwpe(Tmax * C, 0);
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    for (std::size_t i = 0; i < C; ++i) {
      dwte[std::size_t(tokens[t]) * C + i] += dx[t * C + i];
      dwpe[(1 + t) * C + i] += dx[t * C + i];
    }
  }
  const std::vector<float> fdx = floats(dx);
  std::vector<float> gwte(V * C, 0.0f), gwpe(Tmax * C, 0.0f);
  attnscope::detail::embedding_backward(tokens.data(), tokens.size(), 1, fdx.data(), C, gwte.data(),
                                        gwpe.data());
  require_close_all(gwte, dwte, 1e-7, "dwte");
  require_close_all(gwpe, dwpe, 1e-7, "dwpe");
}
