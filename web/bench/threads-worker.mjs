// threads-page.mjs in a dedicated worker: the first message holds the
// options; the worker posts { log } lines, then { result } or { error }.
import { runInBrowser } from './threads-page.mjs';

self.onmessage = async ({ data: options }) => {
  try {
    const result = await runInBrowser(options, (line) => self.postMessage({ log: line }));
    self.postMessage({ result });
  } catch (e) {
    self.postMessage({ error: String(e?.stack ?? e) });
  }
};
