// The demo site. It imports the package 'attnscope' like any consumer (an npm
// workspace dependency on the repo's package), so it runs exactly what users get.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');

/** The CSP meta is for the built site; the dev server injects inline styles it would block. */
function dropCspInDev(): Plugin {
  return {
    name: 'drop-csp-in-dev',
    apply: 'serve',
    transformIndexHtml: (html) =>
      html.replace(/<meta http-equiv="Content-Security-Policy"[^>]*>/, ''),
  };
}

/**
 * Cross-origin isolation: with these headers the page gets SharedArrayBuffer,
 * and the package's engine runs its threaded build (docs/USAGE.md, "Threads").
 * The site loads nothing from other origins, so require-corp blocks nothing.
 */
const crossOriginIsolation = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

export default defineConfig({
  root: here,
  base: './',
  plugins: [dropCspInDev()],
  // JSX through Preact's automatic runtime (tsconfig says the same for type checking).
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  worker: { format: 'es' },
  build: {
    outDir: resolve(here, 'dist'),
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 2000,
  },
  server: { fs: { allow: [root] }, headers: crossOriginIsolation },
  preview: { host: '127.0.0.1', headers: crossOriginIsolation },
});
