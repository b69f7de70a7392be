// The core alone in WebAssembly: attnscope's public C++ API linked into a
// bare module with no Embind and no JavaScript layer; inputs are prepared
// once inside the module and each call is one run. Compared with the package
// (engine.attention, engine.linear), the difference is what the bindings
// cost: copies across the boundary, input validation in JS, result objects.
// It also times the matmul kernels on their own (no checks, no allocation
// of the result), against which the benchmark measures "matmul parts".
// Built by scripts/bench.sh into build/bench-probe/; attention-bench.mjs
// uses it when present. A threaded twin (core-probe-threads, linked against
// the threaded library) runs the same calls on the core's pool of threads.
#include <algorithm>
#include <cstddef>
#include <exception>
#include <vector>

#include <emscripten/emscripten.h>

#include "attnscope/attention.hpp"
#include "attnscope/block.hpp"
#include "attnscope/threads.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/flash_attention.hpp"
#include "kernels/matmul.hpp"
#include "kernels/pack_keys.hpp"

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

// The kernels on their own.
struct MatmulProblem {
  std::size_t m = 0, k = 0, n = 0;
  std::vector<float> a, b, c;
} matmul_problem;

struct ProductsProblem {
  std::size_t heads = 0, T = 0, d = 0;
  std::vector<float> queries, values, packed_keys, scores, partial;
} products;

}  // namespace

extern "C" {

/// Runs the fast paths on `threads` threads (set_threads); 0 on success, 1
/// when the build cannot (the single-thread probe takes 1 only).
EMSCRIPTEN_KEEPALIVE int probe_set_threads(int threads) {
  try {
    attnscope::set_threads(std::size_t(threads));
    return 0;
  } catch (const std::exception&) {
    return 1;
  }
}

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

/// Prepares a decode step (fast path): one query per head, (1, H, 1, d),
/// against a cache of (1, Hkv, Tk, d) keys and values, causal.
EMSCRIPTEN_KEEPALIVE void probe_prepare_decode(int heads, int kv_heads, int Tk, int d) {
  const std::size_t kv = std::size_t(kv_heads) * Tk * d;
  q = attnscope::Tensor({1, std::size_t(heads), 1, std::size_t(d)},
                        filled(std::size_t(heads) * d, 1));
  const attnscope::Shape kv_shape{1, std::size_t(kv_heads), std::size_t(Tk), std::size_t(d)};
  k = attnscope::Tensor(kv_shape, filled(kv, 2));
  v = attnscope::Tensor(kv_shape, filled(kv, 3));
  options = {};
  options.mask.causal = true;
  options.trace = false;
}

/// Prepares linear: x (rows, in) · W (in, out), no bias.
EMSCRIPTEN_KEEPALIVE void probe_prepare_linear(int rows, int in_dim, int out_dim) {
  x = attnscope::Tensor({std::size_t(rows), std::size_t(in_dim)},
                        filled(std::size_t(rows) * in_dim, 4));
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

/// Prepares the matmul kernel alone on (m, k) · (k, n): what linear runs,
/// without its checks or its result's allocation.
EMSCRIPTEN_KEEPALIVE void probe_prepare_matmul(int m, int k, int n) {
  matmul_problem = {std::size_t(m),
                    std::size_t(k),
                    std::size_t(n),
                    filled(std::size_t(m) * k, 6),
                    filled(std::size_t(k) * n, 7),
                    std::vector<float>(std::size_t(m) * n)};
}

EMSCRIPTEN_KEEPALIVE int probe_run_matmul() {
  MatmulProblem& p = matmul_problem;
  attnscope::kernels::matmul_best(p.a.data(), p.k, p.b.data(), p.n, p.c.data(), p.n, p.m, p.k, p.n);
  return 0;
}

/// Prepares the two products of the flash kernel for (1, H, T, d), without
/// the softmax between them: per head, query tile and key tile,
/// S = Q·Kᵀ (kQueryTile × d · d × kKeyTile) and O += S·V (kQueryTile ×
/// kKeyTile · kKeyTile × d), with the same kernels, tiles and layouts.
EMSCRIPTEN_KEEPALIVE void probe_prepare_products(int heads, int T, int d) {
  using namespace attnscope::kernels;
  ProductsProblem& p = products;
  p = {std::size_t(heads), std::size_t(T), std::size_t(d)};
  // Shared by the heads (the timing is what matters), packed as the flash
  // kernel packs each query block.
  const std::vector<float> queries = filled(p.T * p.d, 8);
  p.queries.resize(p.T * p.d);
  pack_row_panels(queries.data(), p.d, p.T, p.d, p.queries.data());
  const std::vector<float> values = filled(p.T * p.d, 9);
  p.values.resize(packed_values_size(p.T, p.d));
  pack_value_panels(values.data(), p.T, p.d, p.values.data());
  const std::vector<float> keys = filled(p.T * p.d, 10);
  p.packed_keys.resize(packed_keys_size(p.T, p.d, kKeyTile));
  pack_key_tiles(keys.data(), p.T, p.d, kKeyTile, p.packed_keys.data());
  p.scores.resize(kQueryTile * kKeyTile);
  p.partial.resize(kQueryTile * p.d);
}

EMSCRIPTEN_KEEPALIVE int probe_run_products() {
  using namespace attnscope::kernels;
  using Arch = xsimd::default_arch;
  ProductsProblem& p = products;
  for (std::size_t h = 0; h < p.heads; ++h) {
    for (std::size_t q0 = 0; q0 < p.T; q0 += kQueryTile) {
      const std::size_t rows = std::min(kQueryTile, p.T - q0);
      std::fill(p.partial.begin(), p.partial.end(), 0.0f);
      for (std::size_t k0 = 0; k0 < p.T; k0 += kKeyTile) {
        const std::size_t cols = std::min(kKeyTile, p.T - k0);
        const float* key_tile = p.packed_keys.data() + (k0 / kKeyTile) * p.d * kKeyTile;
        matmul_with<Arch, kPackedA>(p.queries.data() + q0 * p.d, p.d,
                                    key_tile_panels(key_tile, p.d), p.scores.data(), kKeyTile, rows,
                                    p.d, cols);
        matmul_with<Arch, kKeyTile>(p.scores.data(), kKeyTile,
                                    value_panels(p.values.data(), p.T, k0), p.partial.data(), p.d,
                                    rows, cols, p.d, /*accumulate=*/true);
      }
    }
  }
  return 0;
}

}  // extern "C"
