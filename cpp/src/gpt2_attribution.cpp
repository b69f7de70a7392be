// Attribution of a traced GPT-2 pass: value-norm weighted attention
// (Kobayashi et al. 2020) per layer and attention rollout (Abnar & Zuidema
// 2020) through the layers. Both are accumulated in double.
#include <cmath>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "allocate.hpp"
#include "gpt2_internal.hpp"
#include "kernels/matmul_panels.hpp"
#include "kernels/vector_matrix.hpp"

namespace attnscope::detail {

Tensor gpt2_value_norms(const Gpt2Config& c, const Tensor& weights, const Gpt2KeyValues& kv,
                        const float* proj_w, std::size_t proj_panels) {
  const std::size_t H = c.heads, C = c.d_model, d = C / H;
  const std::size_t T = weights.shape[1], keys = weights.shape[2];
  // ‖v_hj · W_O,h‖: what key j of head h would add to the residual stream
  // with all of the head's weight on it.
  std::vector<double> norms(H * keys);
  std::vector<float> row(C);
  for (std::size_t h = 0; h < H; ++h) {
    for (std::size_t j = 0; j < keys; ++j) {
      std::fill(row.begin(), row.end(), 0.0f);
      const float* value = kv.values + h * kv.head_stride + j * d;
      if (proj_panels) {  // rows h·d .. of c_proj: head h's part of W_O
        const kernels::PanelMatrix w{proj_w, C, C, proj_panels};
        kernels::vector_matrix_panels<xsimd::default_arch>(value, w, h * d, d, 0, C, row.data());
      } else {
        kernels::vector_matrix<xsimd::default_arch>(value, proj_w + h * d * C, d, C, row.data());
      }
      double sum = 0;
      for (float v : row) sum += double(v) * v;
      norms[h * keys + j] = std::sqrt(sum);
    }
  }
  Tensor out = allocate_zeros({H, T, keys}, "gpt2: value norms");
  for (std::size_t h = 0; h < H; ++h) {
    for (std::size_t i = 0; i < T; ++i) {
      for (std::size_t j = 0; j < keys; ++j) {
        const std::size_t at = (h * T + i) * keys + j;
        out.data[at] = static_cast<float>(weights.data[at] * norms[h * keys + j]);
      }
    }
  }
  return out;
}

std::vector<Tensor> gpt2_rollout(const std::vector<Tensor>& attentions) {
  std::vector<Tensor> out;
  if (attentions.empty()) return out;
  const std::size_t H = attentions[0].shape[0], T = attentions[0].shape[1];
  std::vector<double> rollout(T * T), layer(T * T), next(T * T);
  for (std::size_t l = 0; l < attentions.size(); ++l) {
    const std::vector<float>& a = attentions[l].data;
    // A = rows of (mean over heads + I), each renormalised to sum 1.
    for (std::size_t i = 0; i < T; ++i) {
      double sum = 0;
      for (std::size_t j = 0; j < T; ++j) {
        double mean = 0;
        for (std::size_t h = 0; h < H; ++h) mean += a[(h * T + i) * T + j];
        layer[i * T + j] = mean / double(H) + (i == j ? 1.0 : 0.0);
        sum += layer[i * T + j];
      }
      for (std::size_t j = 0; j < T; ++j) layer[i * T + j] /= sum;
    }
    if (l == 0) {
      rollout = layer;
    } else {
      std::fill(next.begin(), next.end(), 0.0);
      for (std::size_t i = 0; i < T; ++i) {
        for (std::size_t k = 0; k < T; ++k) {
          const double w = layer[i * T + k];
          if (w == 0) continue;  // causal: most of the upper triangle
          for (std::size_t j = 0; j < T; ++j) next[i * T + j] += w * rollout[k * T + j];
        }
      }
      rollout.swap(next);
    }
    Tensor t = allocate_zeros({T, T}, "gpt2: rollout");
    for (std::size_t i = 0; i < T * T; ++i) t.data[i] = static_cast<float>(rollout[i]);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace attnscope::detail
