#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build, test and serve
# attnscope. Idempotent: when everything is present it only checks and exits.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages: compilers and libraries for the core, Emscripten for the
# wasm build, clang-format for scripts/format.sh, Chromium for the end-to-end
# tests.
apt_packages=(g++ cmake make clang clang-format libclang-rt-14-dev emscripten binaryen
              libxsimd-dev catch2 chromium nodejs npm git ca-certificates)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# nodejs/npm may come from outside Debian (e.g. a newer Node on PATH); accept that.
if command -v node >/dev/null && command -v npm >/dev/null; then
  filtered=()
  for p in "${missing[@]}"; do [[ $p == nodejs || $p == npm ]] || filtered+=("$p"); done
  missing=("${filtered[@]+"${filtered[@]}"}")
fi
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [[ $(id -u) == 0 ]] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm packages, exactly as locked.
if [[ -f package-lock.json ]]; then
  stamp=node_modules/.attnscope-lock-stamp
  if [[ ! -f $stamp ]] || ! cmp -s package-lock.json "$stamp"; then
    echo "setup: npm ci"
    npm ci --no-audit --no-fund --loglevel=error
    cp package-lock.json "$stamp"
  fi
fi
echo "setup: ok"
