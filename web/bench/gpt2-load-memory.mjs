// Loads one .safetensors file with engine.loadModelFromBlob in a fresh
// process and prints, as JSON, the time it took and the process's resident
// memory: after creating the engine (the baseline) and at its peak (the
// kernel's high-water mark, getrusage's ru_maxrss), so the peak minus the
// baseline is what loading cost at its worst.
//   node web/bench/gpt2-load-memory.mjs <file.safetensors>
import { openAsBlob } from 'node:fs';
import { loadAttnScope } from './attnscope-runner.mjs';

const path = process.argv[2];
const engine = await loadAttnScope();
const baseline = process.memoryUsage().rss;
const wall = performance.now();
const cpu = process.cpuUsage();
const model = await engine.loadModelFromBlob(await openAsBlob(path));
const used = process.cpuUsage(cpu);
console.log(
  JSON.stringify({
    wallMs: performance.now() - wall,
    cpuMs: (used.user + used.system) / 1000,
    baselineRss: baseline,
    peakRss: process.resourceUsage().maxRSS * 1024,
    rssAfter: process.memoryUsage().rss,
    config: model.config,
  }),
);
model.dispose();
