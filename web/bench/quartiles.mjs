// The median, quartiles and 90th percentile of a list of numbers (of per-round ratios,
// of edits' times), by linear interpolation between the sorted values. No Node imports: the
// Chromium runner (threads-browser.mjs) loads it too.

/** The f-quantile (0 ≤ f ≤ 1) of xs, interpolated; NaN for an empty list. */
export function quantile(xs, f) {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const at = f * (sorted.length - 1);
  const below = Math.floor(at);
  const above = Math.min(sorted.length - 1, below + 1);
  return sorted[below] + (at - below) * (sorted[above] - sorted[below]);
}

/** { median, q1, q3 } of xs. */
export function quartiles(xs) {
  return { median: quantile(xs, 0.5), q1: quantile(xs, 0.25), q3: quantile(xs, 0.75) };
}

/**
 * { median, p90, min, max, n } of a run's timings, or null for none. The 90th percentile
 * is interpolated (of 10 edits, between the 9th and the 10th); the largest is `max`.
 */
export function timingSummary(xs) {
  if (xs.length === 0) return null;
  return {
    median: quantile(xs, 0.5),
    p90: quantile(xs, 0.9),
    min: Math.min(...xs),
    max: Math.max(...xs),
    n: xs.length,
  };
}
