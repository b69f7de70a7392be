#!/usr/bin/env bash
# Builds the demo site (web/app, an npm workspace) into web/app/dist/. The site imports the package
# 'attnscope' from the repo's dist/, so `npm run build` must have run first.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -f dist/browser.js || ! -f dist/worker.js || ! -f dist/attnscope.wasm ]]; then
  echo "build-site: dist/ is missing; run 'npm run build' first" >&2
  exit 1
fi
node node_modules/typescript/bin/tsc -p web/app/tsconfig.json
node node_modules/vite/bin/vite.js build --config web/app/vite.config.ts --logLevel warn
echo "site built: web/app/dist/"
