// self_attention(x, weights, options): heads (including 0 and non-divisors),
// optional biases and W_O, every mask kind, traced and fast, with shapes and
// values from the fuzz bytes. Findings as in fuzz_attention.cpp.
#include <cmath>

#include "fuzz_input.hpp"
#include "fuzz_masks.hpp"

using namespace attnscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const std::uint8_t head = in.byte();
  const bool batched = head & 1;
  const int kind = (head >> 1) % 4;
  const bool perturb = (head >> 3) % 8 == 0;
  const bool mismatch = perturb && in.flag();
  const std::size_t B = batched ? in.range(1, 3) : 1;
  const std::size_t T = in.range(1, 8);
  const std::size_t C = in.range(1, 8);
  // heads 0 and heads that do not divide the width must be rejected cleanly.
  std::size_t H = in.range(1, 3);
  const std::size_t d_k = in.range(1, 4);
  const std::size_t d_v = in.range(1, 4);
  const std::size_t declared_heads = perturb && in.flag() ? in.range(0, 5) : H;

  Shape x_shape = batched ? Shape{B, T, C} : Shape{T, C};
  if (perturb && in.flag()) x_shape = fuzz::shape_of(in, {B, T, C}, true);
  const Tensor x = fuzz::tensor_of(in, x_shape, kind, mismatch && in.flag());

  SelfAttentionWeights w;
  w.heads = declared_heads;
  w.wq = fuzz::tensor_of(in, fuzz::shape_of(in, {C, H * d_k}, perturb && in.flag()), kind, false);
  w.wk = fuzz::tensor_of(in, {C, H * d_k}, kind, mismatch && in.flag());
  w.wv = fuzz::tensor_of(in, {C, H * d_v}, kind, false);
  const std::uint8_t extras = in.byte();
  if (extras & 1) w.bq = fuzz::tensor_of(in, {H * d_k}, kind, false);
  if (extras & 2) w.bk = fuzz::tensor_of(in, {H * d_k}, kind, false);
  if (extras & 4) w.bv = fuzz::tensor_of(in, {H * d_v}, kind, false);
  std::size_t c_out = H * d_v;
  if (extras & 8) {
    c_out = in.range(1, 8);
    w.wo = fuzz::tensor_of(in, fuzz::shape_of(in, {H * d_v, c_out}, perturb && in.flag()), kind,
                           false);
  }
  if (extras & 16) w.bo = fuzz::tensor_of(in, {c_out}, kind, false);  // without wo: rejected

  AttentionOptions options;
  options.trace = extras & 32;
  options.scale = fuzz::scale_of(in, kind);
  options.mask = fuzz::mask_of(in, B, H, T, kind, perturb);

  SelfAttentionResult result;
  if (!fuzz::run_expecting_only_library_errors([&] { result = self_attention(x, w, options); })) {
    return 0;
  }
  // Perturbed shapes may still be valid: expect what the tensors imply.
  H = w.heads;
  const bool x_batched = x.rank() == 3;
  const std::size_t Bx = x_batched ? x.shape[0] : 1, Tx = x.shape[x.rank() - 2];
  const std::size_t width = w.wo.empty() ? w.wv.shape[1] : w.wo.shape[1];
  const Shape expected = x_batched ? Shape{Bx, Tx, width} : Shape{Tx, width};
  fuzz::require(result.output.shape == expected, "output shape");
  fuzz::require(result.output.size() == Bx * Tx * width, "output size");
  fuzz::require(fuzz::all_finite(result.output.data), "non-finite output for accepted input");
  fuzz::require(result.fully_masked.size() == Bx * H * Tx, "fully_masked size");
  std::size_t flagged = 0;
  for (auto f : result.fully_masked) flagged += f != 0;
  fuzz::require(flagged == result.fully_masked_count, "fully_masked_count");
  if (options.trace) {
    fuzz::require(result.trace.has_value(), "trace missing");
    const SelfAttentionTrace& t = *result.trace;
    fuzz::require(t.weights.size() == Bx * H * Tx * Tx, "trace.weights size");
    fuzz::require(t.concat.size() == Bx * Tx * w.wv.shape[1], "trace.concat size");
    for (std::size_t row = 0; row < Bx * H * Tx; ++row) {
      double sum = 0;
      for (std::size_t j = 0; j < Tx; ++j) {
        const float wt = t.weights.data[row * Tx + j];
        fuzz::require(std::isfinite(wt) && wt >= 0.0f, "weight negative or non-finite");
        sum += wt;
      }
      const double want = result.fully_masked[row] ? 0.0 : 1.0;
      fuzz::require(std::abs(sum - want) < 1e-4, "weights row sum");
    }
  }
  return 0;
}
