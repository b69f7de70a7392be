#!/usr/bin/env bash
# Formats the tracked sources: clang-format (.clang-format) over the C++ in
# cpp/, tests/ and web/bench/, Prettier (.prettierrc.json, .prettierignore)
# over TypeScript, JavaScript, JSON, CSS and HTML. (Markdown is left as written:
# Prettier would pad every table of the docs to its widest cell.)
#   scripts/format.sh           rewrite the files in place
#   scripts/format.sh --check   change nothing; list what is not formatted, exit 1 if any
set -euo pipefail
cd "$(dirname "$0")/.."
mode=fix
case "${1:-}" in
  --check) mode=check ;;
  '') ;;
  *) echo "usage: scripts/format.sh [--check]" >&2; exit 2 ;;
esac

# clang-format's output changes between major versions: the one Debian 12 ships.
clang_format=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format || true)}
[[ -n $clang_format ]] || { echo "format: clang-format not found (scripts/setup.sh installs it)" >&2; exit 2; }
prettier=node_modules/.bin/prettier
[[ -x $prettier ]] || { echo "format: $prettier not found (run npm ci)" >&2; exit 2; }

mapfile -t cxx < <(git ls-files 'cpp/*.cpp' 'cpp/*.hpp' 'tests/*.cpp' 'tests/*.hpp' 'web/bench/*.cpp')
mapfile -t web < <(git ls-files '*.ts' '*.mts' '*.mjs' '*.js' '*.json' '*.css' '*.html')

status=0
if [[ $mode == check ]]; then
  unformatted=0
  for f in "${cxx[@]}"; do
    if ! "$clang_format" --style=file "$f" | cmp -s "$f" -; then
      echo "$f"
      unformatted=$((unformatted + 1))
    fi
  done
  ((unformatted == 0)) || { echo "format: $unformatted C++ files differ from clang-format"; status=1; }
  "$prettier" --check --log-level=warn "${web[@]}" || status=1
  ((status == 0)) && echo "format: all ${#cxx[@]} C++ and ${#web[@]} web files are formatted"
else
  "$clang_format" --style=file -i "${cxx[@]}"
  "$prettier" --write --log-level=warn "${web[@]}"
  echo "format: ${#cxx[@]} C++ and ${#web[@]} web files formatted"
fi
exit $status
