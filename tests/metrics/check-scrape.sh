#!/usr/bin/env bash
# A /metrics page checked by Prometheus's own tools.
# Usage: check-scrape.sh SCRAPE_FILE [DASHBOARD_JSON]
#   1. `promtool check metrics --extended --lint=none` parses it: any format error fails;
#   2. `promtool check metrics` lints it: problems are printed, never fatal;
#   3. with a dashboard: every query of it, evaluated by `promtool test rules` over the series of
#      the page (as prometheus-client's parser reads them), returns data: a query naming a metric
#      or label value the page lacks fails (dashboard_rules.py writes the rules and the test).
# Needs tests/metrics/build-promtool.sh and, for 3, tests/azure-models/setup-venv.sh (done by
# scripts/test.sh); prints "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib/expect.sh"
scrape=${1:?usage: check-scrape.sh SCRAPE_FILE [DASHBOARD_JSON]}
dashboard=${2:-}
promtool=$("$here/build-promtool.sh" --no-build | tail -n 1) ||
  { echo "FAIL - no promtool (run tests/metrics/build-promtool.sh)"; exit 1; }

expect_ok "promtool parses the exposition ($(grep -c '^# TYPE ' "$scrape") families)" \
  bash -c '"$1" check metrics --extended --lint=none <"$2" >/dev/null' _ "$promtool" "$scrape"
if lint=$("$promtool" check metrics <"$scrape" 2>&1); then
  echo "# promtool lint: no problems"
else
  echo "# promtool lint problems (reported, not fatal):"
  printf '%s\n' "$lint" | sed 's/^/#   /'
fi

if [[ -n $dashboard ]]; then
  py=$("$here/../azure-models/setup-venv.sh" --no-install | tail -n 1) ||
    { echo "FAIL - no venv (run tests/azure-models/setup-venv.sh)"; exit 1; }
  work=$(mktemp -d "${TMPDIR:-/tmp}/aj-dashboard.XXXXXX")
  trap 'rm -rf "$work" "$t_out"' EXIT
  if "$py" "$here/dashboard_rules.py" "$scrape" "$dashboard" "$work" >"$t_out" 2>&1; then
    n=$(grep -c '^  - alert: ' "$work/rules.yaml")
    if (cd "$work" && "$promtool" test rules test.yaml) >"$work/out" 2>&1; then
      ok "each of the dashboard's $n queries returns data from the page (promtool test rules)"
    else
      # name the queries that returned nothing, then promtool's own report
      for q in $(sed -n 's/^ *alertname: \(Q[0-9]*\),.*/\1/p' "$work/out" | sort -u); do
        grep -A2 -- "- alert: $q\$" "$work/rules.yaml" | sed -n 's/^ *expr: /no data: /p'
      done >"$t_out"
      cat "$work/out" >>"$t_out"
      fail "each of the dashboard's $n queries returns data from the page (promtool test rules)"
    fi
  else
    fail "dashboard_rules.py could not read the page or the dashboard"
  fi
fi
finish
