// Warming a runtime up before it is timed. No Node imports: the Chromium
// runner (threads-browser.mjs) loads it too.

/**
 * Calls `run` untimed until three calls in a row agree within 15 % (or
 * `limitMs` pass): V8 first runs wasm from its baseline compiler and swaps in
 * optimised code as its background compiler finishes, which takes seconds on
 * a busy machine, in Chromium and in Node.
 */
export async function warmUp(run, limitMs) {
  const start = performance.now();
  const last = [];
  while (performance.now() - start < limitMs) {
    const t0 = performance.now();
    await run();
    last.push(performance.now() - t0);
    if (last.length > 3) last.shift();
    if (last.length === 3 && Math.max(...last) <= 1.15 * Math.min(...last)) return;
  }
}
