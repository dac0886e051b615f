#!/usr/bin/env bash
# Create (or reuse) the virtualenv of the test oracles: Microsoft's Azure ML SDK (PyPI
# azure-ai-ml), whose generated REST models check the bodies aj sends and the answers it parses,
# and prometheus-client's exposition parser. requirements.txt names them, constraints.txt pins
# every package installed.
#
# Usage: tests/azure-models/setup-venv.sh [--no-install]
#   --no-install   only print the venv's python; fail if the venv is not there
# Output: <tools cache>/venv/azure-ai-ml-<version>-<8 hex of the two files' SHA-256>/bin/python
#         (root: AJ_TOOLS_CACHE, else $XDG_CACHE_HOME/aj), printed last. Nothing is reinstalled
#         when it is complete; changing either file makes a new venv.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../controlplane/lib.sh"

no_install=0
if [[ ${1:-} == --no-install ]]; then no_install=1; shift; fi
fail() { echo "setup-venv.sh: $*; retry: tests/azure-models/setup-venv.sh" >&2; exit 1; }
req=$here/requirements.txt cons=$here/constraints.txt
ver=$(sed -n 's/^azure-ai-ml==//p' "$req")
[[ -n $ver ]] || fail "requirements.txt pins no azure-ai-ml version"
stamp=$(cat "$req" "$cons" | sha256sum | cut -c1-8)

venv=$(aj_cache_root)/venv/azure-ai-ml-$ver-$stamp
py=$venv/bin/python
# The stamp is written last: a venv without it was interrupted and is made again.
up_to_date() { [[ -x $py && $(cat "$venv/.aj-complete" 2>/dev/null) == "$stamp" ]]; }
cp_use_cached setup-venv.sh "the venv of azure-ai-ml $ver" "$py" "$no_install" tests/azure-models/setup-venv.sh
command -v python3 >/dev/null || fail "python3 is not installed (scripts/install-deps.sh --test)"
mkdir -p "$(dirname "$venv")"
log=$venv.log
# One installer at a time; a caller that waits says so.
exec 9>>"$venv.lock"
if ! flock -n 9; then
  echo "setup-venv.sh: waiting for another install of azure-ai-ml $ver (log: $log)" >&2
  flock 9
fi
if up_to_date; then echo "$py"; exit 0; fi

start=$(date +%s)
echo "setup-venv.sh: installing azure-ai-ml $ver into $venv (log: $log)" >&2
: >"$log"
rm -rf "$venv"
python3 -m venv "$venv" >>"$log" 2>&1 || fail "python3 -m venv failed (install python3-venv): $(tail -n 1 "$log")"
cp_run_logged "$log" "installing azure-ai-ml $ver" \
  "$py" -m pip install --disable-pip-version-check --no-input -r "$req" -c "$cons" ||
  fail "pip install failed: $(grep -m1 -E 'ERROR|error:' "$log" | cut -c1-200) (full log: $log)"
"$py" -c 'import azure.ai.ml.entities, prometheus_client.parser' >>"$log" 2>&1 ||
  fail "the packages do not import: $(tail -n 1 "$log") (log: $log)"
echo "$stamp" >"$venv/.aj-complete"
echo "setup-venv.sh: installed azure-ai-ml $ver in $(($(date +%s) - start)) s" >&2
echo "$py"
