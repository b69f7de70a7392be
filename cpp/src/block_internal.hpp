// Internals shared by the transformer-block parts (block.cpp) and the block
// that composes them (transformer_block.cpp): the checks of a Linear and an
// activation (the others are in checks.hpp), and the parts themselves without
// checks for inputs that were already checked.
#pragma once

#include <cstddef>
#include <string>

#include "allocate.hpp"
#include "attnscope/block.hpp"
#include "attnscope/tensor.hpp"
#include "checks.hpp"

namespace attnscope::detail {

/// Checks a Linear whose input width is `in` (its weight and bias are named
/// `prefix` + "weight" / "bias"); returns its output width.
std::size_t check_linear(const Linear& layer, std::size_t in, const char* fn,
                         const std::string& prefix, const char* in_name);

void check_activation(Activation activation, const char* fn);

/// A sequence input: x of shape (T, C) or (B, T, C), with finite values.
void check_sequence(const Tensor& x, const char* fn);

/// The input of a whole block and its attention's output projection: x a
/// sequence, wo (·, C) so that the attention output can be added to x.
/// Returns C.
std::size_t check_block_input(const Tensor& x, const Tensor& wo, const char* fn);

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
Tensor layer_norm_unchecked(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                            const char* fn);
void activate_inplace(Tensor& t, Activation activation);

}  // namespace attnscope::detail
