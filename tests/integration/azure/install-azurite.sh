#!/usr/bin/env bash
# Install the pinned Azurite (blob emulator used as the storage peer) into a
# cache directory outside the repository and print the path of azurite-blob.
# 3.35.0 is the newest release that still runs on Node 20.
# Usage: install-azurite.sh            (cache: ${AJ_CACHE_DIR:-$HOME/.cache/aj}/azurite)
set -euo pipefail

version=3.35.0
cache=${AJ_CACHE_DIR:-$HOME/.cache/aj}/azurite
bin=$cache/$version/node_modules/.bin/azurite-blob

if [[ ! -x $bin ]]; then
  command -v npm >/dev/null || { echo "install-azurite.sh: npm not found" >&2; exit 1; }
  mkdir -p "$cache/$version"
  # A private prefix keeps the install away from any global or project tree.
  (cd "$cache/$version" && npm install --no-audit --no-fund --loglevel=error \
      --prefix "$cache/$version" "azurite@$version" >&2)
fi
[[ -x $bin ]] || { echo "install-azurite.sh: $bin missing after install" >&2; exit 1; }
echo "$bin"
