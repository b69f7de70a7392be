// The next token's probabilities from the model's logits: softmax, and the most likely
// tokens found in one pass over the vocabulary (sorting 50 257 indices on every edit
// would cost more than drawing the page).

/** softmax(logits) at `token`, for many tokens: exp(v − max) / Σ exp(· − max). */
export function probabilities(logits: Float32Array): (token: number) => number {
  let max = -Infinity;
  for (const v of logits) max = Math.max(max, v);
  let sum = 0;
  for (const v of logits) sum += Math.exp(v - max);
  return (token) =>
    token >= 0 && token < logits.length ? Math.exp(logits[token]! - max) / sum : 0;
}

/** The indices of the k largest values, largest first, ties by the lower index. */
function largest(values: Float32Array, k: number): number[] {
  const top: number[] = [];
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (top.length === k && !(v > values[top[k - 1]!]!)) continue;
    let at = Math.min(top.length, k - 1);
    while (at > 0 && v > values[top[at - 1]!]!) at--;
    top.splice(at, 0, i);
    if (top.length > k) top.pop();
  }
  return top;
}

/** The k most likely tokens of softmax(logits), most likely first (ties by token id). */
export function topTokens(logits: Float32Array, k: number): { token: number; p: number }[] {
  const p = probabilities(logits);
  return largest(logits, k).map((token) => ({ token, p: p(token) }));
}
