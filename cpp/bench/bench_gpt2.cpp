// GPT-2 small's shape (12 layers, 12 heads, C = 768, V = 50 257, 1 024
// positions) with random weights: a whole forward pass without trace at
// T = 128 and 512, and decoding from 128 to 256 tokens through the key/value
// cache, in thread CPU time.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "attnscope/gpt2.hpp"
#include "attnscope/train.hpp"
#include "bench_util.hpp"

namespace attnscope::bench {

void bench_gpt2(std::size_t layers) {
  const Gpt2Config config{layers, 12, 768, 50257, 1024};
  // GPT-2's own initialisation (train.hpp): realistic spreads for the kernels.
  Gpt2Model model(config);
  initialize_gpt2(model, 1);
  auto tokens = [&](std::size_t n) {
    std::vector<std::int64_t> t(n);
    for (std::size_t i = 0; i < n; ++i) t[i] = static_cast<std::int64_t>((i * 7919) % 50257);
    return t;
  };
  std::printf("\nGPT-2 small shape, %zu layers, random weights\n", layers);
  for (std::size_t T : {128u, 512u}) {
    const auto input = tokens(T);
    const Timing t = measure([&] { model.forward(input, false); }, 10000.0, 1, 5);
    std::printf("  forward T=%-4zu (no trace)  %9.1f ms  (%zu runs)\n", T, t.median_ms, t.reps);
  }
  Gpt2Cache cache(config, 256);
  const auto prompt = tokens(128);
  const double prompt_ms = time_ms([&] { model.step(cache, prompt); });
  const double decode_ms = time_ms([&] {
    for (std::size_t i = 0; i < 128; ++i) model.step(cache, {static_cast<std::int64_t>(i)});
  });
  std::printf("  prompt of 128 into the cache   %9.1f ms\n", prompt_ms);
  std::printf("  decode 128 → 256               %9.1f tokens/s\n", 128.0 / (decode_ms / 1000.0));
}

}  // namespace attnscope::bench
