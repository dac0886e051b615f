#!/usr/bin/env bash
# Build the libFuzzer targets with clang and run each for a while.
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
# Seeds come from tests/fuzz/corpus/<target>/; new inputs go to
# build-fuzz/corpus/<target>/ (not committed). A crash stops with its input
# kept in build-fuzz/crashes/<target>/ and a non-zero exit.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-60}
shift || true
command -v clang >/dev/null || { echo "fuzz: clang is not installed (apt-get install clang)"; exit 1; }

CC=clang cmake -S . -B build-fuzz -G Ninja -DAJ_FUZZ=ON -DBUILD_TESTING=OFF \
  -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-fuzz -j "$(nproc)" >/dev/null

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.c; do targets+=("$(basename "$f" .c)"); done
fi

status=0
for t in "${targets[@]}"; do
  work=build-fuzz/corpus/$t crashes=build-fuzz/crashes/$t
  mkdir -p "$work" "$crashes"
  seeds=tests/fuzz/corpus/$t
  [ -d "$seeds" ] || seeds=
  dict=tests/fuzz/$t.dict
  [ -f "$dict" ] && dictarg=(-dict="$dict") || dictarg=()
  log=build-fuzz/$t.log
  if ./build-fuzz/tests/fuzz/"$t" -max_total_time="$secs" -rss_limit_mb=2048 \
       -timeout=10 -print_final_stats=1 "${dictarg[@]}" \
       -artifact_prefix="$crashes/" "$work" $seeds >"$log" 2>&1; then
    res=ok
  else
    res=CRASH
    status=1
  fi
  execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}')
  printf '%-24s %-6s executions=%s coverage=%s seconds=%s\n' "$t" "$res" "${execs:-?}" "${cov:-?}" "$secs"
  [ "$res" = ok ] || tail -n 30 "$log"
done
exit $status
