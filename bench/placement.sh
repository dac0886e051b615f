#!/usr/bin/env bash
# What placement costs aj-controller: N AjJobs of a placement leaf with three cluster candidates
# (Volcano queue default, a Kueue LocalQueue, Volcano queue spare) against N AjJobs of the plain
# Volcano template, on one kube-apiserver + etcd.
#
# Each set: its N AjJobs exist, the controller starts; the time until its own metrics count all N
# Submitted (status written after the create) and the controller's CPU time by then; 10 s more,
# and kube-apiserver's request
# counters (apiserver_request_total) by verb and resource over that span. The bench polls only
# the controller's /metrics, so the API server's counters hold the controller's requests and the
# server's own background. Sets alternate (single, placement, placement, single, ...) for ROUNDS
# rounds; the medians of the times and their ratio are printed, and the requests per AjJob of
# each set over all its rounds, with the lists of what limits a start as counts per run: they
# follow the 5 s snapshot, not the number of AjJobs.
#
# The cluster has no Volcano, Kueue or scheduler: their CRDs, four Ready A100 nodes with room for
# every job at once (the placer charges its snapshot with each placement, and no scheduler ever
# binds a pod to free that room), the two Volcano Queues and Kueue's ResourceFlavor, ClusterQueue
# (marked Active) and LocalQueue. Every candidate can start the job; the first (Volcano, default)
# is chosen, so both sets create the same Volcano Jobs and differ only by the placement.
#
# Usage: bench/placement.sh [N] [ROUNDS] [QPS]   (defaults 1000 3 50)
# Needs aj and aj-controller in build/ (or BUILD=DIR), the control plane binaries
# (tests/controlplane/build.sh) and Kueue's CRDs (tests/controlplane/build-cluster.sh kueue).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
rounds=${2:-3}
qps=${3:-50}
build=${BUILD:-build}
aj=$build/src/aj
ctl=$build/controller/aj-controller
for b in "$aj" "$ctl"; do [[ -x $b ]] || { echo "placement.sh: $b is not built" >&2; exit 1; }; done
source tests/controlplane/lib.sh
kueue_crd=$(aj_cache_root)/kueue/$(tr -d '[:space:]' <tests/controlplane/KUEUE_VERSION)/crd
[[ -d $kueue_crd ]] || { echo "placement.sh: no Kueue CRDs in $kueue_crd (tests/controlplane/build-cluster.sh kueue)" >&2; exit 1; }

tmp=$(mktemp -d)
pid=
cleanup() {
  [[ -n $pid ]] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  tests/controlplane/stop.sh --dir "$tmp/cp" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

tests/controlplane/start.sh --dir "$tmp/cp" >/dev/null
# shellcheck disable=SC1091
source "$tmp/cp/env"
k() { "$AJ_KUBECTL" "$@"; }
k apply --server-side -f crd/ -f tests/integration/crds/volcano/ -f "$kueue_crd" >/dev/null
for _ in $(seq 60); do k wait --for condition=Established --timeout=60s crd --all >/dev/null 2>&1 && break; sleep 0.5; done

# Four A100 nodes as the local cluster has them, Ready (no kubelet or kwok keeps them so here),
# each with room for a pod of every job.
python3 tests/controlplane/cluster/nodes.py "a100=4" |
  sed -e '/^status:$/a\  conditions: [{type: Ready, status: "True"}]' \
      -e 's/^\(      \(cpu\|nvidia.com\/gpu\|pods\)\): .*/\1: "1000000"/' \
      -e 's/^\(      memory\): .*/\1: "1Ei"/' | k apply -f - >/dev/null
# The API server taints a new node not-ready until a node controller says otherwise.
k taint nodes --all node.kubernetes.io/not-ready:NoSchedule- >/dev/null
k create namespace training >/dev/null
k apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: default}
spec: {weight: 1, reclaimable: true}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: spare}
spec: {weight: 1, reclaimable: true, capability: {nvidia.com/gpu: 64}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: a100}
spec:
  nodeLabels: {nvidia.com/gpu.product: A100-SXM4-80GB}
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-a}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: a100
      resources:
      - {name: cpu, nominalQuota: 512}
      - {name: memory, nominalQuota: 8Ti}
      - {name: nvidia.com/gpu, nominalQuota: 32}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: team-a, namespace: training}
spec: {clusterQueue: team-a}
YAML
# What Kueue's controller would say of its ClusterQueue: Active.
k patch clusterqueue team-a --subresource=status --type=merge -p "{\"status\": {\"conditions\": [
  {\"type\": \"Active\", \"status\": \"True\", \"reason\": \"Ready\", \"message\": \"Can admit new workloads\",
   \"lastTransitionTime\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"}]}}" >/dev/null

# The examples' templates, and the placement leaf over three cluster candidates.
cp -r examples/.azure_jobs "$tmp/home"
export AJ_HOME=$tmp/home
printf '%s\n' 'base: kube' 'config:' '  target: {queue: team-a}' >"$AJ_HOME/template/kueue.yaml"
printf '%s\n' 'base: volcano' 'config:' '  target: {queue: spare}' >"$AJ_HOME/template/spare.yaml"
printf '%s\n' 'base: []' 'config:' '  placement: {candidates: [volcano, kueue, spare]}' \
  >"$AJ_HOME/template/three.yaml"
for t in kueue spare three; do "$aj" template validate "$t" >/dev/null; done

# N copies of one AjJob as a List (--dry-run leaves the code digest a placeholder the CRD refuses).
ajjobs() { # ajjobs TEMPLATE FILE
  "$aj" run -t "$1" --name proto --dry-run -o json -- python train.py >"$tmp/proto.json"
  python3 - "$tmp/proto.json" "$n" "$2" <<'PY'
import json, sys
proto, n, out = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3]
if "code" in proto["spec"]:
    proto["spec"]["code"]["digest"] = "0" * 64
items = []
for i in range(n):
    j = json.loads(json.dumps(proto))
    j["metadata"]["name"] = "job-%d" % i
    items.append(j)
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, open(out, "w"))
PY
}
ajjobs volcano "$tmp/single.json"
ajjobs three "$tmp/placement.json"

counters() { k get --raw /metrics | grep '^apiserver_request_total' || true; }
metric() { # the sum of the controller's samples whose line starts with $1
  python3 -c 'import sys, urllib.request
t = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % open(sys.argv[1]).read().strip()).read().decode()
print(int(sum(float(l.split()[-1]) for l in t.splitlines() if l.startswith(sys.argv[2]))))' "$tmp/port" "$1" 2>/dev/null ||
  echo 0
}

one() { # one SET ROUND: prints the seconds to all Submitted; counters in $tmp/SET.ROUND.{0,1}
  local set=$1 r=$2 t0 t1
  k delete --raw /apis/aj.dev/v1alpha1/namespaces/training/ajjobs >/dev/null
  k delete --raw /apis/batch.volcano.sh/v1alpha1/namespaces/training/jobs >/dev/null
  k create -f "$tmp/$set.json" >/dev/null
  rm -f "$tmp/port"
  counters >"$tmp/$set.$r.0"
  t0=$(date +%s.%N)
  "$ctl" --namespace training --qps "$qps" --burst "$qps" --health-addr 127.0.0.1 --health-port 0 \
    --port-file "$tmp/port" >"$tmp/ctl-$set-$r.log" 2>&1 &
  pid=$!
  until [[ -s $tmp/port ]] && (($(metric 'aj_ajjobs{phase="Submitted"') >= n)); do
    kill -0 "$pid" 2>/dev/null || { tail -n 5 "$tmp/ctl-$set-$r.log" >&2; exit 1; }
    sleep 0.2
  done
  t1=$(date +%s.%N)
  # the controller's CPU time (user + system) to all Submitted, from /proc/PID/stat
  awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$pid/stat" >>"$tmp/$set.cpu"
  sleep 10
  counters >"$tmp/$set.$r.1"
  [[ $set == placement ]] && k get ajjob job-0 -n training >"$tmp/states" \
    -o jsonpath='{range .status.placement.candidates[*]}{.name} {.state}, {end}'
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; pid=
  echo "$t1 - $t0" | bc
}

echo "placement cost: $n AjJobs per set, $rounds rounds, controller at $qps QPS"
echo "  load average before (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$tmp/single.t" && : >"$tmp/placement.t" && : >"$tmp/single.cpu" && : >"$tmp/placement.cpu"
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then order=(single placement); else order=(placement single); fi
  for set in "${order[@]}"; do
    s=$(one "$set" "$r")
    echo "$s" >>"$tmp/$set.t"
    printf '  round %d %-9s %6.2f s to all Submitted, controller CPU %5.2f s (load %s)\n' "$r" "$set" "$s" \
      "$(tail -n 1 "$tmp/$set.cpu")" "$(cut -d' ' -f1 /proc/loadavg)"
    [[ $set == placement ]] && echo "    job-0's candidates: $(cat "$tmp/states")"
  done
done
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
ms=$(median <"$tmp/single.t")
mp=$(median <"$tmp/placement.t")
cpu_s=$(median <"$tmp/single.cpu")
cpu_p=$(median <"$tmp/placement.cpu")
printf '  median single-backend: %6.2f s   controller CPU %5.2f s\n' "$ms" "$cpu_s"
printf '  median placement:      %6.2f s   controller CPU %5.2f s\n' "$mp" "$cpu_p"
printf '  ratio placement / single-backend: time %.2f, controller CPU %.2f\n' \
  "$(echo "$mp / $ms" | bc -l)" "$(echo "$cpu_p / $cpu_s" | bc -l)"
echo "  load average after (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$tmp" "$n" "$rounds" <<'PY'
import sys
sys.path.insert(0, "bench")
from apiserver_requests import increase, load
tmp, n, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tot = {}
for s in ("single", "placement"):
    d = tot.setdefault(s, {})
    for r in range(1, rounds + 1):
        for k, v in increase(load("%s/%s.%d.0" % (tmp, s, r)), load("%s/%s.%d.1" % (tmp, s, r))).items():
            d[k] = d.get(k, 0) + v
views = {"nodes", "pods", "queues", "clusterqueues", "localqueues", "resourceflavors"}
print("requests per AjJob (all rounds; verb resource/subresource: single-backend, placement)")
keys = sorted(set(tot["single"]) | set(tot["placement"]), key=lambda k: (k[1], k[2], k[0]))
for k in keys:
    s, p = tot["single"].get(k, 0), tot["placement"].get(k, 0)
    name = k[1] + ("/" + k[2] if k[2] else "")
    if k[0] == "LIST" and k[1] in views:
        print("  %-7s %-24s %7.3f %7.3f   (%.1f and %.1f lists per run)" % (k[0], name, s / n / rounds, p / n / rounds, s / rounds, p / rounds))
    elif max(s, p) / rounds >= 1:
        print("  %-7s %-24s %7.3f %7.3f" % (k[0], name, s / n / rounds, p / n / rounds))
print("  %-32s %7.3f %7.3f" % ("all", sum(tot["single"].values()) / n / rounds, sum(tot["placement"].values()) / n / rounds))
PY
