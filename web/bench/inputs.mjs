// What the benchmark scripts share: their deterministic inputs, the process CPU clock and
// the name of the CPU.
import { readFileSync } from 'node:fs';
import os from 'node:os';

export { gaussian } from './gaussian.mjs';

/** CPU time of this process (all its threads), in ms. */
export function cpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * The CPU as the results should name it: the model, and on Linux its family and model numbers
 * and widest vector extension, which tell apart hosts that share a model name (a VM's "AMD EPYC"
 * can be a Zen 3 without AVX-512 one day and a Zen 5 with it the next).
 */
export function cpuName() {
  const model = os.cpus()[0]?.model ?? 'unknown CPU';
  let info = '';
  try {
    info = readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    return model;
  }
  const field = (name) => new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm').exec(info)?.[1]?.trim();
  const flags = new Set((field('flags') ?? '').split(/\s+/));
  const widest = flags.has('avx512f')
    ? 'AVX-512'
    : flags.has('avx2')
      ? 'AVX2'
      : flags.has('avx')
        ? 'AVX'
        : 'SSE';
  const family = field('cpu family');
  const number = field('model');
  return family && number ? `${model} (family ${family}, model ${number}, ${widest})` : model;
}
