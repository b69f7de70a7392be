#!/usr/bin/env bash
# Builds everything (package, then site) and serves the site on localhost,
# cross-origin isolated (COOP/COEP headers, web/app/vite.config.ts), so the
# engine runs its threaded build.
# PORT=… picks the port (default 5173).
set -euo pipefail
cd "$(dirname "$0")/.."
# A fresh machine gets its toolchain first; when all is present this is quick.
[[ ${ATTN_SKIP_SETUP:-0} == 1 ]] || bash scripts/setup.sh
npm run build
bash scripts/build-site.sh
port=${PORT:-5173}
echo "attnscope demo: http://127.0.0.1:${port}/  (Ctrl+C to stop)"
exec node node_modules/vite/bin/vite.js preview --config web/app/vite.config.ts --strictPort --port "$port" --host 127.0.0.1
