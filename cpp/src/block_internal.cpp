#include "block_internal.hpp"

#include "format.hpp"
#include "tensor_checks.hpp"

#include <cmath>

namespace attnscope::block_detail {

std::string format_value(double value) { return detail::format_general(value); }

void check_finite_tensor(const Tensor& t, const char* fn, const char* name) {
  attnscope::check_tensor(t, fn, name);
  check_finite(t, fn, name);
}

void check_input(const Tensor& x, const char* fn, const char* name) {
  if (x.rank() == 0) {
    throw Error(std::string(fn) + ": " + name +
                " has shape (), expected rank >= 1 (..., C)");
  }
  check_finite_tensor(x, fn, name);
}

void check_optional_vector(const Tensor& t, std::size_t n, const char* fn,
                           const char* name, const char* dim_name) {
  if (t.empty()) return;
  if (t.rank() != 1 || t.shape[0] != n) {
    throw Error(std::string(fn) + ": " + name + " has shape " +
                shape_to_string(t.shape) + ", expected (" + dim_name + "=" +
                std::to_string(n) + ")");
  }
  check_finite_tensor(t, fn, name);
}

std::size_t check_matrix(const Tensor& w, std::size_t rows, const char* fn,
                         const char* name, const char* rows_name) {
  if (w.rank() != 2 || w.shape[0] != rows || w.shape[1] == 0) {
    throw Error(std::string(fn) + ": " + name + " has shape " +
                shape_to_string(w.shape) + ", expected (" + rows_name + "=" +
                std::to_string(rows) + ", n) with n >= 1");
  }
  check_finite_tensor(w, fn, name);
  return w.shape[1];
}

void check_eps(float eps, const char* fn, const char* name) {
  if (!(eps > 0.0f) || !std::isfinite(eps)) {
    throw Error(std::string(fn) + ": " + name + " is " + format_value(eps) +
                ", expected a finite value > 0");
  }
}

void check_result_finite(const Tensor& t, const char* fn, const char* what) {
  for (float value : t.data) {
    if (!std::isfinite(value)) {
      throw Error(std::string(fn) + ": " + what +
                  " overflows float (values near 3.4e38); scale the inputs down");
    }
  }
}

Tensor make_output(const Shape& shape, const char* fn) {
  const std::string what = std::string(fn) + ": output";
  checked_element_count(shape, what.c_str());
  try {
    return Tensor::zeros(shape);
  } catch (const ResourceError&) {
    // Re-raised under the caller's name: "Tensor::zeros" means nothing to it.
    throw ResourceError(what + " of shape " + shape_to_string(shape) +
                        " cannot be allocated");
  }
}

}  // namespace attnscope::block_detail
