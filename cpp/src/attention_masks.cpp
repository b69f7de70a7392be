// Validation of the masks and the bias, and their resolution to one batch
// and a run of query heads. Mask tensors may be (Tq, Tk), shared by every
// batch and head, (B, Tq, Tk), shared by the heads, or (B, H, Tq, Tk); bias
// tensors are per head: (H, Tq, Tk) or (B, H, Tq, Tk).
#include <cmath>
#include <string>

#include "attention_internal.hpp"
#include "checks.hpp"

namespace attnscope::detail {

namespace {

std::string num(std::size_t n) { return std::to_string(n); }

std::string expected_mask_shapes(const AttentionDims& d) {
  const std::string tq = num(d.q_len), tk = num(d.k_len);
  return "(Tq, Tk) = (" + tq + ", " + tk + "), (B, Tq, Tk) = (" + num(d.batch) + ", " + tq + ", " +
         tk + ") or (B, H, Tq, Tk) = (" + num(d.batch) + ", " + num(d.heads) + ", " + tq + ", " +
         tk + ")";
}

bool is_square_tail(const Shape& shape, const AttentionDims& d) {
  return shape[shape.size() - 2] == d.q_len && shape.back() == d.k_len;
}

void check_mask_shape(const Shape& shape, const AttentionDims& d, const char* fn,
                      const char* name) {
  const bool ok = shape.size() >= 2 && shape.size() <= 4 && is_square_tail(shape, d) &&
                  (shape.size() < 3 || shape[0] == d.batch) &&
                  (shape.size() < 4 || shape[1] == d.heads);
  if (!ok) {
    throw Error(std::string(fn) + ": " + name + " has shape " + shape_to_string(shape) +
                ", expected " + expected_mask_shapes(d));
  }
}

// Offset of the (b, h) Tq×Tk slice in a mask of the given rank, and the
// distance from one head's slice to the next (0 when the heads share it).
std::size_t slice_offset(std::size_t rank, const AttentionDims& d, std::size_t b, std::size_t h) {
  const std::size_t tt = d.q_len * d.k_len;
  if (rank == 2) return 0;
  if (rank == 3) return b * tt;
  return (b * d.heads + h) * tt;
}
std::size_t head_stride(std::size_t rank, const AttentionDims& d) {
  return rank == 4 ? d.q_len * d.k_len : 0;
}

}  // namespace

void validate_mask(const Mask& mask, const AttentionDims& dims, const char* fn) {
  if (!mask.lengths.empty()) {
    if (mask.lengths.size() != dims.batch) {
      throw Error(std::string(fn) + ": mask.lengths has " + num(mask.lengths.size()) +
                  " entries, expected one per sequence (B=" + num(dims.batch) + ")");
    }
    for (std::size_t b = 0; b < mask.lengths.size(); ++b) {
      if (mask.lengths[b] > dims.k_len) {
        throw Error(std::string(fn) + ": mask.lengths[" + num(b) + "] is " + num(mask.lengths[b]) +
                    ", expected at most Tk=" + num(dims.k_len));
      }
    }
  }
  if (!mask.additive.empty()) {
    check_tensor(mask.additive, fn, "mask.additive");
    check_mask_shape(mask.additive.shape, dims, fn, "mask.additive");
    // -inf masks a position; NaN and +inf have no meaning as an offset.
    check_finite(mask.additive, fn, "mask.additive", /*allow_negative_inf=*/true);
  }
  if (!mask.allowed.empty()) {
    check_bool_tensor(mask.allowed, fn, "mask.allowed");
    check_mask_shape(mask.allowed.shape, dims, fn, "mask.allowed");
  }
  if (mask.window && *mask.window < 1) {
    throw Error(std::string(fn) + ": mask.window is " + std::to_string(*mask.window) +
                ", expected at least 1 (or no window)");
  }
  if (mask.sinks > dims.k_len) {
    throw Error(std::string(fn) + ": mask.sinks is " + num(mask.sinks) +
                ", expected at most Tk=" + num(dims.k_len));
  }
}

void validate_bias(const Bias& bias, const AttentionDims& dims, const char* fn) {
  if (bias.values.empty()) return;
  const Tensor& t = bias.values;
  check_tensor(t, fn, "bias.values");
  const bool ok = (t.rank() == 3 || t.rank() == 4) && is_square_tail(t.shape, dims) &&
                  t.shape[t.rank() - 3] == dims.heads &&
                  (t.rank() == 3 || t.shape[0] == dims.batch);
  if (!ok) {
    throw Error(std::string(fn) + ": bias.values has shape " + shape_to_string(t.shape) +
                ", expected (H, Tq, Tk) = (" + num(dims.heads) + ", " + num(dims.q_len) + ", " +
                num(dims.k_len) + ") or (B, H, Tq, Tk) = (" + num(dims.batch) + ", " +
                num(dims.heads) + ", " + num(dims.q_len) + ", " + num(dims.k_len) + ")");
  }
  check_finite(t, fn, "bias.values");
}

void validate_rope(const Rope& rope, const AttentionDims& dims, const char* fn) {
  if (!rope.enabled) return;
  if (dims.d_k % 2 != 0) {
    throw Error(std::string(fn) + ": rope needs an even d_k, got d_k=" + num(dims.d_k));
  }
  if (!std::isfinite(rope.base) || !(rope.base > 0.0)) {
    throw Error(std::string(fn) + ": rope.base is " + std::to_string(rope.base) +
                ", expected a finite number > 0");
  }
}

ScoreTerms score_terms(const AttentionOptions& options, const AttentionDims& dims) {
  ScoreTerms terms;
  terms.mask = &options.mask;
  terms.bias = &options.bias.values;
  if (options.bias.alibi) terms.alibi_slopes = alibi_slopes(dims.heads);
  return terms;
}

ScoreTerms checked_score_terms(const AttentionOptions& options, const AttentionDims& dims,
                               const char* fn) {
  validate_mask(options.mask, dims, fn);
  validate_bias(options.bias, dims, fn);
  validate_rope(options.rope, dims, fn);
  return score_terms(options, dims);
}

std::vector<float> alibi_slopes(std::size_t heads) {
  // Power of two: 2^(−8(h+1)/H). Otherwise the paper's rule: the slopes of
  // the power of two below H, then every other slope of twice that power.
  auto power_of_two = [](std::size_t n) {
    std::vector<double> s(n);
    for (std::size_t h = 0; h < n; ++h) s[h] = std::exp2(-8.0 * double(h + 1) / double(n));
    return s;
  };
  std::size_t below = 1;
  while (below * 2 <= heads) below *= 2;
  std::vector<double> slopes = power_of_two(below);
  if (below != heads) {
    const std::vector<double> twice = power_of_two(2 * below);
    for (std::size_t i = 0; slopes.size() < heads; i += 2) slopes.push_back(twice[i]);
  }
  return std::vector<float>(slopes.begin(), slopes.end());
}

kernels::HeadMask head_mask(const ScoreTerms& terms, const AttentionDims& dims, std::size_t b,
                            std::size_t h0, std::size_t count) {
  const Mask& mask = *terms.mask;
  kernels::HeadMask m;
  m.seq_len = dims.k_len;
  m.causal = mask.causal;
  m.key_length = mask.lengths.empty() ? dims.k_len : mask.lengths[b];
  m.query_offset = dims.query_offset();
  m.queries_per_head = count > 1 ? dims.q_len : 0;
  if (!mask.additive.empty()) {
    m.additive = mask.additive.data.data() + slice_offset(mask.additive.rank(), dims, b, h0);
    m.additive_head_stride = head_stride(mask.additive.rank(), dims);
  }
  if (!mask.allowed.empty()) {
    const std::size_t rank = mask.allowed.shape.size();
    m.allowed = mask.allowed.data.data() + slice_offset(rank, dims, b, h0);
    m.allowed_head_stride = head_stride(rank, dims);
  }
  if (terms.bias && !terms.bias->empty()) {
    const std::size_t rank = terms.bias->rank();
    const std::size_t slice = rank == 4 ? b * dims.heads + h0 : h0;
    m.bias = terms.bias->data.data() + slice * dims.q_len * dims.k_len;
    m.bias_head_stride = dims.q_len * dims.k_len;
  }
  if (!terms.alibi_slopes.empty()) m.alibi_slopes = terms.alibi_slopes.data() + h0;
  if (mask.window) m.window = static_cast<std::size_t>(*mask.window);
  m.sinks = mask.sinks;
  return m;
}

void fill_bias(const ScoreTerms& terms, const AttentionDims& dims, float* out) {
  const std::size_t Tq = dims.q_len, Tk = dims.k_len;
  for (std::size_t b = 0; b < dims.batch; ++b) {
    for (std::size_t h = 0; h < dims.heads; ++h) {
      kernels::HeadMask m = head_mask(terms, dims, b, h);
      // Only the bias terms: mask_row on zeros, without any hiding.
      m.causal = false;
      m.key_length = Tk;
      m.additive = nullptr;
      m.allowed = nullptr;
      m.window = 0;
      float* slice = out + (b * dims.heads + h) * Tq * Tk;
      for (std::size_t i = 0; i < Tq; ++i) kernels::mask_row(slice + i * Tk, i, 0, Tk, m);
    }
  }
}

}  // namespace attnscope::detail
