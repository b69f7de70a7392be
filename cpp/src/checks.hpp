// The argument and result checks every public entry point uses. Each throws
// attnscope::Error (or ResourceError) whose message starts with the function
// name `fn`, names the offending argument and says what was expected and what
// was given.
#pragma once

#include <cstddef>

#include "attnscope/tensor.hpp"

namespace attnscope::detail {

/// Every dimension >= 1 and the element count equal to the product of the shape.
void check_tensor(const TensorView& t, const char* fn, const char* name);

/// No NaN or inf (optionally -inf is accepted, as in additive masks).
/// The message names the first bad flat index.
void check_finite(const TensorView& t, const char* fn, const char* name,
                  bool allow_negative_inf = false);

/// Same shape/data consistency as check_tensor, for boolean tensors.
void check_bool_tensor(const BoolTensor& t, const char* fn, const char* name);

/// An input of the block parts: rank >= 1, consistent and finite.
void check_input(const Tensor& x, const char* fn, const char* name);

/// How check_optional_vector writes the expected shape: "(C=4)" in the block
/// parts' messages, "(H*d_k=6,)" (like shape_to_string) in self_attention's.
enum class VectorShapeText { Plain, Tuple };

/// An optional per-feature vector (gamma, beta, a bias): absent, or shape (n)
/// with finite values. `dim_name` says where n comes from, e.g. "C" or "out".
/// In the Tuple style (self_attention) the tensor's own consistency is
/// checked before its shape, as for the other attention arguments.
void check_optional_vector(const Tensor& t, std::size_t n, const char* fn, const char* name,
                           const char* dim_name, VectorShapeText style = VectorShapeText::Plain);

/// A weight matrix (rows, ·) whose row count must be `rows`; returns its
/// column count. `rows_name` says where rows comes from, e.g. "C".
std::size_t check_matrix(const Tensor& w, std::size_t rows, const char* fn, const char* name,
                         const char* rows_name);

/// eps of LayerNorm and RMSNorm: finite and > 0.
void check_eps(float eps, const char* fn, const char* name);

/// A result computed from finite inputs can still overflow float (e.g.
/// residual_add(FLT_MAX, FLT_MAX), a LayerNorm whose row sum overflows, or
/// Q·Kᵀ of large inputs). Throws Error naming `fn` and `what` (e.g. "the
/// output") instead of returning inf or NaN.
void check_result_finite(const Tensor& t, const char* fn, const char* what);

}  // namespace attnscope::detail
