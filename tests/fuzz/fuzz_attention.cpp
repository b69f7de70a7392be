// attention(q, k, v, options): every rank, scale mode and mask kind, GQA and
// a KV cache (Tq <= Tk), rope, ALiBi, a per-head bias, windows and sinks,
// with shapes and values (NaN, ±inf, denormals, huge) from the fuzz bytes.
// Findings: any exception other than attnscope::Error, any sanitizer report,
// a non-finite output, broken weights invariants, or traced and fast paths
// that disagree on moderate inputs.
#include <algorithm>
#include <cmath>

#include "../cpp/test_attention_reference.hpp"
#include "fuzz_input.hpp"
#include "fuzz_masks.hpp"

using namespace attnscope;

namespace {

void check_weights(const AttentionResult& r, std::size_t rows, std::size_t T) {
  const AttentionTrace& t = *r.trace;
  fuzz::require(t.weights.size() == rows * T, "trace.weights has the wrong size");
  for (std::size_t row = 0; row < rows; ++row) {
    double sum = 0;
    for (std::size_t j = 0; j < T; ++j) {
      const float w = t.weights.data[row * T + j];
      fuzz::require(std::isfinite(w) && w >= 0.0f && w <= 1.0f, "weight outside [0, 1]");
      if (t.masked.data[row * T + j] == -INFINITY) fuzz::require(w == 0.0f, "masked weight != 0");
      sum += w;
    }
    if (r.fully_masked[row]) {
      fuzz::require(sum == 0.0, "fully masked row has non-zero weights");
    } else {
      fuzz::require(std::abs(sum - 1.0) < 1e-4, "weights row does not sum to 1");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const std::uint8_t head = in.byte();
  const std::size_t rank = 2 + head % 3;
  const int kind = (head >> 2) % 4;
  const bool perturb = (head >> 4) % 8 == 0;
  const bool mismatch = (head >> 7) && in.byte() % 8 == 0;
  const std::size_t B = rank == 4 ? in.range(1, 3) : 1;
  const std::size_t H = rank >= 3 ? in.range(1, 3) : 1;
  const std::size_t T = in.range(1, 10);
  const std::size_t d_k = in.range(1, 9);
  const std::size_t d_v = in.range(1, 9);
  const std::uint8_t variant = in.byte();
  const std::size_t Hkv = (variant & 1) ? 1 : H;  // MQA, or one kv head per query head
  const std::size_t Tk = T + (variant >> 1) % 4;  // a KV cache holding earlier keys

  auto dims_of = [&](std::size_t heads, std::size_t len, std::size_t last) {
    Shape s;
    if (rank == 4) s.push_back(B);
    if (rank >= 3) s.push_back(heads);
    s.push_back(len);
    s.push_back(last);
    return s;
  };
  auto dims = [&](std::size_t last) { return dims_of(H, T, last); };
  Shape q_shape = dims(d_k), k_shape = dims_of(Hkv, Tk, d_k), v_shape = dims_of(Hkv, Tk, d_v);
  if (perturb) {
    Shape* target = in.flag() ? &k_shape : &v_shape;
    const std::size_t i = in.byte() % target->size();
    (*target)[i] = in.flag() ? 0 : (*target)[i] + 1;
  }
  const Tensor q = fuzz::tensor_of(in, q_shape, kind, mismatch && in.flag());
  const Tensor k = fuzz::tensor_of(in, k_shape, kind, false);
  const Tensor v = fuzz::tensor_of(in, v_shape, kind, false);

  AttentionOptions options;
  options.trace = in.flag();
  options.scale = fuzz::scale_of(in, kind);
  options.mask = fuzz::mask_of(in, B, H, T, Tk, kind, perturb);
  fuzz::variants_of(in, variant >> 3, H, T, Tk, kind, options);

  AttentionResult result;
  const bool ok =
      fuzz::run_expecting_only_library_errors([&] { result = attention(q, k, v, options); });
  if (!ok) return 0;

  // Accepted input: the result must be complete and finite.
  // A perturbed v may legally have another d_v: the output follows v.
  const std::size_t out_dv = v.shape.back();
  fuzz::require(result.output.shape == dims(out_dv), "output shape");
  fuzz::require(result.output.size() == B * H * T * out_dv, "output size");
  fuzz::require(fuzz::all_finite(result.output.data), "non-finite output for accepted input");
  fuzz::require(result.fully_masked.size() == B * H * T, "fully_masked size");
  std::size_t flagged = 0;
  for (auto f : result.fully_masked) flagged += f != 0;
  fuzz::require(flagged == result.fully_masked_count, "fully_masked_count");
  fuzz::require(result.trace.has_value() == options.trace, "trace presence");
  if (options.trace) check_weights(result, B * H * T, Tk);

  // On moderate values both paths must match a double-precision reference
  // written from the definitions (tests/cpp/test_attention_reference.hpp).
  // The scale must be moderate too: with a factor like 1e9 the float scores
  // are ~1e10, where an additive mask of ±8 is below one ulp and vanishes in
  // float but not in double.
  const float factor = options.scale.factor_for(d_k);
  if (kind == 0 && q.size() == B * H * T * d_k && k.size() == B * Hkv * Tk * d_k &&
      std::abs(factor) <= 2.0f) {
    const std::vector<double> qd(q.data.begin(), q.data.end()), kd(k.data.begin(), k.data.end()),
        vd(v.data.begin(), v.data.end());
    const auto ref = attnscope::testing::reference_attention(
        qd, kd, vd, attnscope::testing::ReferenceDims{B, H, Hkv, T, Tk, d_k, out_dv}, factor,
        options);
    fuzz::require(ref.fully_masked == result.fully_masked,
                  "fully_masked differs from the reference");
    float v_max = 0;
    for (float x : v.data) v_max = std::max(v_max, std::abs(x));
    for (std::size_t i = 0; i < result.output.size(); ++i) {
      fuzz::require(std::abs(result.output.data[i] - ref.output[i]) <= 2e-3 * (1.0 + v_max),
                    "output differs from the double reference");
    }
  }

  // The two paths are one function: on moderate values they must agree.
  if (kind == 0) {
    AttentionOptions other = options;
    other.trace = !options.trace;
    AttentionResult again;
    const bool ok2 =
        fuzz::run_expecting_only_library_errors([&] { again = attention(q, k, v, other); });
    fuzz::require(ok2, "traced and fast paths disagree on accepting the input");
    fuzz::require(again.fully_masked == result.fully_masked, "paths disagree on fully_masked");
    float v_max = 0;
    for (float x : v.data) v_max = std::max(v_max, std::abs(x));
    for (std::size_t i = 0; i < result.output.size(); ++i) {
      const float diff = std::abs(result.output.data[i] - again.output.data[i]);
      fuzz::require(diff <= 2e-3f * (1.0f + v_max), "traced and fast outputs differ");
    }
  }
  return 0;
}
