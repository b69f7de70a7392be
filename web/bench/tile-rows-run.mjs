// The site's start-edit forward (GPT-2, T = 64, traced, reusePrefix, logits of the last token,
// one layer's residual stream) at each register-tile height, alternating by pairs of edits, after
// 150 ms of quiet each as between a visitor's edits. Shared by tile-rows-bench.mjs (Node) and
// tile-rows-worker.mjs (a Chromium dedicated worker).

const kTokens = 64;
const kQuietMs = 150;

/** { simdArch, threads, measured (the engine's own choice at load), ms: { 4: [...], 6: [...] } } */
export async function runTileRows(createAttnScope, bytes, { threads, edits }) {
  const engine = await createAttnScope({ threads });
  const model = engine.loadModel(bytes);
  const measured = engine.matmulTileRows;
  const base = Array.from({ length: kTokens }, (_, i) => (i * 7919) % 50257);
  const ms = { 4: [], 6: [] };
  try {
    // Two edits untimed, then pairs of edits at 6 rows and at 4 rows in turn.
    for (let edit = 0; edit < 2 * edits + 2; edit++) {
      const rows = (edit >> 1) % 2 ? 6 : 4;
      engine.setMatmulTileRows(rows);
      const tokens = base.map((t, i) => (i === 0 ? (edit % 2 ? 464 : 262) : t));
      await new Promise((resolve) => setTimeout(resolve, kQuietMs));
      const start = performance.now();
      model.forward({ tokens, trace: true, reusePrefix: true, logits: 'last', hidden: [5] });
      if (edit >= 2) ms[rows].push(performance.now() - start);
    }
  } finally {
    model.dispose();
  }
  return { simdArch: engine.simdArch, threads: engine.threads, measured, ms };
}
