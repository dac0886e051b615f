#!/usr/bin/env bash
# One long-running aj-controller against every hostile AjJob of the corpus
# (tests/data/bad/*/ajjob.json that the API server accepts: typos, values
# without units, a config nested 5000 deep, a Volcano Job over the object
# limit, cycles, ...). After each one a valid canary AjJob is created, and
# it must get a status within seconds: no object stalls the namespace.
source "$(dirname "$0")/lib.sh"
controller_test hostile

canary() {
  cat <<JSON
{"apiVersion": "aj.dev/v1alpha1", "kind": "AjJob", "metadata": {"name": "canary-$1"},
 "spec": {"name": "template/job", "command": ["python", "train.py"], "nodes": 1, "processes": 1,
  "template": {"base": [], "config": {
   "target": {"service": "volcano", "gpus_per_node": 1, "cpus_per_node": 2, "memory": "4Gi"},
   "environment": {"image": "busybox"}, "jobs": [{"name": "train", "sku": "G1", "instance_count": 1}]}}}}
JSON
}
phase_of() { k -n "$ns" get ajjob "$1" -o jsonpath='{.status.phase}' 2>/dev/null; }

n=0
for d in "$repo_root"/tests/data/bad/*/; do
  [[ -f $d/ajjob.json ]] || continue
  grep -q '^rejected ' "$d/expect" && continue
  case=$(basename "$d")
  n=$((n + 1))
  expect_ok "$case: accepted by the API server" k -n "$ns" create -f "$d/ajjob.json"
  canary "$n" >"$work/canary.json"
  expect_ok "$case: canary-$n created after it" k -n "$ns" create -f "$work/canary.json"
  got=
  for ((i = 0; i < 100; i++)); do
    got=$(phase_of "canary-$n")
    [[ -n $got ]] && break
    sleep 0.1
  done
  if [[ -n $got ]]; then ok "$case: canary-$n handled within 10 s ($got)"
  else : >"$t_out"; fail "$case: canary-$n handled within 10 s"; fi
done
((n >= 20)) && ok "$n hostile AjJobs" || { : >"$t_out"; fail "at least 20 hostile AjJobs (got $n)"; }

port=$(cat "$work/controller.port")
expect_ok "the controller is still running" kill -0 "$pid"
expect_ok "/readyz still ok" curl -fsS "http://127.0.0.1:$port/readyz"
finish
