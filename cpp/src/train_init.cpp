// GPT-2's initialisation from a seed (train.hpp). The normals are drawn by
// Box–Muller from std::mt19937's 32-bit outputs rather than with
// std::normal_distribution, whose algorithm differs between standard
// libraries (libstdc++ natively, libc++ under Emscripten).
#include <cmath>
#include <random>
#include <string>

#include "attnscope/train.hpp"

namespace attnscope {

namespace {

class NormalSource {
 public:
  explicit NormalSource(std::uint32_t seed) : rng_(seed) {}

  double next() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    // u1 in (0, 1] so that the log is finite; u2 in [0, 1).
    const double u1 = (double(rng_()) + 1.0) / 4294967296.0;
    const double u2 = double(rng_()) / 4294967296.0;
    const double radius = std::sqrt(-2.0 * std::log(u1));
    const double angle = 2.0 * 3.14159265358979323846 * u2;
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return radius * std::cos(angle);
  }

 private:
  std::mt19937 rng_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

void initialize_gpt2(Gpt2Model& model, std::uint32_t seed) {
  constexpr double kStd = 0.02;
  const double residual_std = kStd / std::sqrt(2.0 * double(model.config().layers));
  NormalSource normal(seed);
  for (const std::string& name : model.weight_names()) {
    const Shape& shape = model.weight_shape(name);
    std::size_t n = 1;
    for (std::size_t d : shape) n *= d;
    float* data = model.weight_data(name);
    const bool layer_norm = name.find("ln_") != std::string::npos;
    if (layer_norm || ends_with(name, ".bias")) {
      const float value = layer_norm && ends_with(name, ".weight") ? 1.0f : 0.0f;
      for (std::size_t i = 0; i < n; ++i) data[i] = value;
      continue;
    }
    const bool residual = ends_with(name, "c_proj.weight");
    const double std = residual ? residual_std : kStd;
    for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<float>(std * normal.next());
  }
  model.finish();
}

}  // namespace attnscope
