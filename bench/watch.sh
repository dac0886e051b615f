#!/usr/bin/env bash
# Watch delivery on a real kube-apiserver + etcd (bench/watch_bench.c): events
# per second, create-to-callback delay and the loop's resident memory.
#
# Usage: bench/watch.sh [N] [WATCHES] [RUNS]   (defaults 1000 3 2)
# Needs a build in $BUILD (default build/; point it at another build to
# compare) and the control plane binaries (tests/controlplane/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
w=${2:-3}
runs=${3:-2}
build=${BUILD:-build}
[[ -f $build/src/libajkube.a ]] || { echo "build first: cmake --build $build"; exit 1; }

tmp=$(mktemp -d)
cp_dir=$tmp/cp
cleanup() {
  tests/controlplane/stop.sh --dir "$cp_dir" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# shellcheck disable=SC2046
cc -O2 -std=gnu11 -Isrc $(pkg-config --cflags libcjson) bench/watch_bench.c -o "$tmp/watch_bench" \
  "$build/src/libajkube.a" "$build/src/libajcore.a" \
  $(pkg-config --libs libcurl libwebsockets openssl libcjson yaml-0.1) -lm -lpthread

tests/controlplane/start.sh --dir "$cp_dir" >/dev/null
# shellcheck disable=SC1091
source "$cp_dir/env"
for ((i = 1; i <= runs; i++)); do
  "$AJ_KUBECTL" create namespace "watch-bench-$i" >/dev/null
  "$tmp/watch_bench" "$KUBECONFIG" "watch-bench-$i" "$n" "$w"
done
