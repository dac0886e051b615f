#!/usr/bin/env bash
# What the pod watch costs the controller: its resident memory, idle after
# listing, in a namespace holding N of aj's pods (label aj.dev/ajjob; F of
# them Failed with exit code 3), for a build without the pod watch (A) and
# this one (B), three runs of each in turn against one control plane; the
# medians and their ratio. The pods stay Pending (no scheduler) but for the
# Failed ones, whose status is written by hand: the API server serves them
# all the same.
#
# Usage: BUILD_A=DIR [BUILD_B=DIR] bench/podwatch.sh [N] [F]   (defaults 5000 100; BUILD_B: build)
# Needs the control plane binaries (tests/controlplane/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-5000}
nf=${2:-100}
a=${BUILD_A:?BUILD_A=DIR: a build without the pod watch}/controller/aj-controller
b=${BUILD_B:-build}/controller/aj-controller
[[ -x $a && -x $b ]] || { echo "build both first: $a $b"; exit 1; }

tmp=$(mktemp -d)
cp_dir=$tmp/cp
pid=
cleanup() {
  [[ -n $pid ]] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  tests/controlplane/stop.sh --dir "$cp_dir" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

tests/controlplane/start.sh --dir "$cp_dir" >/dev/null
# shellcheck disable=SC1091
source "$cp_dir/env"
k() { "$AJ_KUBECTL" "$@"; }
k apply --server-side -f crd/ -f tests/integration/crds/volcano/ >/dev/null
for _ in $(seq 60); do k wait --for condition=Established --timeout=60s crd --all >/dev/null 2>&1 && break; sleep 0.5; done
k create namespace pods >/dev/null

# N pods of 1,000 AjJobs (the shared pod template's labels), in Lists of 500
python3 - "$n" "$tmp" <<'PY'
import json, sys
n, out = int(sys.argv[1]), sys.argv[2]
def pod(i):
    job = "job-%d" % (i % 1000)
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "%s-worker-%d" % (job, i // 1000), "namespace": "pods",
                         "labels": {"aj.dev/ajjob": job, "aj.dev/task": "worker", "app": job,
                                    "role": "worker"}},
            "spec": {"restartPolicy": "Never",
                     "containers": [{"name": "main", "image": "busybox",
                                     "command": ["python", "train.py"],
                                     "env": [{"name": "RANK", "value": str(i)}]}]}}
for c in range(0, n, 500):
    json.dump({"apiVersion": "v1", "kind": "List", "items": [pod(i) for i in range(c, min(n, c + 500))]},
              open("%s/pods-%06d.json" % (out, c), "w"))
PY
for f in "$tmp"/pods-*.json; do k create -f "$f" >/dev/null; done
failed='{"status": {"phase": "Failed", "containerStatuses": [{"name": "main", "image": "busybox",
  "imageID": "", "ready": false, "restartCount": 0, "state": {"terminated": {"exitCode": 3,
  "reason": "Error", "finishedAt": "2026-01-01T00:00:00Z", "startedAt": "2026-01-01T00:00:00Z"}}}]}}'
for ((i = 0; i < nf; i++)); do
  k -n pods patch pod "job-$((i % 1000))-worker-$((i / 1000))" --subresource=status --type=merge -p "$failed" >/dev/null
done
json_mib=$(k get pods -n pods -o json | wc -c | awk '{printf "%.1f", $1 / 1048576}')

# rss BINARY: VmRSS and VmHWM (KiB) of the controller idle after listing, and how many failures it logged
rss() {
  rm -f "$tmp/port"
  "$1" --namespace pods --health-addr 127.0.0.1 --health-port 0 --port-file "$tmp/port" >"$tmp/ctl.log" 2>&1 &
  pid=$!
  sleep 10
  echo "$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status") $(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")" \
       "$(grep -c '"msg":"pod failed"' "$tmp/ctl.log" || true)"
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; pid=
}
ra=() rb=() ha=() hb=()
for run in 1 2 3; do
  read -r r h f < <(rss "$a"); ra+=("$r"); ha+=("$h"); fa=$f
  read -r r h f < <(rss "$b"); rb+=("$r"); hb+=("$h"); fb=$f
  echo "run $run: A ${ra[-1]} KiB (peak ${ha[-1]}, $fa failures logged), B ${rb[-1]} KiB (peak ${hb[-1]}, $fb failures logged)"
done
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
ma=$(median "${ra[@]}") mb=$(median "${rb[@]}")
echo "$n pods ($nf Failed), $json_mib MiB as JSON"
printf 'idle RSS, median of three: A %.1f MiB, B %.1f MiB, ratio B/A %.3f\n' \
  "$(echo "$ma / 1024" | bc -l)" "$(echo "$mb / 1024" | bc -l)" "$(echo "$mb / $ma" | bc -l)"
printf 'peak RSS, median of three: A %.1f MiB, B %.1f MiB\n' \
  "$(echo "$(median "${ha[@]}") / 1024" | bc -l)" "$(echo "$(median "${hb[@]}") / 1024" | bc -l)"
echo "load average (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg)"
