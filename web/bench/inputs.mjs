// What the benchmark scripts share: their deterministic inputs, the process CPU clock and
// the name of the CPU.
import { readFileSync } from 'node:fs';
import os from 'node:os';

import { gaussian } from './gaussian.mjs';

export { gaussian };

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

/**
 * Seeded engine.attention arguments: q (1, H, Tq, d) against k, v (1, Hkv, Tk, d), causal,
 * the fast path, into one reused output; a peer given the same seeds gets the same inputs.
 */
export function attentionArgs({ H, Hkv, Tq, Tk, d }, options = {}) {
  return {
    q: gaussian(H * Tq * d, 1),
    k: gaussian(Hkv * Tk * d, 2),
    v: gaussian(Hkv * Tk * d, 3),
    shape: [1, H, Tq, d],
    kvShape: [1, Hkv, Tk, d],
    mask: 'causal',
    trace: false,
    out: new Float32Array(H * Tq * d),
    ...options,
  };
}
