#!/usr/bin/env bash
# The original Python aj (PyPI azure_jobs) against this one, on the same
# four-level template chain (examples/.azure_jobs, template pretrain), started
# alternately in one run with posix_spawn (bench/spawn_bench.c):
#   - its `aj run -d` against our `aj render` and our `aj run -d`;
#   - `aj --help` against ours;
#   - `aj template show pretrain` against ours.
# The original is installed with pip into a venv under the user's cache dir
# (AJ_ORIGINAL_VENV, default ~/.cache/aj/bench-original/venv), once; its
# version is printed. RUNS (default 20) runs of each.
#
#   bash bench/original.sh          # builds into build-bench/ (Release)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

runs=${RUNS:-20}
build=${BUILD_DIR:-build-bench}
venv=${AJ_ORIGINAL_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/aj/bench-original/venv}

if [ ! -x "$venv/bin/aj" ]; then
	python3 -m venv "$venv"
	"$venv/bin/pip" install -q azure_jobs
fi
orig=$venv/bin/aj
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build "$build" --target aj >/dev/null
aj="$root/$build/src/aj"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/spawn_bench" bench/spawn_bench.c

# Both read .azure_jobs from the current directory: a project holding only
# the examples' template home.
mkdir "$tmp/project"
cp -r examples/.azure_jobs "$tmp/project/"
job=(-t pretrain python train.py --config configs/pretrain.yaml)
cmds=(
	-C "$tmp/project" "$orig" run -d "${job[@]}" --
	-C "$tmp/project" "$aj" render "${job[@]}" --
	-C "$tmp/project" "$aj" run -d "${job[@]}" --
	-C "$tmp/project" "$orig" --help --
	-C "$tmp/project" "$aj" --help --
	-C "$tmp/project" "$orig" template show pretrain --
	-C "$tmp/project" "$aj" template show pretrain
)
"$tmp/spawn_bench" 2 "${cmds[@]}" >/dev/null   # fails loudly here; warms the caches
load=$(cut -d' ' -f1-3 /proc/loadavg)
mapfile -t r < <("$tmp/spawn_bench" "$runs" "${cmds[@]}")

echo "original: azure_jobs $("$venv/bin/pip" show azure_jobs | sed -n 's/^Version: //p'), $("$venv/bin/python" --version)"
echo "runs: $runs each, alternating; load average before: $load, after: $(cut -d' ' -f1-3 /proc/loadavg)"
names=("original aj run -d" "aj render" "aj run -d" "original aj --help" "aj --help"
       "original aj template show" "aj template show")
for i in "${!names[@]}"; do
	read -r p50 p90 <<<"${r[$i]}"
	printf '%-28s p50 %8d us  p90 %8d us\n' "${names[$i]}" "$p50" "$p90"
done
p50() { cut -d' ' -f1 <<<"${r[$1]}"; }
awk -v o="$(p50 0)" -v r="$(p50 1)" -v d="$(p50 2)" -v oh="$(p50 3)" -v h="$(p50 4)" \
    -v os="$(p50 5)" -v s="$(p50 6)" 'BEGIN {
	printf "ratios (p50, original / ours): run -d / render %.0fx, run -d / run -d %.0fx, --help %.0fx, template show %.0fx\n",
	       o / r, o / d, oh / h, os / s }'
