// Backward passes of linear, LayerNorm, GELU, cross-entropy and embeddings
// (see backward_layers.hpp). The two products of the linear layer run on the
// matmul kernel over transposed copies.
#include "backward_layers.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "allocate.hpp"
#include "parallel_kernels.hpp"

namespace attnscope::detail {

namespace {

/// dst (cols, rows) = srcᵀ for src (rows, cols).
std::vector<float> transposed(const float* src, std::size_t rows, std::size_t cols,
                              const char* what) {
  std::vector<float> dst = allocate_zeros({rows * cols}, what).data;
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
  }
  return dst;
}

}  // namespace

void linear_backward(const float* x, const float* w, const float* dy, std::size_t rows,
                     std::size_t in, std::size_t out, float* dx, float* dw, float* db) {
  if (dx) {
    const std::vector<float> w_t = transposed(w, in, out, "linear_backward: wᵀ");
    parallel_matmul(dy, out, w_t.data(), in, dx, in, rows, out, in);
  }
  const std::vector<float> x_t = transposed(x, rows, in, "linear_backward: xᵀ");
  parallel_matmul(x_t.data(), rows, dy, out, dw, out, in, rows, out,
                  /*accumulate=*/true);
  if (db) {
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t j = 0; j < out; ++j) db[j] += dy[r * out + j];
    }
  }
}

void layer_norm_backward(const float* x, const float* gamma, const float* dy, std::size_t rows,
                         std::size_t n, float eps, float* dx, float* dgamma, float* dbeta) {
  // Each row's statistics and dx, rows in parallel; then dgamma and dbeta,
  // blocks of columns in parallel, each column summed over the rows in order
  // as on one thread (so the same bits at any thread count).
  std::vector<double> means(rows), inv_stds(rows);
  parallel_ranges(rows, 1, rows * n * 8, [&](std::size_t r0, std::size_t r1) {
    std::vector<double> normed(n);
    for (std::size_t r = r0; r < r1; ++r) {
      const float* xr = x + r * n;
      const float* dyr = dy + r * n;
      double mean = 0.0, var = 0.0;
      for (std::size_t i = 0; i < n; ++i) mean += xr[i];
      mean /= double(n);
      for (std::size_t i = 0; i < n; ++i) var += (xr[i] - mean) * (xr[i] - mean);
      const double inv_std = 1.0 / std::sqrt(var / double(n) + eps);
      means[r] = mean;
      inv_stds[r] = inv_std;
      // dx = inv_std · (g − mean(g) − x̂·mean(g·x̂)) with g = dy·gamma.
      double g_mean = 0.0, gx_mean = 0.0;
      for (std::size_t i = 0; i < n; ++i) {
        normed[i] = (xr[i] - mean) * inv_std;
        const double g = double(dyr[i]) * gamma[i];
        g_mean += g;
        gx_mean += g * normed[i];
      }
      g_mean /= double(n);
      gx_mean /= double(n);
      for (std::size_t i = 0; i < n; ++i) {
        const double g = double(dyr[i]) * gamma[i];
        dx[r * n + i] += static_cast<float>(inv_std * (g - g_mean - normed[i] * gx_mean));
      }
    }
  });
  parallel_ranges(n, 64, rows * n * 4, [&](std::size_t i0, std::size_t i1) {
    for (std::size_t r = 0; r < rows; ++r) {
      const float* xr = x + r * n;
      const float* dyr = dy + r * n;
      for (std::size_t i = i0; i < i1; ++i) {
        const double normed = (xr[i] - means[r]) * inv_stds[r];
        dgamma[i] += static_cast<float>(dyr[i] * normed);
        dbeta[i] += dyr[i];
      }
    }
  });
}

void gelu_tanh_backward(const float* x, const float* dy, std::size_t n, float* dx) {
  const double k = std::sqrt(2.0 / 3.14159265358979323846), c = 0.044715;
  parallel_ranges(n, 1024, n * 32, [&](std::size_t i0, std::size_t i1) {
    for (std::size_t i = i0; i < i1; ++i) {
      const double v = x[i];
      const double t = std::tanh(k * (v + c * v * v * v));
      const double slope = 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * k * (1.0 + 3.0 * c * v * v);
      dx[i] = static_cast<float>(dy[i] * slope);
    }
  });
}

double cross_entropy(const float* logits, const std::int64_t* targets, std::size_t rows,
                     std::size_t vocab, float* dlogits, const std::uint8_t* selected) {
  std::size_t count = rows;
  if (selected) count = static_cast<std::size_t>(std::count(selected, selected + rows, 1));
  const double inv_rows = 1.0 / double(count);
  // Rows in parallel, each loss kept apart and summed in row order after,
  // so the total is the same at any thread count.
  std::vector<double> losses(rows, 0.0);
  parallel_ranges(rows, 1, rows * vocab * 16, [&](std::size_t r0, std::size_t r1) {
    for (std::size_t r = r0; r < r1; ++r) {
      const float* z = logits + r * vocab;
      if (selected && !selected[r]) {
        if (dlogits) std::fill(dlogits + r * vocab, dlogits + (r + 1) * vocab, 0.0f);
        continue;
      }
      const float max = *std::max_element(z, z + vocab);
      double sum = 0.0;
      for (std::size_t v = 0; v < vocab; ++v) sum += std::exp(double(z[v]) - max);
      const std::size_t target = static_cast<std::size_t>(targets[r]);
      losses[r] = std::log(sum) - (double(z[target]) - max);
      if (!dlogits) continue;
      float* dz = dlogits + r * vocab;
      for (std::size_t v = 0; v < vocab; ++v) {
        const double p = std::exp(double(z[v]) - max) / sum;
        dz[v] = static_cast<float>((p - (v == target ? 1.0 : 0.0)) * inv_rows);
      }
    }
  });
  double total = 0.0;
  for (double loss : losses) total += loss;
  return total * inv_rows;
}

void embedding_backward(const std::int64_t* tokens, std::size_t count, std::size_t first_position,
                        const float* dx, std::size_t channels, float* dwte, float* dwpe) {
  for (std::size_t t = 0; t < count; ++t) {
    float* token_row = dwte + static_cast<std::size_t>(tokens[t]) * channels;
    float* position_row = dwpe + (first_position + t) * channels;
    for (std::size_t i = 0; i < channels; ++i) {
      token_row[i] += dx[t * channels + i];
      position_row[i] += dx[t * channels + i];
    }
  }
}

}  // namespace attnscope::detail
