// The core alone in WebAssembly: attnscope's public C++ API linked into a
// bare module with no Embind and no JavaScript layer; inputs are prepared
// once inside the module and each call is one run. Compared with the package
// (engine.attention, engine.linear), the difference is what the bindings
// cost: copies across the boundary, input validation in JS, result objects.
// Built by scripts/bench.sh into build/bench-probe/; attention-bench.mjs
// uses it when present.
#include <cstddef>
#include <exception>
#include <vector>

#include <emscripten/emscripten.h>

#include "attnscope/attention.hpp"
#include "attnscope/block.hpp"

namespace {

std::vector<float> filled(std::size_t n, unsigned seed) {
  std::vector<float> x(n);
  unsigned s = seed;
  for (auto& v : x) {
    s = s * 1664525u + 1013904223u;  // LCG: any spread of values will do
    v = static_cast<float>((s >> 8) & 0xffff) / 32768.0f - 1.0f;
  }
  return x;
}

// Inputs of the prepared problem; the run functions only compute, so the
// caller can time each run with its own clock.
attnscope::Tensor q, k, v, x;
attnscope::AttentionOptions options;
attnscope::Linear layer;

}  // namespace

extern "C" {

/// Prepares attention (fast path) on (1, H, T, d) inputs.
EMSCRIPTEN_KEEPALIVE void probe_prepare_attention(int heads, int T, int d, int causal) {
  const attnscope::Shape shape{1, std::size_t(heads), std::size_t(T), std::size_t(d)};
  const std::size_t n = std::size_t(heads) * T * d;
  q = attnscope::Tensor(shape, filled(n, 1));
  k = attnscope::Tensor(shape, filled(n, 2));
  v = attnscope::Tensor(shape, filled(n, 3));
  options = {};
  options.mask.causal = causal != 0;
  options.trace = false;
}

/// One run of the prepared attention; 0 on success, 1 on error.
EMSCRIPTEN_KEEPALIVE int probe_run_attention() {
  try {
    attnscope::attention(q, k, v, options);
    return 0;
  } catch (const std::exception&) {
    return 1;
  }
}

/// Prepares linear: x (rows, in) · W (in, out), no bias.
EMSCRIPTEN_KEEPALIVE void probe_prepare_linear(int rows, int in_dim, int out_dim) {
  x = attnscope::Tensor({std::size_t(rows), std::size_t(in_dim)}, filled(std::size_t(rows) * in_dim, 4));
  layer.weight = attnscope::Tensor({std::size_t(in_dim), std::size_t(out_dim)},
                                   filled(std::size_t(in_dim) * out_dim, 5));
}

/// One run of the prepared linear; 0 on success, 1 on error.
EMSCRIPTEN_KEEPALIVE int probe_run_linear() {
  try {
    attnscope::linear(x, layer);
    return 0;
  } catch (const std::exception&) {
    return 1;
  }
}

}  // extern "C"
