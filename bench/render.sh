#!/usr/bin/env bash
# `aj render` of the bundled four-level template chain (pretrain, which ships
# its code through the shared volume) against two floors: exec'ing /bin/true,
# and a trivial program linked to the same shared libraries as aj. Then the
# same render from an empty directory and from one holding a generated tree
# of FILES files totalling BYTES (default 50000, 1 GiB), second call each.
# Everything is started RUNS times (default 200), alternately, with
# posix_spawn (bench/spawn_bench.c); p50 and p90 wall times and the ratios
# of the p50s are printed, then instruction counts (callgrind).
#
#   bash bench/render.sh            # builds into build-bench/ (Release)
#   RUNS=1000 FILES=5000 BYTES=104857600 bash bench/render.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

runs=${RUNS:-200}
files=${FILES:-50000}
bytes=${BYTES:-1073741824}
build=${BUILD_DIR:-build-bench}

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build "$build" --target aj ajio ajcore >/dev/null
aj="$root/$build/src/aj"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The same-library floor: an empty main() linked to exactly the shared
# libraries aj needs (its DT_NEEDED entries), so the loader does the same
# work for both.
printf 'int main(void) { return 0; }\n' >"$tmp/floor.c"
needed=$(readelf -d "$aj" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -v '^libc\.so')
libs=()
for lib in $needed; do libs+=("-l:$lib"); done
cc -O2 -o "$tmp/floor" "$tmp/floor.c" -Wl,--no-as-needed "${libs[@]}"
cc -O2 -o "$tmp/spawn_bench" bench/spawn_bench.c
# shellcheck disable=SC2046
cc -O2 -std=gnu11 -Isrc bench/code_bench.c -o "$tmp/code_bench" \
	"$build/src/libajio.a" "$build/src/libajcore.a" \
	$(pkg-config --libs libarchive openssl libcjson yaml-0.1) -lm

# Two project directories with the examples' template home: one empty, one
# holding the generated tree.
for d in empty big; do
	mkdir -p "$tmp/$d"
	cp -r examples/.azure_jobs "$tmp/$d/"
done
echo "generating $files files, $bytes bytes..."
mkdir "$tmp/big/data"
"$tmp/code_bench" gen "$tmp/big/data" "$files" "$bytes" >/dev/null
tar -C "$tmp/big" -cf - . >/dev/null   # warm the page cache

render=("$aj" render -t pretrain --name bench python train.py --config configs/pretrain.yaml)
for d in empty big; do (cd "$tmp/$d" && "${render[@]}" >/dev/null); done   # the first calls

# Warm up, then measure.
"$tmp/spawn_bench" 20 /bin/true -- "$tmp/floor" -- -C "$tmp/empty" "${render[@]}" >/dev/null
load=$(cut -d' ' -f1-3 /proc/loadavg)
mapfile -t r < <("$tmp/spawn_bench" "$runs" /bin/true -- "$tmp/floor" -- \
	-C "$tmp/empty" "${render[@]}" -- -C "$tmp/big" "${render[@]}")
read -r true_p50 true_p90 <<<"${r[0]}"
read -r fl_p50 fl_p90 <<<"${r[1]}"
read -r aj_p50 aj_p90 <<<"${r[2]}"
read -r big_p50 big_p90 <<<"${r[3]}"

echo "runs: $runs each, alternating; load average before: $load, after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "libraries: $(echo $needed)"
echo "/bin/true                        p50 ${true_p50} us  p90 ${true_p90} us"
echo "floor (same libraries)           p50 ${fl_p50} us  p90 ${fl_p90} us"
echo "aj render, empty directory       p50 ${aj_p50} us  p90 ${aj_p90} us"
echo "aj render, $files files/$bytes B p50 ${big_p50} us  p90 ${big_p90} us"
awk -v a="$aj_p50" -v t="$true_p50" -v f="$fl_p50" -v b="$big_p50" 'BEGIN {
	printf "ratios (p50): render / true %.2fx, render / floor %.2fx, big tree / empty %.2fx\n",
	       a / t, a / f, b / a }'

# Instruction counts do not depend on what else the machine is doing.
if command -v valgrind >/dev/null 2>&1; then
	irs() {
		valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
			sed -n 's/.*refs: *//p' | tr -d ,
	}
	echo "instructions: /bin/true $(irs /bin/true), floor $(irs "$tmp/floor")," \
	     "aj render $(cd "$tmp/empty" && irs "${render[@]}")," \
	     "in the big tree $(cd "$tmp/big" && irs "${render[@]}")"
fi
