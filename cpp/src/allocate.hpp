// The one way the library allocates its tensors and scratch buffers.
#pragma once

#include <memory>

#include "attnscope/tensor.hpp"

namespace attnscope::detail {

/// A zero tensor of `shape`. A shape whose element count does not fit, or
/// memory that cannot be had, becomes ResourceError naming `what` (e.g.
/// "attention: trace"). Scratch buffers take the data of a rank-1 tensor.
Tensor allocate_zeros(const Shape& shape, const char* what);

/// Scratch of `shape`'s element count, not zeroed, for a kernel that writes
/// every float before reading it; fails as allocate_zeros does.
std::unique_ptr<float[]> allocate_uninitialised(const Shape& shape, const char* what);

}  // namespace attnscope::detail
