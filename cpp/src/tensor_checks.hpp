// Argument checks shared by every public entry point. Each throws
// attnscope::Error (or ResourceError) with a message that starts with the
// function name and names the offending argument.
#pragma once

#include <cstddef>
#include <vector>

#include "attnscope/tensor.hpp"

namespace attnscope {

/// Every dimension >= 1 and the element count equal to the product of the shape.
void check_tensor(const TensorView& t, const char* fn, const char* name);

/// No NaN or inf (optionally -inf is accepted, as in additive masks).
/// The message names the first bad flat index.
void check_finite(const TensorView& t, const char* fn, const char* name,
                  bool allow_negative_inf = false);

/// Same shape/data consistency as check_tensor, for boolean tensors.
void check_bool_tensor(const BoolTensor& t, const char* fn, const char* name);

/// A zero-filled buffer; allocation failure becomes ResourceError naming
/// `what`.
std::vector<float> allocate_floats(std::size_t count, const char* what);

/// Tensor::zeros whose errors name `what` (e.g. "attention: trace").
Tensor zeros_for(const Shape& shape, const char* what);

}  // namespace attnscope
