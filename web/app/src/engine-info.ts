// The engine's version line, once the worker has said it.
import { signal } from '@preact/signals';
import { engineVersion } from './compute';
import { byId } from './dom';

export const engineInfo = signal('');

export function showEngineInfo(): void {
  engineVersion()
    .then((v) => {
      engineInfo.value = v;
      byId('engine-info').textContent = `Engine: attnscope ${v} in a Web Worker.`;
    })
    .catch(() => undefined);
}
