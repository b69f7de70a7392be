// Internals shared by the transformer-block parts (block.cpp) and the block
// that composes them (transformer_block.cpp): argument checks, and the parts
// themselves without checks for inputs that were already checked.
//
// Every check throws attnscope::Error whose message starts with the function
// name, names the argument and says what was expected and what was given.
#pragma once

#include <cstddef>
#include <string>

#include "attnscope/block.hpp"
#include "attnscope/tensor.hpp"

namespace attnscope::block_detail {

/// "1e-05", "nan", "-inf": how values appear in messages.
std::string format_value(double value);

/// Every dimension >= 1, data.size() matches the shape, every value finite.
void check_finite_tensor(const Tensor& t, const char* fn, const char* name);

/// An input: like check_finite_tensor, and of rank >= 1.
void check_input(const Tensor& x, const char* fn, const char* name);

/// An optional per-feature vector (gamma, beta, bias): empty, or shape (n).
/// `dim_name` says where n comes from, e.g. "C" or "out".
void check_optional_vector(const Tensor& t, std::size_t n, const char* fn,
                           const char* name, const char* dim_name);

/// A weight matrix (rows, ·) whose row count must be `rows`; returns its
/// column count. `rows_name` says where rows comes from, e.g. "C".
std::size_t check_matrix(const Tensor& w, std::size_t rows, const char* fn,
                         const char* name, const char* rows_name);

/// eps of LayerNorm: finite and > 0.
void check_eps(float eps, const char* fn, const char* name);

/// A zero tensor of `shape`, or ResourceError naming `fn` when it cannot be
/// counted or allocated.
Tensor make_output(const Shape& shape, const char* fn);

/// Checks a Linear whose input width is `in` (its weight and bias are named
/// `prefix` + "weight" / "bias"); returns its output width.
std::size_t check_linear(const Linear& layer, std::size_t in, const char* fn,
                         const std::string& prefix, const char* in_name);

void check_activation(Activation activation, const char* fn);

/// A result computed from finite inputs can still overflow float (e.g.
/// residual_add(FLT_MAX, FLT_MAX), or a LayerNorm whose row sum overflows,
/// which yields NaN). Throws Error naming `fn` and `what` instead of
/// returning inf or NaN.
void check_result_finite(const Tensor& t, const char* fn, const char* what);

// The parts on checked arguments. They never re-check their inputs, so a
// block whose intermediate overflowed is reported by the block itself
// (check_result_finite) instead of blaming a tensor the caller never passed.
Tensor linear_unchecked(const Tensor& x, const Linear& layer, const char* fn);
Tensor add_unchecked(const Tensor& a, const Tensor& b);
Tensor layer_norm_unchecked(const Tensor& x, const Tensor& gamma,
                            const Tensor& beta, float eps, const char* fn);
void activate_inplace(Tensor& t, Activation activation);

}  // namespace attnscope::block_detail
