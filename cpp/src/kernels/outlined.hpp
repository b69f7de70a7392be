// Keeping a hot loop nest in a wasm function of its own.
//
// wasm-opt inlines every function that has a single caller, however large,
// and V8 then allocates registers for the merged function as a whole: in
// the flash kernel, a few more values live across the loops were enough for
// it to spill the micro-kernel's accumulators to the stack on every step
// (measured: docs/performance/journal.md). wasm-opt leaves functions alone that are reached through
// the function table, so in wasm the calls go through a pointer read from
// memory. Natively the call is direct and the compiler decides.
#pragma once

#include <utility>

#include "kernels/isa_namespace.hpp"

namespace attnscope::kernels {
inline namespace ATTN_KERNEL_ISA {

namespace detail {
template <auto F>
struct OutlinedPointer {
  // Not const: a constant pointer would be folded back into a direct call.
  static inline decltype(F) pointer = F;
};
}  // namespace detail

/// F(args...), with F kept out of line in wasm.
template <auto F, class... Args>
void call_outlined(Args&&... args) {
#if defined(__wasm__)
  detail::OutlinedPointer<F>::pointer(std::forward<Args>(args)...);
#else
  F(std::forward<Args>(args)...);
#endif
}

}  // namespace ATTN_KERNEL_ISA
}  // namespace attnscope::kernels
