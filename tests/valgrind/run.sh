#!/usr/bin/env bash
# aj under valgrind memcheck: success and error paths, every example, and a
# sample of the adversarial corpus. Any leak (definite or indirect) or memory
# error fails the test.
#   run.sh AJ BUNDLE_CHECK SOURCE_DIR
set -uo pipefail
AJ=$1 BUNDLE_CHECK=$2 SRC=$3
VG=(valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite,indirect
    --error-exitcode=99 --track-fds=no)
command -v valgrind >/dev/null || { echo "valgrind is not installed"; exit 77; }
export AJ_HOME=$SRC/examples/.azure_jobs
failures=0 runs=0

# vg WANT_STATUS ARGS...: run aj under valgrind, expect that exit status.
vg() {
  local want=$1 rc; shift
  runs=$((runs + 1))
  "${VG[@]}" "$AJ" "$@" >/dev/null 2>"$tmp/err"
  rc=$?
  if [ "$rc" -ne "$want" ]; then
    failures=$((failures + 1))
    echo "FAIL (exit $rc, want $want): aj $*"
    grep -E '==[0-9]+==' "$tmp/err" | head -30
  fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

vg 0 --version
vg 0 --help
vg 2
vg 2 frobnicate
vg 2 run --bogus -t volcano --dry-run echo
vg 2 render -t volcano -n 0
vg 0 template list
vg 1 template show nothere
vg 1 render -t nothere -- python
for t in "$AJ_HOME"/template/*.yaml; do
  name=$(basename "$t" .yaml)
  [ "$name" = base ] && continue
  vg 0 template show "$name"
  vg 0 template validate "$name"
  vg 0 render -t "$name" --name job-1 -- python train.py --lr "it's \$(x)"
  vg 0 run -t "$name" --name job-1 --dry-run -o json -- python train.py
done

# A sample of the corpus: one case in eight, every kind of failure (not the
# generated huge inputs: the sanitizer run of the corpus covers those).
cases=()
i=0
for d in "$SRC"/tests/data/bad/*/; do
  [ -f "$d/home.py" ] && continue
  if [ $((i % 8)) -eq 0 ]; then cases+=("$(basename "$d")"); fi
  i=$((i + 1))
done
if ! AJ_CORPUS_WRAP="${VG[*]}" python3 "$SRC/tests/corpus/run_cli.py" "$AJ" "$BUNDLE_CHECK" \
    "$SRC/tests/data/bad" "${cases[@]}"; then
  failures=$((failures + 1))
fi

echo "valgrind: $runs aj commands and ${#cases[@]} corpus cases, $failures failed"
[ "$failures" -eq 0 ]
