// The height of the register tile in the products with weight matrices
// (the projections, a GPT-2's block matrices and its LM head) and in the
// flash path's two products per tile (4 or 6 rows of the result at a time).
//
// Both heights add every element's steps in the same order, so they give the
// same bits; which is faster depends on how the WebAssembly engine allocates
// registers. V8's TurboFan (Node 20) spills a 6-row tile's 12 accumulators to
// the stack on every step, while the V8 of current Chromium keeps them in
// registers, where 12 independent chains come closer to the fused
// multiply-add's throughput than 8 (docs/performance/journal.md, "The
// register tile's height, measured by the engine"). So in WebAssembly the
// first model loaded or created with d_model ≥ 512, or the first attention
// call on the flash path of at least 2^26 multiply-adds, times both on a
// GPT-2 block's product and keeps the faster, unless a height was set
// before; until then, and natively, the height is 4.
#pragma once

#include <cstddef>

namespace attnscope {

/// The taller of the two heights.
inline constexpr std::size_t kMatmulTallRows = 6;

/// The height in use.
std::size_t matmul_tile_rows();

/// Sets the height: 4 or 6, or 0 to measure now (4 natively). Any other
/// value throws std::invalid_argument. For tests and benchmarks.
void set_matmul_tile_rows(std::size_t rows);

/// Measures the height the first time it is called, unless
/// set_matmul_tile_rows came first (Gpt2Model::finish calls it for a model
/// with d_model ≥ 512, the flash path for a long call).
void measure_matmul_tile_rows_once();

}  // namespace attnscope
