// One training step (forward, backward, AdamW) of a small GPT-2 in thread
// CPU time: the native side of web/bench/train-bench.mjs, which runs the
// same shapes in wasm and TF.js. Each step takes the next of a fixed list of
// random batches of B sequences of T + 1 tokens (T positions predict).
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "attnscope/train.hpp"
#include "bench_util.hpp"

namespace attnscope::bench {

void bench_train(std::size_t layers, std::size_t heads, std::size_t d_model, std::size_t vocab,
                 std::size_t length, std::size_t batch_size) {
  const Gpt2Config config{layers, heads, d_model, vocab, length};
  Gpt2Model model(config);
  initialize_gpt2(model, 1);
  AdamWOptions options;
  options.lr = 1e-3f;
  options.weight_decay = 0.1f;
  options.clip = 1.0f;
  Gpt2Trainer trainer(model, options);
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::int64_t> token(0, static_cast<std::int64_t>(vocab) - 1);
  std::vector<std::int64_t> batch(batch_size * (length + 1));
  double loss = 0;
  const auto step = [&] {
    for (std::int64_t& t : batch) t = token(rng);
    loss = trainer.step(batch, batch_size).loss;
  };
  const Timing t = measure(step, 3000.0, 3, 20);
  std::printf(
      "train step (layers %zu, heads %zu, C %zu, V %zu, T %zu, B %zu): %.2f ms median of %zu "
      "(last loss %.4f)\n",
      layers, heads, d_model, vocab, length, batch_size, t.median_ms, t.reps, loss);
}

}  // namespace attnscope::bench
