// Transformer-block parts: linear, positional_encoding(+add), residual_add,
// layer_norm, feed_forward and transformer_block (pre- and post-norm), with
// shapes and values from the fuzz bytes. Findings: any exception other than
// attnscope::Error, any sanitizer report, a non-finite output for an
// accepted call (the inputs are checked finite by the core).
#include "fuzz_input.hpp"
#include "fuzz_masks.hpp"

using namespace attnscope;

namespace {

Shape rows_shape(fuzz::Input& in, std::size_t C) {
  switch (in.byte() % 3) {
    case 0:
      return {C};
    case 1:
      return {in.range(1, 5), C};
    default:
      return {in.range(1, 3), in.range(1, 5), C};
  }
}

Linear linear_of(fuzz::Input& in, std::size_t n_in, std::size_t n_out, int kind, bool perturb) {
  Linear l;
  l.weight =
      fuzz::tensor_of(in, fuzz::shape_of(in, {n_in, n_out}, perturb && in.flag()), kind, false);
  if (in.flag()) l.bias = fuzz::tensor_of(in, {n_out}, kind, perturb && in.flag());
  return l;
}

Tensor optional_vector(fuzz::Input& in, std::size_t C, int kind, bool perturb) {
  if (!in.flag()) return {};
  return fuzz::tensor_of(in, fuzz::shape_of(in, {C}, perturb && in.flag()), kind, false);
}

float eps_of(fuzz::Input& in, int kind) {
  switch (in.byte() % 4) {
    case 0:
      return 1e-5f;
    case 1:
      return in.value(kind);
    case 2:
      return in.raw_float();
    default:
      return 1e-12f;
  }
}

void check_output(const Tensor& y, const Shape& shape, const char* fn) {
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;
  if (y.shape != shape || y.size() != n) {
    std::fprintf(stderr, "%s: ", fn);
    fuzz::finding("output shape or size");
  }
  if (!fuzz::all_finite(y.data)) {
    std::fprintf(stderr, "%s: ", fn);
    fuzz::finding("non-finite output for accepted input");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const std::uint8_t head = in.byte();
  const int op = head % 7;
  const int kind = (head >> 3) % 4;
  const bool perturb = (head >> 5) == 0;
  const std::size_t C = in.range(1, 9);
  const Shape shape = rows_shape(in, C);
  const Tensor x =
      fuzz::tensor_of(in, perturb && in.flag() ? fuzz::shape_of(in, {2, C}, true) : shape, kind,
                      perturb && in.flag());

  switch (op) {
    case 0: {
      const Linear l = linear_of(in, C, in.range(1, 9), kind, perturb);
      Tensor y;
      if (fuzz::run_expecting_only_library_errors([&] { y = linear(x, l); })) {
        Shape s = x.shape;
        s.back() = l.weight.shape[1];  // a perturbed weight may still be valid
        check_output(y, s, "linear");
      }
      break;
    }
    case 1: {
      // Sizes past the caps are fine: positional_encoding needs no input.
      const std::size_t T = in.range(0, 40), C2 = in.range(0, 40);
      const float base = in.flag() ? 10000.0f : in.raw_float();
      Tensor y;
      if (fuzz::run_expecting_only_library_errors([&] { y = positional_encoding(T, C2, base); })) {
        check_output(y, {T, C2}, "positional_encoding");
      }
      if (fuzz::run_expecting_only_library_errors([&] { y = add_positional_encoding(x, base); })) {
        check_output(y, x.shape, "add_positional_encoding");
      }
      break;
    }
    case 2: {
      const Tensor b = fuzz::tensor_of(
          in, perturb && in.flag() ? fuzz::shape_of(in, {C}, true) : x.shape, kind, false);
      Tensor y;
      if (fuzz::run_expecting_only_library_errors([&] { y = residual_add(x, b); })) {
        check_output(y, x.shape, "residual_add");
      }
      break;
    }
    case 3: {
      const Tensor gamma = optional_vector(in, C, kind, perturb);
      const Tensor beta = optional_vector(in, C, kind, perturb);
      const float eps = eps_of(in, kind);
      Tensor y;
      if (fuzz::run_expecting_only_library_errors([&] { y = layer_norm(x, gamma, beta, eps); })) {
        check_output(y, x.shape, "layer_norm");
      }
      break;
    }
    case 4: {
      const std::size_t hidden = in.range(1, 9);
      const Linear first = linear_of(in, C, hidden, kind, perturb);
      const Linear second = linear_of(in, hidden, in.range(1, 9), kind, perturb);
      const auto activation = static_cast<Activation>(in.byte() % (perturb ? 3 : 2));
      Tensor y;
      if (fuzz::run_expecting_only_library_errors(
              [&] { y = feed_forward(x, first, second, activation); })) {
        Shape s = x.shape;
        s.back() = second.weight.shape[1];
        check_output(y, s, "feed_forward");
      }
      break;
    }
    default: {
      // transformer_block on (T, C) or (B, T, C).
      const bool batched = in.flag();
      const std::size_t B = batched ? in.range(1, 2) : 1;
      const std::size_t T = in.range(1, 6);
      const std::size_t H = in.range(1, 3), d = in.range(1, 3);
      const Tensor xb = fuzz::tensor_of(in, batched ? Shape{B, T, C} : Shape{T, C}, kind, false);
      BlockWeights w;
      w.attention.heads = perturb && in.flag() ? in.range(0, 4) : H;
      w.attention.wq = fuzz::tensor_of(in, {C, H * d}, kind, false);
      w.attention.wk = fuzz::tensor_of(in, {C, H * d}, kind, false);
      w.attention.wv = fuzz::tensor_of(in, {C, H * d}, kind, false);
      if (in.flag()) w.attention.bq = fuzz::tensor_of(in, {H * d}, kind, false);
      w.attention.wo =
          fuzz::tensor_of(in, fuzz::shape_of(in, {H * d, C}, perturb && in.flag()), kind, false);
      w.norm1_gamma = optional_vector(in, C, kind, perturb);
      w.norm1_beta = optional_vector(in, C, kind, perturb);
      w.norm2_gamma = optional_vector(in, C, kind, perturb);
      w.norm2_beta = optional_vector(in, C, kind, perturb);
      const std::size_t hidden = in.range(1, 8);
      w.ff1 = linear_of(in, C, hidden, kind, perturb);
      w.ff2 = linear_of(in, hidden, C, kind, perturb);
      w.activation = in.flag() ? Activation::GELU : Activation::ReLU;
      w.eps = eps_of(in, kind);
      w.norm_first = in.flag();
      AttentionOptions options;
      options.trace = in.flag();
      options.mask = fuzz::mask_of(in, B, H, T, kind, perturb);
      BlockResult r;
      if (fuzz::run_expecting_only_library_errors([&] { r = transformer_block(xb, w, options); })) {
        check_output(r.output, xb.shape, "transformer_block");
        fuzz::require(fuzz::all_finite(r.trace.norm1.data), "non-finite norm1");
        fuzz::require(fuzz::all_finite(r.trace.ff_hidden.data), "non-finite ff_hidden");
      }
      break;
    }
  }
  return 0;
}
