// Transformer-block parts: linear, positional encoding, residual, LayerNorm,
// feed-forward. Each public function checks its arguments, then runs a kernel
// per row of the last dimension.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "attnscope/block.hpp"
#include "block_internal.hpp"
#include "format.hpp"
#include "kernels/activation.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/layer_norm.hpp"
#include "kernels/matmul.hpp"
#include "parallel_kernels.hpp"

namespace attnscope {

using detail::allocate_zeros;
using detail::check_eps;
using detail::check_input;
using detail::check_optional_vector;
using detail::check_result_finite;
using detail::format_value;

namespace {

using Arch = xsimd::default_arch;

void check_base(float base, const char* fn) {
  if (!(base > 0.0f) || !std::isfinite(base)) {
    throw Error(std::string(fn) + ": base is " + format_value(base) +
                ", expected a finite value > 0");
  }
}

}  // namespace

namespace detail {

std::size_t check_linear(const Linear& layer, std::size_t in, const char* fn,
                         const std::string& prefix, const char* in_name) {
  const std::string weight_name = prefix + "weight";
  const std::string bias_name = prefix + "bias";
  const std::size_t out = check_matrix(layer.weight, in, fn, weight_name.c_str(), in_name);
  check_optional_vector(layer.bias, out, fn, bias_name.c_str(), "out");
  return out;
}

void check_activation(Activation activation, const char* fn) {
  if (activation != Activation::ReLU && activation != Activation::GELU) {
    throw Error(std::string(fn) + ": activation is " +
                std::to_string(static_cast<int>(activation)) + ", expected ReLU or GELU");
  }
}

void check_sequence(const Tensor& x, const char* fn) {
  if (x.rank() != 2 && x.rank() != 3) {
    throw Error(std::string(fn) + ": x has shape " + shape_to_string(x.shape) +
                ", expected (T, C) or (B, T, C)");
  }
  check_input(x, fn, "x");
}

std::size_t check_block_input(const Tensor& x, const Tensor& wo, const char* fn) {
  check_sequence(x, fn);
  const std::size_t C = x.shape.back();
  if (wo.rank() != 2 || wo.shape[1] != C) {
    throw Error(std::string(fn) + ": attention.wo has shape " + shape_to_string(wo.shape) +
                ", expected (H*d_v, C=" + std::to_string(C) +
                ") so the attention output can be added to x");
  }
  return C;
}

Tensor linear_unchecked(const Tensor& x, const Linear& layer, const char* fn) {
  const std::size_t in = x.shape.back();
  const std::size_t out = layer.weight.shape[1];
  const std::size_t rows = x.size() / in;
  Shape shape = x.shape;
  shape.back() = out;
  Tensor y = allocate_zeros(shape, (std::string(fn) + ": output").c_str());
  // On the pool, split as parallel_kernels.hpp says: the same bits as one call. Every
  // row starts from the bias, and x·W accumulates onto it.
  detail::parallel_matmul(x.data.data(), in, layer.weight.data.data(), out, y.data.data(), out,
                          rows, in, out, /*accumulate=*/false,
                          layer.bias.empty() ? nullptr : layer.bias.data.data());
  return y;
}

Tensor add_unchecked(const Tensor& a, const Tensor& b) {
  Tensor y = a;
  for (std::size_t i = 0; i < y.size(); ++i) y.data[i] += b.data[i];
  return y;
}

Tensor layer_norm_unchecked(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                            const char* fn) {
  const std::size_t C = x.shape.back();
  // Absent gamma / beta mean 1 and 0; materialising them keeps one kernel.
  const std::vector<float> ones(gamma.empty() ? C : 0, 1.0f);
  const std::vector<float> zeros(beta.empty() ? C : 0, 0.0f);
  const float* g = gamma.empty() ? ones.data() : gamma.data.data();
  const float* b = beta.empty() ? zeros.data() : beta.data.data();
  Tensor y = allocate_zeros(x.shape, (std::string(fn) + ": output").c_str());
  const std::size_t rows = x.size() / C;
  for (std::size_t r = 0; r < rows; ++r) {
    kernels::layer_norm_row<Arch>(x.data.data() + r * C, g, b, eps, y.data.data() + r * C, C);
  }
  return y;
}

void activate_inplace(Tensor& t, Activation activation) {
  if (activation == Activation::ReLU) {
    kernels::relu<Arch>(t.data.data(), t.size());
  } else {
    kernels::gelu<Arch>(t.data.data(), t.size());
  }
}

}  // namespace detail

Tensor linear(const Tensor& x, const Linear& layer) {
  check_input(x, "linear", "x");
  detail::check_linear(layer, x.shape.back(), "linear", "", "in");
  Tensor y = detail::linear_unchecked(x, layer, "linear");
  check_result_finite(y, "linear", "the output");
  return y;
}

Tensor positional_encoding(std::size_t T, std::size_t C, float base) {
  if (T == 0 || C == 0) {
    throw Error("positional_encoding: size is (T=" + std::to_string(T) +
                ", C=" + std::to_string(C) + "), expected T >= 1 and C >= 1");
  }
  check_base(base, "positional_encoding");
  Tensor pe = allocate_zeros({T, C}, "positional_encoding: output");
  // Angles in double: at t in the thousands a float angle would already be
  // off by more than the float result can show.
  const double log_base = std::log(static_cast<double>(base));
  std::vector<double> inv_freq((C + 1) / 2);
  for (std::size_t i = 0; i < inv_freq.size(); ++i) {
    inv_freq[i] = std::exp(-static_cast<double>(2 * i) / static_cast<double>(C) * log_base);
  }
  for (std::size_t t = 0; t < T; ++t) {
    float* row = pe.data.data() + t * C;
    for (std::size_t c = 0; c < C; ++c) {
      const double angle = static_cast<double>(t) * inv_freq[c / 2];
      row[c] = static_cast<float>(c % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  }
  return pe;
}

Tensor add_positional_encoding(const Tensor& x, float base) {
  const char* fn = "add_positional_encoding";
  detail::check_sequence(x, fn);
  check_base(base, fn);
  const std::size_t T = x.shape[x.rank() - 2];
  const std::size_t C = x.shape.back();
  const Tensor pe = positional_encoding(T, C, base);
  // The same (T, C) encoding is added to every sequence of the batch.
  Tensor y = x;
  for (std::size_t offset = 0; offset < y.size(); offset += pe.size()) {
    for (std::size_t i = 0; i < pe.size(); ++i) y.data[offset + i] += pe.data[i];
  }
  check_result_finite(y, fn, "the output");
  return y;
}

Tensor residual_add(const Tensor& a, const Tensor& b) {
  check_input(a, "residual_add", "a");
  if (b.shape != a.shape) {
    throw Error("residual_add: b has shape " + shape_to_string(b.shape) + ", expected " +
                shape_to_string(a.shape) + " like a");
  }
  check_input(b, "residual_add", "b");
  Tensor y = detail::add_unchecked(a, b);
  check_result_finite(y, "residual_add", "the output");
  return y;
}

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps) {
  const char* fn = "layer_norm";
  check_input(x, fn, "x");
  const std::size_t C = x.shape.back();
  check_optional_vector(gamma, C, fn, "gamma", "C");
  check_optional_vector(beta, C, fn, "beta", "C");
  check_eps(eps, fn, "eps");
  Tensor y = detail::layer_norm_unchecked(x, gamma, beta, eps, fn);
  check_result_finite(y, fn, "the output");
  return y;
}

Tensor feed_forward(const Tensor& x, const Linear& first, const Linear& second,
                    Activation activation) {
  const char* fn = "feed_forward";
  check_input(x, fn, "x");
  const std::size_t hidden = detail::check_linear(first, x.shape.back(), fn, "first.", "C");
  detail::check_linear(second, hidden, fn, "second.", "hidden");
  detail::check_activation(activation, fn);
  Tensor h = detail::linear_unchecked(x, first, fn);
  check_result_finite(h, fn, "the first linear layer");
  detail::activate_inplace(h, activation);
  Tensor y = detail::linear_unchecked(h, second, fn);
  check_result_finite(y, fn, "the output");
  return y;
}

}  // namespace attnscope
