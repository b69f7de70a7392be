// GPT-2's logit lens (nostalgebraist 2020): the residual stream after each
// block read as if it were the last, through ln_f and the tied wte, and the
// top tokens of the softmax of those logits.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "allocate.hpp"
#include "gpt2_internal.hpp"

namespace attnscope::detail {

Gpt2LogitLens gpt2_logit_lens(const Gpt2Config& c, const Gpt2Weights& w, const Gpt2Trace& trace,
                              std::size_t k) {
  const std::size_t L = c.layers, C = c.d_model, V = c.vocab_size;
  const std::size_t T = trace.hidden[0].shape[0];
  Gpt2LogitLens lens{allocate_zeros({L, T, k}, "gpt2: logit lens ids"),
                     allocate_zeros({L, T, k}, "gpt2: logit lens probabilities")};
  std::vector<float> normed = allocate_zeros({T * C}, "gpt2: logit lens LayerNorm").data;
  std::vector<float> logits = allocate_zeros({T * V}, "gpt2: logit lens logits").data;
  std::vector<std::size_t> order(V);
  for (std::size_t l = 0; l < L; ++l) {
    // hidden[l + 1] is the stream after block l; the last entry already
    // went through ln_f, so the last layer decodes exactly as forward does.
    const float* decoded = trace.hidden[l + 1].data.data();
    if (l + 1 < L) {
      gpt2_layer_norm_rows(decoded, T, C, w.lnf_gamma, w.lnf_beta, normed.data());
      decoded = normed.data();
    }
    gpt2_logits(decoded, T, w.wte, V, C, logits.data());
    for (std::size_t t = 0; t < T; ++t) {
      const float* row = logits.data() + t * V;
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::partial_sort(order.begin(), order.begin() + k, order.end(),
                        [row](std::size_t a, std::size_t b) {
                          return row[a] > row[b] || (row[a] == row[b] && a < b);
                        });
      const double max = row[order[0]];
      double sum = 0;
      for (std::size_t v = 0; v < V; ++v) sum += std::exp(double(row[v]) - max);
      for (std::size_t r = 0; r < k; ++r) {
        const std::size_t at = (l * T + t) * k + r;
        lens.ids.data[at] = static_cast<float>(order[r]);
        lens.probabilities.data[at] = static_cast<float>(std::exp(row[order[r]] - max) / sum);
      }
    }
  }
  return lens;
}

}  // namespace attnscope::detail
