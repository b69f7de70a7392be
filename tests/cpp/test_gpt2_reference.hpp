// A plain, double-precision GPT-2 forward pass written from the model's
// definition (gpt2.hpp), independent of the library's kernels, and a model
// with random weights, for the GPT-2 tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "attnscope/gpt2.hpp"

namespace attnscope::testing {

struct Gpt2Reference {
  std::vector<double> logits;                   // (T, V)
  std::vector<std::vector<double>> attentions;  // per layer (H, T, T)
  std::vector<std::vector<double>> hidden;      // layers + 1 of (T, C)
};

/// A model whose weights are uniform in [-scale, scale), LayerNorm gains
/// around 1, filled through weight_data() and finished.
inline Gpt2Model random_gpt2(const Gpt2Config& config, std::uint32_t seed, float scale = 0.5f) {
  Gpt2Model model(config);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  for (const std::string& name : model.weight_names()) {
    const bool gain =
        name.find("ln_") != std::string::npos && name.find(".weight") != std::string::npos;
    float* data = model.weight_data(name);
    std::size_t n = 1;
    for (std::size_t d : model.weight_shape(name)) n *= d;
    for (std::size_t i = 0; i < n; ++i) data[i] = (gain ? 1.0f : 0.0f) + dist(rng);
  }
  model.finish();
  return model;
}

/// Weight `name` in row order, copied (the model keeps its blocks' matrices
/// in the products' panels once finished).
inline std::vector<float> weight_copy(const Gpt2Model& model, const std::string& name) {
  std::size_t n = 1;
  for (std::size_t d : model.weight_shape(name)) n *= d;
  std::vector<float> copy(n);
  model.copy_weight(name, copy.data());
  return copy;
}

inline Gpt2Reference gpt2_reference(const Gpt2Model& model,
                                    const std::vector<std::int64_t>& tokens) {
  const Gpt2Config& c = model.config();
  const std::size_t T = tokens.size(), C = c.d_model, H = c.heads, d = C / H, V = c.vocab_size;
  // Copies in row order: the model keeps its block matrices in panels, and
  // the forward compared with this reference reads them so.
  std::map<std::string, std::vector<float>> copies;
  auto w = [&](const std::string& name) -> const float* {
    std::vector<float>& copy = copies[name];
    if (copy.empty()) copy = weight_copy(model, name);
    return copy.data();
  };
  auto layer_norm = [&](const std::vector<double>& x, const std::string& prefix) {
    const float *g = w(prefix + ".weight"), *b = w(prefix + ".bias");
    std::vector<double> y(x.size());
    for (std::size_t t = 0; t < T; ++t) {
      double mean = 0, var = 0;
      for (std::size_t i = 0; i < C; ++i) mean += x[t * C + i];
      mean /= double(C);
      for (std::size_t i = 0; i < C; ++i) var += (x[t * C + i] - mean) * (x[t * C + i] - mean);
      const double inv = 1.0 / std::sqrt(var / double(C) + 1e-5);
      for (std::size_t i = 0; i < C; ++i) y[t * C + i] = (x[t * C + i] - mean) * inv * g[i] + b[i];
    }
    return y;
  };
  auto linear = [&](const std::vector<double>& x, const std::string& prefix, std::size_t in,
                    std::size_t out) {
    const float *W = w(prefix + ".weight"), *b = w(prefix + ".bias");
    std::vector<double> y(T * out);
    for (std::size_t t = 0; t < T; ++t) {
      for (std::size_t j = 0; j < out; ++j) {
        double s = b[j];
        for (std::size_t i = 0; i < in; ++i) s += x[t * in + i] * double(W[i * out + j]);
        y[t * out + j] = s;
      }
    }
    return y;
  };

  Gpt2Reference r;
  std::vector<double> x(T * C);
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t i = 0; i < C; ++i) {
      x[t * C + i] = double(w("wte.weight")[std::size_t(tokens[t]) * C + i]) +
                     double(w("wpe.weight")[t * C + i]);
    }
  }
  for (std::size_t l = 0; l < c.layers; ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
    r.hidden.push_back(x);
    const std::vector<double> qkv = linear(layer_norm(x, p + "ln_1"), p + "attn.c_attn", C, 3 * C);
    std::vector<double> weights(H * T * T, 0.0), heads(T * C, 0.0);
    for (std::size_t h = 0; h < H; ++h) {
      for (std::size_t i = 0; i < T; ++i) {
        double* row = &weights[(h * T + i) * T];
        double max = -INFINITY, sum = 0;
        for (std::size_t j = 0; j <= i; ++j) {
          double s = 0;
          for (std::size_t e = 0; e < d; ++e) {
            s += qkv[i * 3 * C + h * d + e] * qkv[j * 3 * C + C + h * d + e];
          }
          row[j] = s / std::sqrt(double(d));
          max = std::max(max, row[j]);
        }
        for (std::size_t j = 0; j <= i; ++j) sum += (row[j] = std::exp(row[j] - max));
        for (std::size_t j = 0; j <= i; ++j) {
          row[j] /= sum;
          for (std::size_t e = 0; e < d; ++e) {
            heads[i * C + h * d + e] += row[j] * qkv[j * 3 * C + 2 * C + h * d + e];
          }
        }
      }
    }
    r.attentions.push_back(weights);
    const std::vector<double> attn = linear(heads, p + "attn.c_proj", C, C);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += attn[i];
    std::vector<double> fc = linear(layer_norm(x, p + "ln_2"), p + "mlp.c_fc", C, 4 * C);
    const double k = std::sqrt(2.0 / 3.14159265358979323846);
    for (double& v : fc) v = 0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v)));
    const std::vector<double> mlp = linear(fc, p + "mlp.c_proj", 4 * C, C);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += mlp[i];
  }
  const std::vector<double> out = layer_norm(x, "ln_f");
  r.hidden.push_back(out);
  r.logits.assign(T * V, 0.0);
  const float* wte = w("wte.weight");
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t v = 0; v < V; ++v) {
      double s = 0;
      for (std::size_t i = 0; i < C; ++i) s += out[t * C + i] * double(wte[v * C + i]);
      r.logits[t * V + v] = s;
    }
  }
  return r;
}

}  // namespace attnscope::testing
