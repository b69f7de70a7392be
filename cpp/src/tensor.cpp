// Tensor construction, shape formatting and the shared argument checks.
#include "attnscope/tensor.hpp"

#include <cmath>
#include <limits>
#include <new>

#include "kernels/scan.hpp"
#include "tensor_checks.hpp"

namespace attnscope {

namespace {

// A float buffer must stay addressable as a byte count, so the element
// limit is the largest count whose byte size still fits ptrdiff_t.
constexpr std::size_t kMaxElements =
    static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max()) / sizeof(float);

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

}  // namespace

std::string shape_to_string(const Shape& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ',';
  out += ')';
  return out;
}

std::size_t checked_element_count(const Shape& shape, const char* what) {
  std::size_t count = 1;
  for (std::size_t dim : shape) {
    if (dim != 0 && count > kMaxElements / dim) {
      throw ResourceError(std::string(what) + ": shape " + shape_to_string(shape) +
                          " has too many elements (the product of its dimensions "
                          "exceeds " + std::to_string(kMaxElements) + ")");
    }
    count *= dim;
  }
  return count;
}

Tensor::Tensor(Shape s, std::vector<float> d) : shape(std::move(s)), data(std::move(d)) {
  if (shape.empty() && data.empty()) return;  // the "absent" tensor
  const std::size_t count = checked_element_count(shape, "Tensor");
  if (count != data.size()) {
    throw Error("Tensor: shape " + shape_to_string(shape) + " needs " + std::to_string(count) +
                " values, got " + std::to_string(data.size()));
  }
}

Tensor Tensor::zeros(Shape s) {
  const std::size_t count = checked_element_count(s, "Tensor::zeros");
  Tensor t;
  t.shape = std::move(s);
  t.data = allocate_floats(count, "Tensor::zeros");
  return t;
}

std::vector<float> allocate_floats(std::size_t count, const char* what) {
  try {
    return std::vector<float>(count, 0.0f);
  } catch (const std::bad_alloc&) {
    throw ResourceError(std::string(what) + ": cannot allocate " + std::to_string(count) +
                        " floats");
  } catch (const std::length_error&) {
    throw ResourceError(std::string(what) + ": cannot allocate " + std::to_string(count) +
                        " floats");
  }
}

Tensor zeros_for(const Shape& shape, const char* what) {
  Tensor t;
  t.data = allocate_floats(checked_element_count(shape, what), what);
  t.shape = shape;
  return t;
}

void check_tensor(const TensorView& t, const char* fn, const char* name) {
  check_shape_holds(t.shape, t.size, fn, name);
  if (t.data == nullptr && t.size > 0) {
    throw Error(std::string(fn) + ": " + name + " has " + std::to_string(t.size) +
                " values but no data (a null pointer)");
  }
}

void check_finite(const TensorView& t, const char* fn, const char* name,
                  bool allow_negative_inf) {
  if (kernels::all_finite(t.data, t.size)) return;
  // Something is not finite: find the first culprit, value by value.
  for (std::size_t i = 0; i < t.size; ++i) {
    const float value = t.data[i];
    if (std::isfinite(value)) continue;
    if (allow_negative_inf && value == -std::numeric_limits<float>::infinity()) continue;
    const char* kind = std::isnan(value) ? "NaN" : (value > 0 ? "+inf" : "-inf");
    throw Error(std::string(fn) + ": " + name + " has a non-finite value (" + kind +
                ") at flat index " + std::to_string(i) + " of shape " +
                shape_to_string(t.shape));
  }
}

void check_bool_tensor(const BoolTensor& t, const char* fn, const char* name) {
  check_shape_holds(t.shape, t.data.size(), fn, name);
}

}  // namespace attnscope
