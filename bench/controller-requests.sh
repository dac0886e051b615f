#!/usr/bin/env bash
# aj-controller's API requests per AjJob and its time to create every Volcano Job, for one build
# or two side by side (one control plane each, one after the other, so compare them in one run).
#
# N AjJobs of the controller tests' job template exist; the controller starts; the time until
# all N Volcano Jobs exist, then, 20 s later, kube-apiserver's own request counters
# (apiserver_request_total) by verb and resource, divided by N.
#
# Usage: bench/controller-requests.sh [N] [CONTROLLER...]   (default 300, build/controller/aj-controller)
# Needs the control plane binaries (tests/controlplane/build.sh) and aj in build/ (or BUILD=DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-300}
shift || true
build=${BUILD:-build}
((${#@})) || set -- "$build/controller/aj-controller"
aj=$build/src/aj
for b in "$aj" "$@"; do [[ -x $b ]] || { echo "controller-requests.sh: $b is not built" >&2; exit 1; }; done
tmp=$(mktemp -d)
trap 'tests/controlplane/stop.sh --dir "$tmp/cp" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
export AJ_HOME=tests/integration/data/controller/.azure_jobs

metrics() { "$AJ_KUBECTL" get --raw /metrics | grep '^apiserver_request_total' || true; }

one() { # one CONTROLLER
  local ctl=$1 pid t0 t1
  tests/controlplane/stop.sh --dir "$tmp/cp" >/dev/null 2>&1 || true
  rm -rf "$tmp/cp"
  tests/controlplane/start.sh --dir "$tmp/cp" >/dev/null
  # shellcheck disable=SC1091
  source "$tmp/cp/env"
  "$AJ_KUBECTL" apply --server-side -f crd/ -f tests/integration/crds/volcano/ >/dev/null
  for _ in $(seq 60); do "$AJ_KUBECTL" wait --for condition=Established --timeout=60s crd --all >/dev/null 2>&1 && break; sleep 0.5; done
  "$AJ_KUBECTL" create namespace ctl >/dev/null
  "$aj" run -t job --namespace ctl --name proto --dry-run -o json -- python train.py >"$tmp/proto.json"
  python3 - "$tmp/proto.json" "$n" >"$tmp/list.json" <<'PY'
import json, sys
proto, n = json.load(open(sys.argv[1])), int(sys.argv[2])
items = []
for i in range(n):
    j = json.loads(json.dumps(proto))
    j["metadata"]["name"] = "job-%d" % i
    items.append(j)
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
PY
  "$AJ_KUBECTL" create -f "$tmp/list.json" >/dev/null
  metrics >"$tmp/m0"
  t0=$(date +%s.%N)
  "$ctl" --kubeconfig "$KUBECONFIG" --namespace ctl --health-addr 127.0.0.1 --health-port 0 \
    --lease-namespace default --qps 50 --burst 50 >"$tmp/ctl.log" 2>&1 &
  pid=$!
  until (($("$AJ_KUBECTL" get jobs.batch.volcano.sh -n ctl --no-headers 2>/dev/null | wc -l) >= n)); do
    kill -0 "$pid" 2>/dev/null || { tail -n 5 "$tmp/ctl.log" >&2; exit 1; }
    sleep 0.5
  done
  t1=$(date +%s.%N)
  sleep 20
  metrics >"$tmp/m1"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  echo "$ctl: $n Volcano Jobs in $(python3 -c "print('%.1f' % ($t1 - $t0))") s; requests per AjJob:"
  python3 bench/apiserver_requests.py "$tmp/m0" "$tmp/m1" "$n"
}

echo "load average (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg)"
for c in "$@"; do one "$c"; done
