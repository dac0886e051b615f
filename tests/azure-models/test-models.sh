#!/usr/bin/env bash
# Every Azure ML body aj sends, and every answer of the loopback peer it parses, checked by
# Microsoft's own REST models (check_models.py, in the venv of setup-venv.sh):
#   * job bodies as aj's backends build them (aj render -o json of the aml and sing examples and of
#     the templates in home/), the same builder the controller PUTs through;
#   * environment, code and datastore bodies and every answer, recorded by the Azure peer
#     (AJ_AZURE_PEER_RECORD) while the Azure client's unit tests run against it;
#   * the checker itself: each of bad/*.json must fail with its "expect" message.
# Usage: test-models.sh AJ_BINARY TEST_AML_BINARY. No cluster.
set -uo pipefail
aj=${1:?usage: test-models.sh AJ_BINARY TEST_AML_BINARY}
test_aml=${2:?usage: test-models.sh AJ_BINARY TEST_AML_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
source "$repo_root/tests/lib/expect.sh"
py=$("$here/setup-venv.sh" --no-install | tail -n 1) || { echo "FAIL - no venv (run tests/azure-models/setup-venv.sh)"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/aj-azure-models.XXXXXX")
trap 'rm -rf "$work" "$t_out"' EXIT
check=("$py" "$here/check_models.py")

# The checker fails each bad body, with the message written in it.
expect_ok "the models reject each of bad/*.json with its expected message" \
  "${check[@]}" --min "$(ls "$here"/bad/*.json | wc -l)" "$here/bad"
grep -E '^(ok|FAIL)' "$t_out"

# Job bodies from aj's own builders. ws: where the controller would PUT them.
ws=/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/ws
mkdir -p "$work/render" "$work/peer"
n=0
render() { # HOME TEMPLATE ARGS...: one PUT record of the rendered body
  local home=$1 t=$2 out; shift 2
  n=$((n + 1)); out=$work/render/$n-$t
  if AJ_HOME=$home "$aj" render -t "$t" -o json --name "r$n-$t" "$@" -- python train.py --lr 3e-4 >"$out.body" 2>"$out.err"; then
    python3 - "$out.body" "$ws/jobs/r$n-$t" >"$out.json" <<'PY'
import json, sys
print(json.dumps({"method": "PUT", "path": sys.argv[2], "status": 201,
                  "request": json.load(open(sys.argv[1])), "response": None}))
PY
  else
    cp "$out.err" "$t_out"; fail "aj render -t $t $*"
  fi
}
examples=$repo_root/examples/.azure_jobs
render "$examples" aml
render "$examples" aml -n 4 -p 8
render "$examples" sing
render "$examples" sing -n 2 -p 8 --ppn 8
render "$examples" sing --digest
for t in "$here"/home/template/*.yaml; do render "$here/home" "$(basename "$t" .yaml)"; done

# The client's requests and the peer's answers.
expect_ok "the Azure client's unit tests pass with the peer recording" \
  env AJ_AZURE_PEER_RECORD="$work/peer" "$test_aml"

# Rendered bodies and the peer's records, all at once (at least 40 bodies, or nothing was recorded).
expect_ok "every body passes the azure-ai-ml models" "${check[@]}" --min 40 "$work/render" "$work/peer"
sed -n '/^# /p; $p' "$t_out"
finish
