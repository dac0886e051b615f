#!/usr/bin/env bash
# Build the libFuzzer targets with clang and run each for a while, one after
# the other (never two fuzzers at once).
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
# Seeds come from tests/fuzz/corpus/<target>/; new inputs go to
# $AJ_FUZZ_BUILD/corpus/<target>/ (not committed; default build-fuzz). A crash
# keeps its input in $AJ_FUZZ_BUILD/crashes/<target>/ and makes the exit
# status non-zero; the other targets still run. One line per target reports
# executions, coverage (edges), corpus size and crashes.
#   AJ_FUZZ_BUILD  build directory (default build-fuzz)
#   AJ_FUZZ_NICE   nice level for the fuzzers (default 10)
#   AJ_FUZZ_RUNS   stop a target after this many executions as well
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-60}
shift || true
build=${AJ_FUZZ_BUILD:-build-fuzz}
nice_level=${AJ_FUZZ_NICE:-10}
command -v clang >/dev/null || { echo "fuzz: clang is not installed (apt-get install clang)"; exit 1; }

# Optimised like a release build: the sanitizers stay on, executions go faster.
# A failed configure or build prints the compiler's own lines (a missing sanitizer runtime shows
# up only as a link error).
mkdir -p "$build"
if ! CC=clang cmake -S . -B "$build" -G Ninja -DAJ_FUZZ=ON -DBUILD_TESTING=OFF \
     -DAJ_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build/configure.log" 2>&1; then
  echo "fuzz: configuring the clang build failed:"; tail -n 30 "$build/configure.log"; exit 1
fi
if ! cmake --build "$build" -j "$(nproc)" >"$build/build.log" 2>&1; then
  echo "fuzz: building the fuzz targets failed:"
  grep -m 20 -E 'error|undefined reference|cannot find' "$build/build.log" || tail -n 30 "$build/build.log"
  exit 1
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.c; do targets+=("$(basename "$f" .c)"); done
fi

status=0
for t in "${targets[@]}"; do
  work=$build/corpus/$t crashes=$build/crashes/$t
  mkdir -p "$work" "$crashes"
  seeds=tests/fuzz/corpus/$t
  [ -d "$seeds" ] || seeds=
  dict=tests/fuzz/$t.dict
  [ -f "$dict" ] && extra=(-dict="$dict") || extra=()
  [ -n "${AJ_FUZZ_RUNS:-}" ] && extra+=(-runs="$AJ_FUZZ_RUNS")
  log=$build/$t.log
  start=$(date +%s)
  if nice -n "$nice_level" "$build"/tests/fuzz/"$t" -max_total_time="$secs" \
       -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 "${extra[@]}" \
       -artifact_prefix="$crashes/" "$work" $seeds >"$log" 2>&1; then
    res=ok
  else
    res=CRASH
    status=1
  fi
  took=$(( $(date +%s) - start ))
  # A run that died early has none of these lines: report "?" and go on.
  execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}' || true)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}' || true)
  corp=$(grep -oE 'corp: [0-9]+' "$log" | tail -1 | awk '{print $2}' || true)
  # slow-unit-* files are libFuzzer's notes on slow inputs, not failures
  found=$(find "$crashes" -type f ! -name 'slow-unit-*' | wc -l)
  printf '%-18s %-6s executions=%s coverage=%s corpus=%s crashes=%s seconds=%s\n' \
    "$t" "$res" "${execs:-?}" "${cov:-?}" "${corp:-?}" "$found" "$took"
  [ "$res" = ok ] || tail -n 40 "$log"
done
exit $status
