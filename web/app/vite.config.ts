// The demo site imports the package by its name; 'attnscope' resolves to the repo's
// built dist/ (the package.json "exports"), so the site runs exactly what users get.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');

type Exports = Record<string, string | Record<string, string | Record<string, string>>>;

/** The browser file of a package.json "exports" entry. */
function browserEntry(entry: Exports[string] | undefined): string | null {
  if (!entry) return null;
  if (typeof entry === 'string') return entry;
  for (const cond of ['browser', 'import', 'default']) {
    const v = entry[cond];
    if (typeof v === 'string') return v;
    if (v && typeof v === 'object') {
      const inner = browserEntry(v as Exports[string]);
      if (inner) return inner;
    }
  }
  return null;
}

function packageAliases(): { find: RegExp; replacement: string }[] {
  const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as { exports?: Exports };
  const main = browserEntry(pkg.exports?.['.']);
  const worker = browserEntry(pkg.exports?.['./worker']);
  if (!main || !worker || !existsSync(resolve(root, main)) || !existsSync(resolve(root, worker)))
    throw new Error('attnscope is not built: run `npm run build` first (package.json exports "." and "./worker" must point into dist/).');
  return [
    { find: /^attnscope$/, replacement: resolve(root, main) },
    { find: /^attnscope\/worker$/, replacement: resolve(root, worker) },
  ];
}

/** The CSP meta is for the built site; the dev server injects inline styles it would block. */
function dropCspInDev(): Plugin {
  return {
    name: 'drop-csp-in-dev',
    apply: 'serve',
    transformIndexHtml: (html) => html.replace(/<meta http-equiv="Content-Security-Policy"[^>]*>/, ''),
  };
}

export default defineConfig(({ isPreview }) => ({
  root: here,
  base: './',
  plugins: [dropCspInDev()],
  // Previewing serves the built files only; it needs no package.
  resolve: { alias: isPreview ? [] : packageAliases() },
  worker: { format: 'es' },
  build: { outDir: resolve(here, 'dist'), emptyOutDir: true, target: 'es2022', assetsInlineLimit: 0, chunkSizeWarningLimit: 2000 },
  server: { fs: { allow: [root] } },
  preview: { host: '127.0.0.1' },
}));
