// Validation of the masks and their resolution to one (batch, head) pair.
// Additive and boolean masks may be (T, T), shared by every batch and head,
// (B, T, T), shared by the heads, or (B, H, T, T).
#include <string>

#include "attention_internal.hpp"
#include "tensor_checks.hpp"

namespace attnscope::detail {

namespace {

std::string expected_mask_shapes(const AttentionDims& d) {
  const std::string t = std::to_string(d.seq_len);
  const std::string b = std::to_string(d.batch);
  const std::string h = std::to_string(d.heads);
  return "(T, T) = (" + t + ", " + t + "), (B, T, T) = (" + b + ", " + t + ", " + t +
         ") or (B, H, T, T) = (" + b + ", " + h + ", " + t + ", " + t + ")";
}

void check_mask_shape(const Shape& shape, const AttentionDims& d, const char* fn,
                      const char* name) {
  const std::size_t T = d.seq_len;
  const bool ok = (shape.size() == 2 && shape[0] == T && shape[1] == T) ||
                  (shape.size() == 3 && shape[0] == d.batch && shape[1] == T && shape[2] == T) ||
                  (shape.size() == 4 && shape[0] == d.batch && shape[1] == d.heads &&
                   shape[2] == T && shape[3] == T);
  if (!ok) {
    throw Error(std::string(fn) + ": " + name + " has shape " + shape_to_string(shape) +
                ", expected " + expected_mask_shapes(d));
  }
}

// Offset of the (b, h) T×T slice in a mask of the given rank.
std::size_t slice_offset(std::size_t rank, const AttentionDims& d, std::size_t b,
                         std::size_t h) {
  const std::size_t tt = d.seq_len * d.seq_len;
  if (rank == 2) return 0;
  if (rank == 3) return b * tt;
  return (b * d.heads + h) * tt;
}

}  // namespace

void validate_mask(const Mask& mask, const AttentionDims& dims, const char* fn) {
  if (!mask.lengths.empty()) {
    if (mask.lengths.size() != dims.batch) {
      throw Error(std::string(fn) + ": mask.lengths has " + std::to_string(mask.lengths.size()) +
                  " entries, expected one per sequence (B=" + std::to_string(dims.batch) + ")");
    }
    for (std::size_t b = 0; b < mask.lengths.size(); ++b) {
      if (mask.lengths[b] > dims.seq_len) {
        throw Error(std::string(fn) + ": mask.lengths[" + std::to_string(b) + "] is " +
                    std::to_string(mask.lengths[b]) + ", expected at most T=" +
                    std::to_string(dims.seq_len));
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
}

kernels::HeadMask head_mask(const Mask& mask, const AttentionDims& dims, std::size_t b,
                            std::size_t h) {
  kernels::HeadMask m;
  m.seq_len = dims.seq_len;
  m.causal = mask.causal;
  m.key_length = mask.lengths.empty() ? dims.seq_len : mask.lengths[b];
  if (!mask.additive.empty()) {
    m.additive = mask.additive.data.data() + slice_offset(mask.additive.rank(), dims, b, h);
  }
  if (!mask.allowed.empty()) {
    m.allowed = mask.allowed.data.data() + slice_offset(mask.allowed.shape.size(), dims, b, h);
  }
  return m;
}

}  // namespace attnscope::detail
