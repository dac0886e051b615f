# Test cases for the shell test scripts (sourced). Each case prints
# "ok   - NAME" or "FAIL - NAME", a failure followed by the output it captured;
# finish prints the totals and returns non-zero if any case failed. A script
# that sets its own EXIT trap removes $t_out itself.
t_pass=0
t_fail=0
t_out=$(mktemp "${TMPDIR:-/tmp}/aj-test.XXXXXX")
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

# expect_fail NAME MESSAGE cmd...   the command fails and its output contains MESSAGE (fixed string)
expect_fail() {
  local name=$1 msg=$2; shift 2
  if "$@" >"$t_out" 2>&1; then
    echo "(command succeeded, expected failure with: $msg)" >>"$t_out"; fail "$name"
  elif grep -qF -- "$msg" "$t_out"; then ok "$name"
  else echo "(expected message: $msg)" >>"$t_out"; fail "$name"
  fi
}

# expect_eq NAME WANT cmd...        the command succeeds and prints exactly WANT
expect_eq() {
  local name=$1 want=$2 got; shift 2
  if got=$("$@" 2>"$t_out") && [[ $got == "$want" ]]; then ok "$name"
  else echo "(got '$got', want '$want')" >>"$t_out"; fail "$name"
  fi
}

finish() {
  echo "# $(basename "$0"): $t_pass passed, $t_fail failed"
  ((t_fail == 0))
}
