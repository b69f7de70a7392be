// tile-rows-run.mjs in a dedicated worker: the message holds the options, the package's URL and
// the model's; the worker posts { result } or { error }.
import { runTileRows } from './tile-rows-run.mjs';

self.onmessage = async ({ data: { options, packageUrl, modelUrl } }) => {
  try {
    const { createAttnScope } = await import(packageUrl);
    const bytes = new Uint8Array(await (await fetch(modelUrl)).arrayBuffer());
    self.postMessage({ result: await runTileRows(createAttnScope, bytes, options) });
  } catch (e) {
    self.postMessage({ error: String(e?.stack ?? e) });
  }
};
