// Writes the JSON export off the main thread (see stateJsonBlob).
import { safeJson } from './export';

self.onmessage = (e: MessageEvent<unknown>) => {
  self.postMessage(new Blob([safeJson(e.data)], { type: 'application/json' }));
};
