#!/usr/bin/env bash
# Code archive and ignore rules. Generates a tree of FILES files totalling
# BYTES (default 50000 files, 1 GiB; half text-like, half random) in a temp
# dir, then times, on the warm page cache and alternately REPEAT times
# (default 3, best kept):
#   - aj's archive: walk + tar (pax) + gzip level 1 + SHA-256, one thread;
#   - tar -c | gzip -1 | sha256sum on the same tree (three processes);
# and the ignore matcher on PATHS generated paths (default 1M) against 50
# patterns. The generated tree is deleted at the end.
#
#   bash bench/code.sh              # builds into build-bench/ (Release)
#   FILES=5000 BYTES=104857600 bash bench/code.sh
set -euo pipefail
cd "$(dirname "$0")/.."

files=${FILES:-50000}
bytes=${BYTES:-1073741824}
paths=${PATHS_N:-1000000}
repeat=${REPEAT:-3}
build=${BUILD_DIR:-build-bench}

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build "$build" --target ajio ajcore >/dev/null

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck disable=SC2046
cc -O2 -std=gnu11 -Isrc bench/code_bench.c -o "$tmp/code_bench" \
	"$build/src/libajio.a" "$build/src/libajcore.a" \
	$(pkg-config --libs libarchive openssl libcjson yaml-0.1) -lm

tree="$tmp/tree"
mkdir "$tree"
echo "generating $files files, $bytes bytes..."
"$tmp/code_bench" gen "$tree" "$files" "$bytes"
# Warm the page cache so both sides read from memory.
tar -C "$tree" -cf - . >/dev/null

# Best of REPEAT for each side: wall seconds and CPU seconds (user + sys;
# for the pipeline, of all three processes).
TIMEFORMAT='%R %U %S'
best_aj=
best_tar=
for _ in $(seq "$repeat"); do
	out=$("$tmp/code_bench" archive "$tree")
	t=$(sed -n 's/^seconds //p' <<<"$out")
	if [ -z "$best_aj" ] || awk "BEGIN{exit !($t < $best_aj)}"; then
		best_aj=$t
		aj_out=$out
	fi
	read -r t u s < <({ time tar -C "$tree" -cf - . | gzip -1 | sha256sum >/dev/null; } 2>&1)
	if [ -z "$best_tar" ] || awk "BEGIN{exit !($t < $best_tar)}"; then
		best_tar=$t
		tar_cpu=$(awk "BEGIN{print $u + $s}")
	fi
done
tar_size=$(tar -C "$tree" -cf - . | gzip -1 | wc -c)
input=$(sed -n 's/^input_bytes //p' <<<"$aj_out")
aj_cpu=$(sed -n 's/^cpu_seconds //p' <<<"$aj_out")

echo "$aj_out"
awk -v a="$best_aj" -v ac="$aj_cpu" -v t="$best_tar" -v tc="$tar_cpu" \
    -v b="$input" -v ts="$tar_size" 'BEGIN {
	printf "aj archive+sha256: %.2f s wall (%.0f MB/s), %.2f s CPU\n", a, b / a / 1e6, ac
	printf "tar|gzip -1|sha256sum: %.2f s wall (%.0f MB/s), %.2f s CPU, %d bytes\n", t, b / t / 1e6, tc, ts
	printf "throughput ratio aj/pipeline: %.2f wall, %.2f per CPU second\n", t / a, tc / ac
}'

rm -rf "$tree"
"$tmp/code_bench" match "$paths"
