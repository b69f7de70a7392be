// RMSNorm and the SwiGLU feed-forward: the block parts of Llama-style models
// beside block.cpp's LayerNorm and ReLU/GELU feed-forward.
#include <cmath>
#include <string>

#include "attnscope/llama_block.hpp"
#include "block_internal.hpp"
#include "llama_block_internal.hpp"

namespace attnscope {

namespace detail {

Tensor rms_norm_unchecked(const Tensor& x, const Tensor& gamma, float eps, const char* fn) {
  Tensor y = allocate_zeros(x.shape, (std::string(fn) + ": output").c_str());
  const std::size_t C = x.shape.back();
  const std::size_t rows = C ? x.size() / C : 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* in = x.data.data() + r * C;
    float* out = y.data.data() + r * C;
    // Summed in double: a float sum of squares overflows for |x| > 1.8e19.
    double squares = 0.0;
    for (std::size_t c = 0; c < C; ++c) squares += double(in[c]) * in[c];
    const double inverse_rms = 1.0 / std::sqrt(squares / double(C) + double(eps));
    for (std::size_t c = 0; c < C; ++c) {
      const double g = gamma.empty() ? 1.0 : double(gamma.data[c]);
      out[c] = static_cast<float>(double(in[c]) * inverse_rms * g);
    }
  }
  return y;
}

Tensor swiglu_unchecked(const Tensor& x, const Linear& gate, const Linear& up, const Linear& down,
                        const char* fn) {
  Tensor hidden = linear_unchecked(x, gate, fn);
  const Tensor up_out = linear_unchecked(x, up, fn);
  for (std::size_t i = 0; i < hidden.size(); ++i) {
    const float z = hidden.data[i];
    // z·σ(z), written so that exp never overflows into inf/inf.
    const float silu =
        z >= 0.0f ? z / (1.0f + std::exp(-z)) : z * std::exp(z) / (1.0f + std::exp(z));
    hidden.data[i] = silu * up_out.data[i];
  }
  check_result_finite(hidden, fn, "SiLU(gate) * up");
  return linear_unchecked(hidden, down, fn);
}

std::size_t check_swiglu(const Linear& gate, const Linear& up, const Linear& down, std::size_t C,
                         const char* fn, const std::string& prefix) {
  const std::size_t hidden = check_linear(gate, C, fn, prefix + "gate.", "C");
  const std::size_t up_width = check_linear(up, C, fn, prefix + "up.", "C");
  if (up_width != hidden) {
    throw Error(std::string(fn) + ": " + prefix + "up.weight has shape " +
                shape_to_string(up.weight.shape) + ", expected (C=" + std::to_string(C) +
                ", hidden=" + std::to_string(hidden) + ") to match gate.weight");
  }
  return check_linear(down, hidden, fn, prefix + "down.", "hidden");
}

}  // namespace detail

Tensor rms_norm(const Tensor& x, const Tensor& gamma, float eps) {
  constexpr const char* kFn = "rms_norm";
  detail::check_input(x, kFn, "x");
  detail::check_optional_vector(gamma, x.shape.back(), kFn, "gamma", "C");
  detail::check_eps(eps, kFn, "eps");
  Tensor y = detail::rms_norm_unchecked(x, gamma, eps, kFn);
  detail::check_result_finite(y, kFn, "output");
  return y;
}

Tensor swiglu(const Tensor& x, const Linear& gate, const Linear& up, const Linear& down) {
  constexpr const char* kFn = "swiglu";
  detail::check_input(x, kFn, "x");
  detail::check_swiglu(gate, up, down, x.shape.back(), kFn, "");
  Tensor y = detail::swiglu_unchecked(x, gate, up, down, kFn);
  detail::check_result_finite(y, kFn, "output");
  return y;
}

}  // namespace attnscope
