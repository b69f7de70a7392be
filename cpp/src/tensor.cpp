// Tensor construction, shape formatting and the allocation of zero tensors.
#include "attnscope/tensor.hpp"

#include <limits>
#include <new>
#include <stdexcept>
#include <string>

#include "allocate.hpp"

namespace attnscope {

namespace {

// A float buffer must stay addressable as a byte count, so the element
// limit is the largest count whose byte size still fits ptrdiff_t.
constexpr std::size_t kMaxElements =
    static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max()) / sizeof(float);

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
                          "exceeds " +
                          std::to_string(kMaxElements) + ")");
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

Tensor Tensor::zeros(Shape s) { return detail::allocate_zeros(s, "Tensor::zeros"); }

namespace {
[[noreturn]] void throw_cannot_allocate(const char* what, std::size_t count) {
  throw ResourceError(std::string(what) + ": cannot allocate " + std::to_string(count) + " floats");
}
}  // namespace

Tensor detail::allocate_zeros(const Shape& shape, const char* what) {
  const std::size_t count = checked_element_count(shape, what);
  Tensor t;
  try {
    t.data.assign(count, 0.0f);
  } catch (const std::bad_alloc&) {
    throw_cannot_allocate(what, count);
  } catch (const std::length_error&) {
    throw_cannot_allocate(what, count);
  }
  t.shape = shape;
  return t;
}

std::unique_ptr<float[]> detail::allocate_uninitialised(const Shape& shape, const char* what) {
  const std::size_t count = checked_element_count(shape, what);
  try {
    return std::unique_ptr<float[]>(new float[count]);
  } catch (const std::bad_alloc&) {
    throw_cannot_allocate(what, count);
  }
}

}  // namespace attnscope
