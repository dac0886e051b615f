#!/usr/bin/env bash
# 200 AjJobs run to completion by the real Volcano on the cluster fixture while the controller is
# SIGKILLed 0.5 to 1.5 s after it became ready (its caches listed, its workers started) and started
# again: every AjJob ends Succeeded, with exactly one Volcano Job and exactly one
# VolcanoJobCompleted Event (a job's end is posted under a name of its own just before the status
# that records it, so a controller killed in between posts nothing twice). Killed at a fixed time
# after its start instead, a controller on a loaded machine (1.6 s from start to its first write)
# was mostly killed while it listed: 22 of 39 runs wrote nothing.
source "$(dirname "$0")/lib.sh"
n=${AJ_KILL_JOBS:-200}
cluster_test kill
# One small single-pod job, copied n times into one List (one apply instead of n).
ajjob_json() {
  mkdir -p "$work/src"
  (cd "$work/src" && "$AJ_BIN" run -t volcano-cpu --namespace "$ns" --name k-0 -n 1 --dry-run -o json -- python t.py)
}
ajjob_json | python3 -c '
import json, sys
job = json.load(sys.stdin)
job["spec"].pop("code", None)
job["spec"]["template"]["config"].setdefault("target", {}).update(
    {"namespace": sys.argv[2], "cpus_per_node": 1, "memory": "1Gi"})
items = []
for i in range(int(sys.argv[1])):
    j = json.loads(json.dumps(job))
    j["metadata"]["name"] = "k-%d" % i
    items.append(j)
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))' "$n" "$ns" >"$work/jobs.json"
expect_ok "$n AjJobs created" k apply -f "$work/jobs.json"

done_count() { k -n "$ns" get ajjob -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | grep -c Succeeded; }
start=$(date +%s) kills=0 i=0
ready() { curl -fsS "http://127.0.0.1:$(cat "$work/$1.port" 2>/dev/null)/readyz" >/dev/null 2>&1; }
while (($(date +%s) - start < 180)); do
  start_controller "run-$i"
  for _ in $(seq 150); do ready "run-$i" && break; sleep 0.2; done
  ms=$((500 + RANDOM % 1000))
  sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
  kill -KILL "$(cat "$work/run-$i.pid")" 2>/dev/null && kills=$((kills + 1))
  wait "$(cat "$work/run-$i.pid")" 2>/dev/null
  controllers=()
  i=$((i + 1))
  (($(done_count) == n)) && break
done
start_controller last
expect_ok "every AjJob Succeeded (controller SIGKILLed $kills times)" wait_for 40 bash -c "(( \$(
  '$AJ_KUBECTL' -n '$ns' get ajjob -o jsonpath='{range .items[*]}{.status.phase}{\"\\n\"}{end}' | grep -c Succeeded) == $n ))"
expect_ok "it was killed while they ran" test "$kills" -ge 5
expect_eq "exactly one Volcano Job each" "$n" bash -c "'$AJ_KUBECTL' -n '$ns' get jobs.batch.volcano.sh -o name | sort -u | wc -l"
completed_events() {
  k -n "$ns" get events.events.k8s.io -o jsonpath='{range .items[?(@.reason=="VolcanoJobCompleted")]}{.regarding.name}{"\n"}{end}'
}
expect_eq "exactly one VolcanoJobCompleted Event each" "$n 1" bash -c \
  "$(declare -f k completed_events); ns='$ns'; completed_events | sort | uniq -c | awk '{print \$1}' | sort | uniq -c | awk '{print \$1, \$2}'"
stop_controllers
finish
