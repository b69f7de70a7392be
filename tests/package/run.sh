#!/usr/bin/env bash
# Consumer tests of the packed package: npm pack → install into empty
# directories → import in Node, type-check a strict TypeScript consumer, and
# build + run a tiny Vite app (dev server and production build) and a
# no-bundler page (import map onto node_modules) in Chromium.
# Needs a built dist/ (npm run build).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
vite="node $root/node_modules/vite/bin/vite.js"
work=$(mktemp -d)
server=""
cleanup() {
  [[ -n $server ]] && kill "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

[[ -f dist/attnscope.wasm && -f dist/index.js ]] || { echo "package: dist/ is not built (npm run build)"; exit 1; }

echo "-- npm pack"
npm pack --silent --pack-destination "$work" >/dev/null
tarball=$(ls "$work"/attnscope-*.tgz)
# Only the whitelist ships: dist/, README.md, package.json (and LICENSE if present).
unexpected=$(tar -tzf "$tarball" | grep -vE '^package/(dist/|README\.md$|package\.json$|LICENSE)' || true)
[[ -z $unexpected ]] || { echo "package: unexpected files in the tarball:"; echo "$unexpected"; exit 1; }
tar -tzf "$tarball" > "$work/files"   # (grep -q on a pipe would cut tar off under pipefail)
grep -q '^package/dist/attnscope.wasm$' "$work/files"
grep -q '^package/dist/attnscope-relaxed.wasm$' "$work/files"
for threaded in attnscope-relaxed.mjs attnscope-threads.wasm attnscope-threads-relaxed.wasm attnscope-threads.mjs attnscope-threads-relaxed.mjs attnscope-threads.worker.js; do
  grep -q "^package/dist/$threaded\$" "$work/files" || { echo "package: dist/$threaded missing from the tarball"; exit 1; }
done
echo "tarball: $(basename "$tarball"), $(wc -c <"$tarball") bytes, $(tar -tzf "$tarball" | wc -l) files"

install_into() {  # dir: an empty project with only the tarball installed
  mkdir -p "$1"
  [[ -f $1/package.json ]] || echo '{ "name": "consumer", "private": true, "type": "module" }' >"$1/package.json"
  # --prefer-offline: the package's own dependency (gpt-tokenizer) comes from npm's cache when
  # it is there; on a fresh machine `npm ci` may have cached its tarball but not its registry
  # entry, which --offline would need. npm's own error is shown if the install fails.
  (cd "$1" && npm install --prefer-offline --no-audit --no-fund --loglevel=error "$tarball" >"$work/npm-install.log" 2>&1) ||
    { cat "$work/npm-install.log"; echo "package: npm install of the tarball into $1 failed"; exit 1; }
}

echo "-- Node consumer"
install_into "$work/node"
cp tests/package/consumer.mjs "$work/node/"
(cd "$work/node" && node consumer.mjs)

echo "-- TypeScript consumer (tsc --strict, NodeNext)"
cp tests/package/consumer.ts tests/package/tsconfig.consumer.json "$work/node/"
(cd "$work/node" && node "$root/node_modules/typescript/bin/tsc" -p tsconfig.consumer.json)
echo "tsc: ok"

echo "-- Vite consumer"
cp -r tests/package/vite-app "$work/vite-app"
install_into "$work/vite-app"
(cd "$work/vite-app" && $vite build --logLevel warn)
# Both builds are emitted: attnscope-<hash>.wasm and attnscope-relaxed-<hash>.wasm.
[[ $(ls "$work"/vite-app/dist/assets/ | grep -c '^attnscope-.*\.wasm$') -ge 2 ]] || { echo "vite build emitted fewer than 2 wasm files"; exit 1; }
ls "$work"/vite-app/dist/assets/ | grep -q '^attnscope-relaxed-.*\.wasm$' || { echo "vite build emitted no attnscope-relaxed.wasm"; exit 1; }
ls "$work"/vite-app/dist/assets/ | grep -q '^attnscope-threads-relaxed-.*\.wasm$' || { echo "vite build emitted no attnscope-threads-relaxed.wasm"; exit 1; }
echo "vite build: $(ls "$work"/vite-app/dist/assets/ | tr '\n' ' ')"

serve_and_check() {  # mode port
  (cd "$work/vite-app" && exec $vite "$1" --port "$2" --strictPort --host 127.0.0.1 --logLevel warn) &
  server=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$2/" >/dev/null && break; sleep 0.2; done
  node tests/package/browser-check.mjs "http://127.0.0.1:$2/"
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
}
echo "-- browser without a bundler (import map onto node_modules)"
mkdir -p "$work/plain" && cp tests/package/plain-page/* "$work/plain/"
install_into "$work/plain"
if [[ -x ${CHROMIUM:-/usr/bin/chromium} ]]; then
  node tests/package/static-server.mjs "$work/plain" 4393 &
  server=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:4393/" >/dev/null && break; sleep 0.2; done
  node tests/package/browser-check.mjs "http://127.0.0.1:4393/"
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
  echo "-- Vite app in Chromium: production build (preview) and dev server"
  serve_and_check preview 4391
  serve_and_check serve 4392
else
  echo "package: no Chromium, browser checks not run" >&2
  exit 1
fi
echo "package tests: ok"
