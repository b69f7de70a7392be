// Run before `npm pack`/`npm publish`: refuses to ship a dist/ that is
// missing an exported file or older than the sources it is built from.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const problems = [];

const targets = new Set();
const collect = (value) => {
  if (typeof value === 'string') targets.add(value);
  else if (value && typeof value === 'object') Object.values(value).forEach(collect);
};
collect(pkg.exports);
collect(pkg.main);
collect(pkg.types);
for (const target of targets) {
  try {
    statSync(join(root, target));
  } catch {
    problems.push(`${target} is missing (run npm run build)`);
  }
}

const newest = (dir, pattern) => {
  let latest = { time: 0, file: '' };
  for (const entry of readdirSync(join(root, dir), { recursive: true })) {
    const file = join(root, dir, String(entry));
    if (!pattern.test(file)) continue;
    const time = statSync(file).mtimeMs;
    if (time > latest.time) latest = { time, file };
  }
  return latest;
};
const builtAt = (file) => {
  try {
    return statSync(join(root, file)).mtimeMs;
  } catch {
    return 0;
  }
};
const checks = [
  ['dist/attnscope.wasm', ['cpp'], /\.(cpp|hpp|txt)$/],
  ['dist/attnscope-threads.wasm', ['cpp'], /\.(cpp|hpp|txt)$/],
  ['dist/attnscope-threads-relaxed.wasm', ['cpp'], /\.(cpp|hpp|txt)$/],
  ['dist/index.js', ['web/lib'], /\.(ts|mts)$/],
];
for (const [built, dirs, pattern] of checks) {
  for (const dir of dirs) {
    const source = newest(dir, pattern);
    if (builtAt(built) && source.time > builtAt(built)) {
      problems.push(`${built} is older than ${source.file.slice(root.length)} (run npm run build)`);
    }
  }
}

if (problems.length) {
  console.error(`check-dist: refusing to pack:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
