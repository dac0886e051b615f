#!/usr/bin/env bash
# Run one integration test program against a fresh Azurite.
# Usage: run.sh PROGRAM   (exit 77 = skipped: no npm to install Azurite with)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=azurite.sh
source "$here/azurite.sh"

if ! command -v npm >/dev/null && [[ ! -d ${AJ_CACHE_DIR:-$HOME/.cache/aj}/azurite ]]; then
  echo "skipped: npm is not installed"
  exit 77
fi
trap azurite_stop EXIT
azurite_start || exit 1
"$1"
