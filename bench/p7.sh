#!/usr/bin/env bash
# P7: N AjJobs from create to every pod Running on the local cluster, next to the same N Volcano
# Jobs created directly with kubectl, in the same run: rounds alternate (direct, aj, direct, aj,
# ...) on one cluster, and the medians' ratio is printed.
#
# Each job is two pods of 1 CPU and 1 GiB that run until deleted (kwok-hold), on a cluster of four
# 64-CPU kwok nodes with the real Volcano (no GPU or real node: the gang's placement is what is
# timed, not a container start). A direct round creates the Volcano Jobs `aj render` prints, with
# one `kubectl create` of a List; an aj round creates the AjJobs `aj run --dry-run` prints the same
# way, with aj-controller already running (its default --qps 20 / --burst 40, two workers). The
# time runs from just before `kubectl create` to the moment every one of the 2N pods is Running.
# Between rounds the namespace is deleted and its pods are waited out.
#
# Usage: bench/p7.sh [N] [ROUNDS]   (defaults 100 3: three rounds of each, after one of each not counted)
# Needs aj and aj-controller in build/ (or BUILD=DIR) and the local cluster's builds
# (tests/controlplane/build.sh, build-cluster.sh); starts and stops a cluster of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-100}
rounds=${2:-3}
build=${BUILD:-build}
aj=$build/src/aj
ctl=$build/controller/aj-controller
for b in "$aj" "$ctl"; do [[ -x $b ]] || { echo "p7.sh: $b is not built" >&2; exit 1; }; done
tmp=$(mktemp -d)
pid=
cleanup() {
  [[ -n $pid ]] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  tests/controlplane/stop.sh --dir "$tmp/cl" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

echo "p7.sh: starting a local cluster (four kwok CPU nodes, Volcano) for the bench" >&2
AJ_CLUSTER_NODES="cpu=4" AJ_CLUSTER_REAL_NODE=0 tests/controlplane/start.sh --cluster --dir "$tmp/cl" >/dev/null
# shellcheck disable=SC1091
source "$tmp/cl/env"
k() { "$AJ_KUBECTL" "$@"; }
k apply --server-side -f crd/ >/dev/null
for _ in $(seq 60); do k wait --for condition=Established --timeout=60s crd --all >/dev/null 2>&1 && break; sleep 0.5; done

mkdir -p "$tmp/home/template"
cat >"$tmp/home/template/p7.yaml" <<'YAML'
config:
  target:
    service: volcano
    queue: default
    gpus_per_node: 0
    cpus_per_node: 1
    memory: 1Gi
    labels: {aj.dev/kwok-hold: "true"}
  environment:
    image: registry.example.com/ml/train:1.0
  jobs:
    - name: train
      sku: "{nodes}xC{processes}"
      instance_count: 2
YAML
export AJ_HOME=$tmp/home
# N copies of one object, named job-0 ... job-(N-1), as a List
copies() { # copies FILE NAMESPACE
  python3 - "$1" "$2" "$n" <<'PY'
import json, sys
proto, ns, n = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3])
if proto.get("kind") == "List":
    proto = proto["items"][0]
items = []
for i in range(n):
    j = json.loads(json.dumps(proto))
    j["metadata"].update(name="job-%d" % i, namespace=ns)
    items.append(j)
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
PY
}
running() { k get pods -n "$1" --field-selector=status.phase=Running --no-headers 2>/dev/null | wc -l; }
# one round: create the List, wait for 2N Running pods; prints the seconds
round() { # round NAMESPACE LIST
  local t0
  t0=$(date +%s.%N)
  k create -f "$2" >/dev/null
  until (($(running "$1") >= 2 * n)); do sleep 0.2; done
  echo "$(date +%s.%N) - $t0" | bc
}
clear_ns() { # wait until the namespace and its pods are gone
  k delete namespace "$1" --wait=true --timeout=300s >/dev/null
}

# A round of each, not counted: the scheduler's, the controllers' and the API server's first
# moves (a first direct round took twice as long as the next ones).
: >"$tmp/direct" && : >"$tmp/aj"
for r in $(seq 0 "$rounds"); do
  ns=p7-direct-$r
  k create namespace "$ns" >/dev/null
  "$aj" render -t p7 --namespace "$ns" --name proto -o json -- sleep infinity >"$tmp/vj.json"
  copies "$tmp/vj.json" "$ns" >"$tmp/direct.json"
  round "$ns" "$tmp/direct.json" >>"$tmp/direct-$r"
  clear_ns "$ns"

  ns=p7-aj-$r
  k create namespace "$ns" >/dev/null
  "$aj" run -t p7 --namespace "$ns" --name proto --dry-run -o json -- sleep infinity >"$tmp/aj-proto.json"
  copies "$tmp/aj-proto.json" "$ns" >"$tmp/aj.json"
  rm -f "$tmp/port"
  "$ctl" --namespace "$ns" --lease-namespace "$ns" --health-addr 127.0.0.1 --health-port 0 \
    --port-file "$tmp/port" >"$tmp/ctl-$r.log" 2>&1 &
  pid=$!
  until [[ -s $tmp/port ]] && curl -fsS "http://127.0.0.1:$(cat "$tmp/port")/readyz" >/dev/null 2>&1; do sleep 0.2; done
  round "$ns" "$tmp/aj.json" >>"$tmp/aj-$r"
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; pid=
  clear_ns "$ns"
done

for r in $(seq "$rounds"); do cat "$tmp/direct-$r" >>"$tmp/direct"; cat "$tmp/aj-$r" >>"$tmp/aj"; done
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
d=$(median <"$tmp/direct") a=$(median <"$tmp/aj")
echo "P7: $n jobs of 2 pods, create to every pod Running, $rounds round(s) each"
printf '  Volcano Jobs with kubectl: median %6.2f s (rounds: %s)\n' "$d" "$(paste -sd' ' "$tmp/direct" | xargs printf '%.2f ')"
printf '  AjJobs via aj-controller:  median %6.2f s (rounds: %s)\n' "$a" "$(paste -sd' ' "$tmp/aj" | xargs printf '%.2f ')"
printf '  not counted, the first round: direct %.2f s, aj %.2f s\n' "$(cat "$tmp/direct-0")" "$(cat "$tmp/aj-0")"
printf '  ratio aj / direct: %.2f\n' "$(echo "$a / $d" | bc -l)"
echo "  load average (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg)"
