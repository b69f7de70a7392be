#include "checks.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "format.hpp"
#include "kernels/scan.hpp"

namespace attnscope::detail {

namespace {

// Every dimension >= 1, and `size` values for the shape.
void check_shape_holds(const Shape& shape, std::size_t size, const char* fn, const char* name) {
  const std::string what = std::string(fn) + ": " + name;
  for (std::size_t dim : shape) {
    if (dim == 0) {
      throw Error(what + " has shape " + shape_to_string(shape) +
                  ", every dimension must be at least 1");
    }
  }
  const std::size_t count = checked_element_count(shape, what.c_str());
  if (count != size) {
    throw Error(what + " has shape " + shape_to_string(shape) + " (" + std::to_string(count) +
                " values) but holds " + std::to_string(size) + " values");
  }
}

void check_finite_tensor(const Tensor& t, const char* fn, const char* name) {
  check_tensor(t, fn, name);
  check_finite(t, fn, name);
}

}  // namespace

void check_tensor(const TensorView& t, const char* fn, const char* name) {
  check_shape_holds(t.shape, t.size, fn, name);
  if (t.data == nullptr && t.size > 0) {
    throw Error(std::string(fn) + ": " + name + " has " + std::to_string(t.size) +
                " values but no data (a null pointer)");
  }
}

void check_finite(const TensorView& t, const char* fn, const char* name, bool allow_negative_inf) {
  if (kernels::all_finite(t.data, t.size)) return;
  // Something is not finite: find the first culprit, value by value.
  for (std::size_t i = 0; i < t.size; ++i) {
    const float value = t.data[i];
    if (std::isfinite(value)) continue;
    if (allow_negative_inf && value == -std::numeric_limits<float>::infinity()) continue;
    const char* kind = std::isnan(value) ? "NaN" : (value > 0 ? "+inf" : "-inf");
    throw Error(std::string(fn) + ": " + name + " has a non-finite value (" + kind +
                ") at flat index " + std::to_string(i) + " of shape " + shape_to_string(t.shape));
  }
}

void check_bool_tensor(const BoolTensor& t, const char* fn, const char* name) {
  check_shape_holds(t.shape, t.data.size(), fn, name);
}

void check_input(const Tensor& x, const char* fn, const char* name) {
  if (x.rank() == 0) {
    throw Error(std::string(fn) + ": " + name + " has shape (), expected rank >= 1 (..., C)");
  }
  check_finite_tensor(x, fn, name);
}

void check_optional_vector(const Tensor& t, std::size_t n, const char* fn, const char* name,
                           const char* dim_name, VectorShapeText style) {
  if (t.empty()) return;
  const bool tuple = style == VectorShapeText::Tuple;
  if (tuple) check_tensor(t, fn, name);
  if (t.rank() != 1 || t.shape[0] != n) {
    throw Error(std::string(fn) + ": " + name + " has shape " + shape_to_string(t.shape) +
                ", expected (" + dim_name + "=" + std::to_string(n) + (tuple ? ",)" : ")"));
  }
  check_finite_tensor(t, fn, name);
}

std::size_t check_matrix(const Tensor& w, std::size_t rows, const char* fn, const char* name,
                         const char* rows_name) {
  if (w.rank() != 2 || w.shape[0] != rows || w.shape[1] == 0) {
    throw Error(std::string(fn) + ": " + name + " has shape " + shape_to_string(w.shape) +
                ", expected (" + rows_name + "=" + std::to_string(rows) + ", n) with n >= 1");
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
  if (kernels::all_finite(t.data.data(), t.data.size())) return;
  throw Error(std::string(fn) + ": " + what +
              " overflows float (values near 3.4e38); scale the inputs down");
}

}  // namespace attnscope::detail
