#!/usr/bin/env bash
# aj-controller throughput and memory on a real kube-apiserver + etcd.
#
#  1. 1,000 AjJobs exist; the controller starts: time until all 1,000 Volcano
#     Jobs exist, next to one client creating the same 1,000 Volcano Jobs
#     directly at the same QPS and burst (bench/kube_create.c).
#  2. 10,000 AjJobs, all submitted: the controller's resident memory next to
#     the AjJobs' total JSON size, and the idle controller's.
#  3. The controller restarted over them: memory after listing the 10,000
#     AjJobs and their 10,000 Volcano Jobs; with BUILD_B=DIR, three restarts
#     by each of the two builds in turn, their medians and ratio.
#
# Usage: [BUILD_B=DIR] bench/controller.sh [QPS] [N_THROUGHPUT] [N_MEMORY]   (defaults 50 1000 10000)
# Needs a build in build/ (or BUILD=DIR) and the control plane
# binaries (tests/controlplane/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
qps=${1:-50}
n=${2:-1000}
nmem=${3:-10000}
build=${BUILD:-build}
aj=$build/src/aj
ctl=$build/controller/aj-controller
[[ -x $aj && -x $ctl ]] || { echo "build first: cmake --build $build"; exit 1; }

tmp=$(mktemp -d)
cp_dir=$tmp/cp
pid=
cleanup() {
  [[ -n $pid ]] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  tests/controlplane/stop.sh --dir "$cp_dir" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# shellcheck disable=SC2046
cc -O2 -std=gnu11 -Isrc bench/kube_create.c -o "$tmp/kube_create" \
  "$build/src/libajkube.a" "$build/src/libajcore.a" \
  $(pkg-config --libs libcurl libwebsockets openssl libcjson yaml-0.1) -lm

tests/controlplane/start.sh --dir "$cp_dir" >/dev/null
# shellcheck disable=SC1091
source "$cp_dir/env"
k() { "$AJ_KUBECTL" "$@"; }
k apply --server-side -f crd/ -f tests/integration/crds/volcano/ >/dev/null
# A CRD just created may have no conditions yet, which kubectl wait rejects.
for _ in $(seq 60); do k wait --for condition=Established --timeout=60s crd --all >/dev/null 2>&1 && break; sleep 0.5; done

export AJ_HOME=tests/integration/data/controller/.azure_jobs
# One AjJob, cloned N times with different names into a List.
ajjobs() { # ajjobs NAMESPACE COUNT FILE
  "$aj" run -t job --namespace "$1" --name proto --dry-run -o json -- python train.py >"$tmp/proto.json"
  python3 - "$tmp/proto.json" "$1" "$2" "$3" <<'PY'
import json, sys
proto = json.load(open(sys.argv[1]))
ns, count, out = sys.argv[2], int(sys.argv[3]), sys.argv[4]
items = []
for i in range(count):
    j = json.loads(json.dumps(proto))
    j["metadata"].update(name="job-%d" % i, namespace=ns)
    items.append(j)
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, open(out, "w"))
PY
}
count_volcano() { k get jobs.batch.volcano.sh -n "$1" --no-headers 2>/dev/null | wc -l; }

# --- 1. throughput ---
k create namespace direct >/dev/null
k create namespace ctl >/dev/null
"$aj" render -t job -n 2 -o json -- python train.py >"$tmp/vj.json"
direct=$("$tmp/kube_create" "$KUBECONFIG" direct "$tmp/vj.json" "$n" "$qps" "$qps")

ajjobs ctl "$n" "$tmp/ajjobs.json"
k create -f "$tmp/ajjobs.json" >/dev/null
t0=$(date +%s.%N)
"$ctl" --namespace ctl --qps "$qps" --burst "$qps" --health-addr 127.0.0.1 --health-port 0 \
  --port-file "$tmp/port" >"$tmp/ctl.log" 2>&1 &
pid=$!
while (($(count_volcano ctl) < n)); do sleep 0.2; done
via=$(echo "$(date +%s.%N) - $t0" | bc)
kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; pid=

echo "throughput: $n Volcano Jobs at $qps QPS"
printf '  direct creates, one client: %6.2f s\n' "$direct"
printf '  through aj-controller:      %6.2f s   ratio %.2f\n' "$via" "$(echo "$via / $direct" | bc -l)"
# The machine may be shared: say how busy it was.
echo "  load average (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg)"

# --- 2. memory ---
((nmem > 0)) || exit 0
# The idle controller first: libraries, threads, connections, no AjJobs.
k create namespace idle >/dev/null
"$ctl" --namespace idle --health-addr 127.0.0.1 --health-port 0 --port-file "$tmp/port" \
  >"$tmp/ctl-idle.log" 2>&1 &
pid=$!
sleep 8
idle_kb=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
idle_anon_kb=$(awk '/^RssAnon/ {print $2}' "/proc/$pid/status")
kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; pid=
rm -f "$tmp/port"
# Realistic AjJobs: the bundled Volcano example (four files), in its namespace.
mem=training
export AJ_HOME=examples/.azure_jobs
ajjobs() { # ajjobs NAMESPACE COUNT FILE
  "$aj" run -t volcano --name proto --dry-run -o json -- python train.py >"$tmp/proto.json"
  python3 - "$tmp/proto.json" "$1" "$2" "$3" <<'PY'
import json, sys
proto = json.load(open(sys.argv[1]))
ns, count, out = sys.argv[2], int(sys.argv[3]), sys.argv[4]
# --dry-run leaves the code digest a placeholder the CRD refuses; any digest will do here
if "code" in proto["spec"]:
    proto["spec"]["code"]["digest"] = "0" * 64
items = []
for i in range(count):
    j = json.loads(json.dumps(proto))
    j["metadata"].update(name="job-%d" % i, namespace=ns)
    items.append(j)
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, open(out, "w"))
PY
}
k create namespace "$mem" >/dev/null
ajjobs "$mem" "$nmem" "$tmp/mem.json"
python3 - "$tmp/mem.json" "$tmp" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
items = doc["items"]
for c in range(0, len(items), 500):
    json.dump(dict(doc, items=items[c:c + 500]), open("%s/mem-%05d.json" % (sys.argv[2], c), "w"))
PY
for f in "$tmp"/mem-*.json; do k create -f "$f" >/dev/null; done
"$ctl" --namespace "$mem" --qps 2000 --burst 2000 --workers 2 --health-addr 127.0.0.1 --health-port 0 \
  --port-file "$tmp/port" >"$tmp/ctl-mem.log" 2>&1 &
pid=$!
metric() {
  python3 -c 'import sys, urllib.request
t = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % open(sys.argv[1]).read().strip()).read().decode()
print(sum(float(l.split()[-1]) for l in t.splitlines() if l.startswith(sys.argv[2])))' "$tmp/port" "$1"
}
# Submitted means: created, status written, and the queue drained.
until [[ -s $tmp/port ]] && (($(count_volcano "$mem") >= nmem)) &&
      [[ $(metric 'workqueue_depth{') == 0.0 ]]; do sleep 1; done
sleep 8   # the controller trims its heap after 5 s without work
rss_kb=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
hwm_kb=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
anon_kb=$(awk '/^RssAnon/ {print $2}' "/proc/$pid/status")
cached=$(metric 'aj_ajjobs_cached')
cache_bytes=$(metric 'aj_cache_bytes')
json=$(k get ajjobs -n "$mem" -o json | python3 -c 'import json, sys
print(sum(len(json.dumps(i, separators=(",", ":"))) for i in json.load(sys.stdin)["items"]))')
submitted=$(k get ajjobs -n "$mem" -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | grep -c Submitted || true)
echo "memory: $nmem AjJobs ($submitted submitted, $cached cached)"
printf '  AjJobs as JSON:        %8.1f MiB\n' "$(echo "$json / 1048576" | bc -l)"
printf '  controller RSS:        %8.1f MiB   ratio %.2f\n' "$(echo "$rss_kb / 1024" | bc -l)" "$(echo "$rss_kb * 1024 / $json" | bc -l)"
printf '  controller peak RSS:   %8.1f MiB\n' "$(echo "$hwm_kb / 1024" | bc -l)"
printf '  cache records:         %8.1f MiB\n' "$(echo "$cache_bytes / 1048576" | bc -l)"
printf '  controller RssAnon:    %8.1f MiB   (heap, stacks; the rest is mapped files)\n' "$(echo "$anon_kb / 1024" | bc -l)"
printf '  idle controller RSS:   %8.1f MiB   RssAnon %.1f MiB\n' "$(echo "$idle_kb / 1024" | bc -l)" \
  "$(echo "$idle_anon_kb / 1024" | bc -l)"
printf '  RSS above idle:        %8.1f MiB   ratio %.2f\n' "$(echo "($rss_kb - $idle_kb) / 1024" | bc -l)" \
  "$(echo "($rss_kb - $idle_kb) * 1024 / $json" | bc -l)"
echo "  load average (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg)"

# --- 3. restart: all 10,000 AjJobs and their Volcano Jobs listed at start ---
# With BUILD_B=DIR the restart is made by each build in turn, three times (A B A B A B), over the
# same objects: the medians and their ratio B / A compare two builds' steady state in one run.
kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; pid=
restart() { # restart CONTROLLER: prints "RSS_KB HWM_KB" once it has listed everything and is idle
  rm -f "$tmp/port"
  "$1" --namespace "$mem" --qps 2000 --burst 2000 --workers 2 --health-addr 127.0.0.1 --health-port 0 \
    --port-file "$tmp/port" >>"$tmp/ctl-restart.log" 2>&1 &
  pid=$!
  until [[ -s $tmp/port ]] && (($(metric 'aj_ajjobs_cached' | cut -d. -f1) >= nmem)) &&
        [[ $(metric 'workqueue_depth{') == 0.0 ]]; do sleep 1; done
  sleep 8
  echo "$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status") $(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")"
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; pid=
}
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
mib() { echo "$1 / 1024" | bc -l; }
echo "restart with $nmem AjJobs and their Volcano Jobs:"
if [[ -z ${BUILD_B:-} ]]; then
  read -r rss_kb hwm_kb < <(restart "$ctl")
  printf '  controller RSS:        %8.1f MiB   ratio %.2f\n' "$(mib "$rss_kb")" "$(echo "$rss_kb * 1024 / $json" | bc -l)"
  printf '  controller peak RSS:   %8.1f MiB\n' "$(mib "$hwm_kb")"
  exit 0
fi
ctl_b=$BUILD_B/controller/aj-controller
[[ -x $ctl_b ]] || { echo "no $ctl_b: build BUILD_B first"; exit 1; }
: >"$tmp/a" && : >"$tmp/b"
for _ in 1 2 3; do
  restart "$ctl" >>"$tmp/a"
  restart "$ctl_b" >>"$tmp/b"
done
for x in a b; do
  eval "rss_$x=\$(cut -d' ' -f1 '$tmp/$x' | median) hwm_$x=\$(cut -d' ' -f2 '$tmp/$x' | median)"
done
printf '  A %s: RSS %.1f MiB (runs: %s), peak %.1f MiB\n' "$build" "$(mib "$rss_a")" \
  "$(cut -d' ' -f1 "$tmp/a" | awk '{printf "%.1f ", $1 / 1024}')" "$(mib "$hwm_a")"
printf '  B %s: RSS %.1f MiB (runs: %s), peak %.1f MiB\n' "$BUILD_B" "$(mib "$rss_b")" \
  "$(cut -d' ' -f1 "$tmp/b" | awk '{printf "%.1f ", $1 / 1024}')" "$(mib "$hwm_b")"
printf '  median RSS ratio B / A: %.2f\n' "$(echo "$rss_b / $rss_a" | bc -l)"
