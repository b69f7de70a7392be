// Backward passes of the layers around attention in a GPT-2 model: linear
// (Conv1D layout), LayerNorm, GELU (tanh form), softmax cross-entropy and the
// token and position embeddings. Row-major float32 throughout; parameter
// gradients are accumulated (+=) so that a caller can sum them over layers
// or sequences, input gradients as each function says.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attnscope::detail {

/// y (rows, out) = x (rows, in) · w (in, out) + b. Given dy (rows, out):
/// dx = dy · wᵀ is written (when dx is not null); dw += xᵀ · dy and
/// db += the column sums of dy (when db is not null).
void linear_backward(const float* x, const float* w, const float* dy, std::size_t rows,
                     std::size_t in, std::size_t out, float* dx, float* dw, float* db);

/// y = LayerNorm(x)·gamma + beta per row of n (biased variance, eps).
/// dx += the input gradient; dgamma, dbeta += theirs.
void layer_norm_backward(const float* x, const float* gamma, const float* dy, std::size_t rows,
                         std::size_t n, float eps, float* dx, float* dgamma, float* dbeta);

/// y = x/2 · (1 + tanh(√(2/π)·(x + 0.044715·x³))). dx = dy · y'(x) is
/// written (dx may alias dy).
void gelu_tanh_backward(const float* x, const float* dy, std::size_t n, float* dx);

/// Mean over `rows` of −log softmax(logits[r])[targets[r]], computed stably
/// (max-subtracted, sums in double) for any finite logits. When dlogits is
/// not null it receives the gradient (softmax − one-hot) / rows.
/// With `selected` (rows flags, 0 or 1, at least one 1), the mean runs over
/// the selected rows only: the others add nothing to the loss and get a zero
/// gradient, and the divisor is the number selected. A null `selected` is
/// the same as all ones, bit for bit.
double cross_entropy(const float* logits, const std::int64_t* targets, std::size_t rows,
                     std::size_t vocab, float* dlogits, const std::uint8_t* selected = nullptr);

/// x[t] = wte[tokens[t]] + wpe[first_position + t] for t < count, rows of C:
/// dwte[tokens[t]] += dx[t] and dwpe[first_position + t] += dx[t].
void embedding_backward(const std::int64_t* tokens, std::size_t count, std::size_t first_position,
                        const float* dx, std::size_t channels, float* dwte, float* dwpe);

}  // namespace attnscope::detail
