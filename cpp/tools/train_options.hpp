// The command line of attnscope_train: `--name value` pairs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace attnscope::tools {

struct TrainOptions {
  std::string train_path, heldout_path;  // little-endian uint16 token ids
  std::string out_path = "model.safetensors", loss_csv_path = "loss.csv";
  std::size_t vocab = 4096, layers = 4, heads = 4, d_model = 128, context = 128;
  std::size_t batch = 8, steps = 1000, warmup = 100;
  float lr = 3e-3f, weight_decay = 0.1f, clip = 1.0f, min_lr_ratio = 0.1f;
  std::uint32_t seed = 1;
  std::size_t eval_every = 100;   // steps between held-out evaluations
  std::size_t eval_windows = 64;  // held-out windows in each periodic evaluation
};

/// Throws std::invalid_argument naming the flag for an unknown flag, a
/// missing or malformed value, or a missing --train / --heldout.
TrainOptions parse_train_options(int argc, char** argv);

/// The usage text.
const char* train_usage();

}  // namespace attnscope::tools
