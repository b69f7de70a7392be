// Row-major float32 tensors and the library's error type.
//
// Every tensor in attnscope is dense and row-major: the last index varies
// fastest. A Tensor owns its data; a TensorView reads a caller's. Results
// are always fresh tensors, never views into the inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace attnscope {

using Shape = std::vector<std::size_t>;

/// Thrown for every invalid argument. The message names the argument, what
/// was expected and what was given, e.g.
/// "self_attention: wq has shape (4, 3), expected (C=2, H*d_k) with C from x".
class Error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Thrown when a request needs more memory than can be allocated (or than a
/// size_t can count). Derives from Error so one catch handles both.
class ResourceError : public Error {
 public:
  using Error::Error;
};

/// Dense row-major float32 tensor. `data.size()` equals the product of
/// `shape` (1 for an empty shape). A default-constructed Tensor is "absent"
/// (used for optional arguments such as biases).
struct Tensor {
  Shape shape;
  std::vector<float> data;

  Tensor() = default;
  Tensor(Shape s, std::vector<float> d);
  /// All-zero tensor; throws ResourceError if the element count overflows.
  static Tensor zeros(Shape s);

  bool empty() const { return shape.empty() && data.empty(); }
  std::size_t rank() const { return shape.size(); }
  std::size_t size() const { return data.size(); }
  std::size_t dim(std::size_t i) const { return shape.at(i); }
};

/// A read-only view of dense row-major float32 data that the caller owns
/// and keeps alive for the call: `size` floats at `data`, which must equal
/// the product of `shape` (checked by the functions that take views). It
/// lets a caller with its data already in memory skip building a Tensor,
/// whose vector would be zero-filled and then overwritten.
struct TensorView {
  Shape shape;
  const float* data = nullptr;
  std::size_t size = 0;

  TensorView() = default;
  TensorView(Shape s, const float* d, std::size_t n) : shape(std::move(s)), data(d), size(n) {}
  /// Views a Tensor's data (implicit, so that Tensors pass where views go).
  TensorView(const Tensor& t) : shape(t.shape), data(t.data.data()), size(t.data.size()) {}

  std::size_t rank() const { return shape.size(); }
};

/// Boolean tensor (1 = true, 0 = false), row-major like Tensor.
struct BoolTensor {
  Shape shape;
  std::vector<std::uint8_t> data;
  bool empty() const { return shape.empty() && data.empty(); }
};

/// "(2, 3, 4)" — used in error messages.
std::string shape_to_string(const Shape& shape);

/// Product of the dimensions; throws ResourceError naming `what` on overflow.
std::size_t checked_element_count(const Shape& shape, const char* what);

}  // namespace attnscope
