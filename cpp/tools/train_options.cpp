#include "train_options.hpp"

#include <cstdlib>
#include <functional>
#include <map>
#include <stdexcept>

namespace attnscope::tools {

namespace {

std::size_t parse_count(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || text[0] == '-')
    throw std::invalid_argument(flag + " must be a non-negative integer, got '" + text + "'");
  return static_cast<std::size_t>(value);
}

float parse_float(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const float value = std::strtof(text.c_str(), &end);
  if (text.empty() || *end != '\0')
    throw std::invalid_argument(flag + " must be a number, got '" + text + "'");
  return value;
}

}  // namespace

const char* train_usage() {
  return "usage: attnscope_train --train ids.u16 --heldout ids.u16 [--out model.safetensors]\n"
         "  [--loss-csv loss.csv] [--vocab 4096] [--layers 4] [--heads 4] [--d-model 128]\n"
         "  [--context 128] [--batch 8] [--steps 1000] [--warmup 100] [--lr 3e-3]\n"
         "  [--weight-decay 0.1] [--clip 1] [--min-lr-ratio 0.1] [--seed 1]\n"
         "  [--eval-every 100] [--eval-windows 64]\n";
}

TrainOptions parse_train_options(int argc, char** argv) {
  TrainOptions o;
  using Setter = std::function<void(const std::string&, const std::string&)>;
  auto count = [](std::size_t& field) -> Setter {
    return [&field](const std::string& f, const std::string& v) { field = parse_count(f, v); };
  };
  auto real = [](float& field) -> Setter {
    return [&field](const std::string& f, const std::string& v) { field = parse_float(f, v); };
  };
  auto text = [](std::string& field) -> Setter {
    return [&field](const std::string&, const std::string& v) { field = v; };
  };
  const std::map<std::string, Setter> setters = {
      {"--train", text(o.train_path)},
      {"--heldout", text(o.heldout_path)},
      {"--out", text(o.out_path)},
      {"--loss-csv", text(o.loss_csv_path)},
      {"--vocab", count(o.vocab)},
      {"--layers", count(o.layers)},
      {"--heads", count(o.heads)},
      {"--d-model", count(o.d_model)},
      {"--context", count(o.context)},
      {"--batch", count(o.batch)},
      {"--steps", count(o.steps)},
      {"--warmup", count(o.warmup)},
      {"--lr", real(o.lr)},
      {"--weight-decay", real(o.weight_decay)},
      {"--clip", real(o.clip)},
      {"--min-lr-ratio", real(o.min_lr_ratio)},
      {"--seed",
       [&o](const std::string& f, const std::string& v) {
         o.seed = static_cast<std::uint32_t>(parse_count(f, v));
       }},
      {"--eval-every", count(o.eval_every)},
      {"--eval-windows", count(o.eval_windows)},
  };
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    const auto setter = setters.find(flag);
    if (setter == setters.end()) throw std::invalid_argument("unknown flag " + flag);
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    setter->second(flag, argv[i + 1]);
  }
  if (o.train_path.empty()) throw std::invalid_argument("--train is required");
  if (o.heldout_path.empty()) throw std::invalid_argument("--heldout is required");
  if (o.eval_every == 0) throw std::invalid_argument("--eval-every must be at least 1");
  return o;
}

}  // namespace attnscope::tools
