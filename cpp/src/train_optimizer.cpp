// AdamW (Loshchilov & Hutter: the decay is applied to the weights, not
// added to the gradient), global-norm clipping and the learning-rate schedule.
#include "train_optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace attnscope {

namespace {
constexpr double kPi = 3.14159265358979323846;
}

float learning_rate_at(const AdamWOptions& o, std::size_t step) {
  if (step < o.warmup) return o.lr * float(step + 1) / float(o.warmup);
  if (o.total_steps <= o.warmup) return o.lr;
  const double progress = std::min(1.0, double(step - o.warmup) / double(o.total_steps - o.warmup));
  const double floor = double(o.lr) * o.min_lr_ratio;
  return static_cast<float>(floor + 0.5 * (1.0 + std::cos(kPi * progress)) * (o.lr - floor));
}

}  // namespace attnscope

namespace attnscope::detail {

void check_adamw_options(const AdamWOptions& o, const char* fn) {
  auto fail = [&](const char* name, double value, const char* expected) {
    throw Error(std::string(fn) + ": " + name + " is " + std::to_string(value) + ", expected " +
                expected);
  };
  if (!(std::isfinite(o.lr) && o.lr > 0)) fail("lr", o.lr, "a finite number > 0");
  if (!(o.beta1 >= 0 && o.beta1 < 1)) fail("betas[0]", o.beta1, "a number in [0, 1)");
  if (!(o.beta2 >= 0 && o.beta2 < 1)) fail("betas[1]", o.beta2, "a number in [0, 1)");
  if (!(std::isfinite(o.eps) && o.eps > 0)) fail("eps", o.eps, "a finite number > 0");
  if (!(std::isfinite(o.weight_decay) && o.weight_decay >= 0)) {
    fail("weightDecay", o.weight_decay, "a finite number >= 0");
  }
  if (!(std::isfinite(o.clip) && o.clip >= 0))
    fail("clip", o.clip, "a finite number >= 0 (0 = none)");
  if (!(o.min_lr_ratio >= 0 && o.min_lr_ratio <= 1)) {
    fail("minLrRatio", o.min_lr_ratio, "a number in [0, 1]");
  }
}

double clip_gradients(std::vector<std::vector<float>>& gradients, float clip) {
  double sum = 0.0;
  for (const std::vector<float>& g : gradients) {
    for (float x : g) sum += double(x) * x;
  }
  const double norm = std::sqrt(sum);
  if (clip > 0 && norm > clip) {
    const float factor = static_cast<float>(clip / (norm + 1e-6));
    for (std::vector<float>& g : gradients) {
      for (float& x : g) x *= factor;
    }
  }
  return norm;
}

void adamw_update(float* w, const float* g, float* m, float* v, std::size_t n, float lr,
                  const AdamWOptions& o, std::size_t t, bool decay) {
  const double correction1 = 1.0 - std::pow(double(o.beta1), double(t));
  const double correction2 = 1.0 - std::pow(double(o.beta2), double(t));
  const float step = static_cast<float>(lr / correction1);
  const float inv_sqrt_correction2 = static_cast<float>(1.0 / std::sqrt(correction2));
  const float keep = decay ? 1.0f - lr * o.weight_decay : 1.0f;
  for (std::size_t i = 0; i < n; ++i) {
    m[i] = o.beta1 * m[i] + (1.0f - o.beta1) * g[i];
    v[i] = o.beta2 * v[i] + (1.0f - o.beta2) * g[i] * g[i];
    w[i] = w[i] * keep - step * m[i] / (std::sqrt(v[i]) * inv_sqrt_correction2 + o.eps);
  }
}

}  // namespace attnscope::detail
