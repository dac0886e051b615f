# Helpers for the chart and packaging tests (sourced). Each case prints "ok" or
# "FAIL" with its name; finish exits non-zero if any case failed.
set -uo pipefail
helm_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$helm_dir/../.." && pwd)
chart=$repo_root/charts/aj-controller

t_pass=0
t_fail=0
t_out=$(mktemp "${TMPDIR:-/tmp}/aj-helm-test.XXXXXX")
trap 'rm -f "$t_out"' EXIT

ok() { t_pass=$((t_pass + 1)); echo "ok   - $1"; }
fail() {
  t_fail=$((t_fail + 1)); echo "FAIL - $1"
  [[ -s $t_out ]] && sed 's/^/       | /' "$t_out" | head -n 30
  return 0
}
# expect_ok NAME cmd...             the command succeeds
expect_ok() {
  local name=$1; shift
  if "$@" >"$t_out" 2>&1; then ok "$name"; else fail "$name"; fi
}
# expect_fail NAME MESSAGE cmd...   the command fails and its output contains MESSAGE
expect_fail() {
  local name=$1 msg=$2; shift 2
  if "$@" >"$t_out" 2>&1; then
    echo "(command succeeded, expected failure with: $msg)" >>"$t_out"; fail "$name"
  elif grep -qF -- "$msg" "$t_out"; then ok "$name"
  else echo "(expected message: $msg)" >>"$t_out"; fail "$name"
  fi
}
finish() {
  echo "# $(basename "$0"): $t_pass passed, $t_fail failed"
  ((t_fail == 0))
}

# The helm binary: $AJ_HELM, else the cached build (never built here: a test
# must not spend minutes compiling; scripts/test.sh builds it first).
helm_bin() {
  if [[ -n ${AJ_HELM:-} ]]; then echo "$AJ_HELM"; return 0; fi
  "$helm_dir/build-helm.sh" --no-build | tail -n 1
}
