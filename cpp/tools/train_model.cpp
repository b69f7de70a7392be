// attnscope_train: trains a GPT-2 (gpt2.hpp, train.hpp) from GPT-2's
// initialisation on a file of token ids, logs the training and held-out
// loss to a CSV, and saves the weights as .safetensors.
//
// Batches are windows of context + 1 tokens at offsets drawn from
// std::mt19937_64 seeded with --seed, so a seed and the same files give the
// same weights on a given build. The held-out loss is the mean next-token
// cross-entropy (nats) over windows that do not overlap: a fixed, evenly
// spaced subset every --eval-every steps, and all of them at the end.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnscope/gpt2.hpp"
#include "attnscope/train.hpp"
#include "save_safetensors.hpp"
#include "train_options.hpp"

namespace attnscope::tools {
namespace {

std::vector<std::int64_t> read_token_ids(const std::string& path, std::size_t vocab) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  const std::vector<unsigned char> bytes{std::istreambuf_iterator<char>(in), {}};
  if (bytes.size() % 2 != 0) throw std::runtime_error(path + " has an odd number of bytes");
  std::vector<std::int64_t> ids(bytes.size() / 2);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ids[i] = bytes[2 * i] | (bytes[2 * i + 1] << 8);
    if (static_cast<std::size_t>(ids[i]) >= vocab)
      throw std::runtime_error(path + ": token " + std::to_string(ids[i]) + " at " +
                               std::to_string(i) + " is not below --vocab " +
                               std::to_string(vocab));
  }
  return ids;
}

/// Mean cross-entropy of predicting window[t + 1] from window[0..t].
double window_loss(const Gpt2Model& model, const std::vector<std::int64_t>& ids, std::size_t start,
                   std::size_t length) {
  const std::vector<std::int64_t> input(ids.begin() + start, ids.begin() + start + length);
  const Tensor logits = model.forward(input, false).logits;
  const std::size_t vocab = model.config().vocab_size;
  double total = 0;
  for (std::size_t t = 0; t < length; ++t) {
    const float* row = logits.data.data() + t * vocab;
    const float top = *std::max_element(row, row + vocab);
    double sum = 0;
    for (std::size_t v = 0; v < vocab; ++v) sum += std::exp(static_cast<double>(row[v] - top));
    total += std::log(sum) + top - row[ids[start + t + 1]];
  }
  return total / static_cast<double>(length);
}

/// Mean loss over `count` evenly spaced windows that do not overlap (all
/// of them when count is 0 or larger than their number).
double heldout_loss(const Gpt2Model& model, const std::vector<std::int64_t>& ids,
                    std::size_t context, std::size_t count) {
  const std::size_t windows = (ids.size() - 1) / context;
  if (count == 0 || count > windows) count = windows;
  double total = 0;
  for (std::size_t i = 0; i < count; ++i)
    total += window_loss(model, ids, (i * windows / count) * context, context);
  return total / static_cast<double>(count);
}

int run(const TrainOptions& o) {
  const auto train = read_token_ids(o.train_path, o.vocab);
  const auto heldout = read_token_ids(o.heldout_path, o.vocab);
  if (train.size() <= o.context + 1 || heldout.size() <= o.context + 1)
    throw std::runtime_error("the token files must hold more than --context + 1 tokens");

  Gpt2Model model(Gpt2Config{o.layers, o.heads, o.d_model, o.vocab, o.context});
  initialize_gpt2(model, o.seed);
  AdamWOptions adamw;
  adamw.lr = o.lr;
  adamw.weight_decay = o.weight_decay;
  adamw.clip = o.clip;
  adamw.warmup = o.warmup;
  adamw.total_steps = o.steps;
  adamw.min_lr_ratio = o.min_lr_ratio;
  Gpt2Trainer trainer(model, adamw);

  std::size_t parameters = 0;
  for (const auto& name : model.weight_names()) {
    std::size_t size = 1;
    for (const std::size_t d : model.weight_shape(name)) size *= d;
    parameters += size;
  }
  std::printf("model: %zu layers, %zu heads, C = %zu, context %zu, vocab %zu: %zu parameters\n",
              o.layers, o.heads, o.d_model, o.context, o.vocab, parameters);
  std::printf("data: %zu training tokens, %zu held-out tokens\n", train.size(), heldout.size());

  std::ofstream csv(o.loss_csv_path);
  if (!csv) throw std::runtime_error("cannot open " + o.loss_csv_path + " for writing");
  csv << "step,tokens,learning_rate,train_loss,heldout_loss,seconds\n";

  std::mt19937_64 random(o.seed);
  std::uniform_int_distribution<std::size_t> offset(0, train.size() - (o.context + 1));
  const std::size_t window = o.context + 1;
  std::vector<std::int64_t> batch(o.batch * window);
  const auto started = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  double interval_loss = 0;
  std::size_t interval_steps = 0;
  float last_rate = 0;
  for (std::size_t step = 1; step <= o.steps; ++step) {
    for (std::size_t b = 0; b < o.batch; ++b) {
      const std::size_t at = offset(random);
      std::copy(train.begin() + at, train.begin() + at + window, batch.begin() + b * window);
    }
    const TrainStepResult result = trainer.step(batch, o.batch);
    if (!std::isfinite(result.loss))
      throw std::runtime_error("the loss is not finite at step " + std::to_string(step));
    interval_loss += result.loss;
    interval_steps += 1;
    last_rate = result.learning_rate;
    if (step % o.eval_every == 0 || step == o.steps) {
      const bool last = step == o.steps;
      const double held = heldout_loss(model, heldout, o.context, last ? 0 : o.eval_windows);
      const double train_mean = interval_loss / static_cast<double>(interval_steps);
      const double elapsed = seconds();
      const double tokens = static_cast<double>(step * o.batch * o.context);
      csv << step << ',' << static_cast<std::size_t>(tokens) << ',' << last_rate << ','
          << train_mean << ',' << held << ',' << elapsed << '\n';
      csv.flush();
      std::printf("step %6zu  lr %.2e  train %.4f  held-out %.4f%s  %.0f s  %.0f tokens/s\n", step,
                  last_rate, train_mean, held, last ? " (all windows)" : "", elapsed,
                  tokens / elapsed);
      std::fflush(stdout);
      interval_loss = 0;
      interval_steps = 0;
    }
  }
  save_safetensors(model,
                   {{"n_head", std::to_string(o.heads)},
                    {"format", "pt"},
                    {"trained_by", "attnscope_train"},
                    {"seed", std::to_string(o.seed)},
                    {"steps", std::to_string(o.steps)}},
                   o.out_path);
  std::printf("saved %s\n", o.out_path.c_str());
  return 0;
}

}  // namespace
}  // namespace attnscope::tools

int main(int argc, char** argv) {
  using namespace attnscope::tools;
  TrainOptions options;
  try {
    options = parse_train_options(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnscope_train: %s\n%s", e.what(), train_usage());
    return 2;
  }
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnscope_train: %s\n", e.what());
    return 1;
  }
}
