#!/usr/bin/env bash
# aj-controller against the real API server, running with exactly the
# permissions of deploy/rbac.yaml (a service-account token, not admin).
# This script acts as Volcano by writing the Volcano Jobs' status: nothing else runs Volcano
# Jobs on this control plane, and a crash, a conflict or an API server restart needs no pods
# (what the real Volcano does is integration.lifecycle-volcano's). It
# restarts the API server, so ctest runs it alone (RUN_SERIAL); the
# controllers watch only this script's namespace.
source "$(dirname "$0")/lib.sh"
: "${AJ_BIN:?AJ_BIN must name the aj executable}"
: "${AJ_CONTROLLER_BIN:?AJ_CONTROLLER_BIN must name the aj-controller executable}"

ns=$(new_namespace ctl)
sys=$(new_namespace ajsys)
work=$(mktemp -d "${TMPDIR:-/tmp}/aj-it-controller.XXXXXX")
export AJ_HOME=$repo_root/tests/integration/data/controller/.azure_jobs

cleanup() {
  stop_controllers
  # On failure, the controllers' last words help more than the verdicts.
  if ((t_fail)); then
    for f in "$work"/*.log; do [[ -f $f ]] && { echo "--- $f"; tail -n 25 "$f"; }; done
  fi
  rm -rf "$work" "$t_out"
}
trap cleanup EXIT

# --- the controller's identity: deploy/rbac.yaml in a namespace of its own ---
controller_identity "$sys" "$work"
kc=$work/kubeconfig
expect_eq "the token is not an admin" "no" bash -c "'$AJ_KUBECTL' --kubeconfig '$kc' auth can-i create pods -n '$ns' || true"

volcano_count() { k -n "$ns" get jobs.batch.volcano.sh -o name | grep -c "/$1\$" || true; }
submit() { # submit NAME TEMPLATE [aj run args...]
  local name=$1 tpl=$2; shift 2
  "$AJ_BIN" run -t "$tpl" --namespace "$ns" --name "$name" --dry-run -o json "$@" -- python train.py --lr 0.1 \
    | k apply -f - >/dev/null
}

http_get() { # http_get NAME PATH: GET from the health port of controller NAME
  python3 -c 'import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s%s" % (open(sys.argv[1]).read().strip(), sys.argv[2]), timeout=10).read().decode())' \
    "$work/$1.port" "$2"
}
start_controller main
expect_ok "the controller becomes ready" wait_for 30 bash -c \
  "$(declare -f http_get); work='$work'; http_get main /readyz | grep -q '^ok'"

# --- create: one Volcano Job, owned, with the template's shape ---
submit train-1 job
expect_ok "AjJob becomes Submitted" wait_for 20 phase_is train-1 Submitted
expect_eq "exactly one Volcano Job" "1" volcano_count train-1
uid=$(k -n "$ns" get ajjob train-1 -o jsonpath='{.metadata.uid}')
expect_eq "owner reference names the AjJob as controller" "AjJob/train-1/$uid/true/true" \
  k -n "$ns" get jobs.batch.volcano.sh train-1 -o \
  jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].uid}/{.metadata.ownerReferences[0].controller}/{.metadata.ownerReferences[0].blockOwnerDeletion}'
expect_eq "gang size is the node count" "2" k -n "$ns" get jobs.batch.volcano.sh train-1 -o jsonpath='{.spec.minAvailable}'
expect_eq "master and worker tasks" "master=1,worker=1," k -n "$ns" get jobs.batch.volcano.sh train-1 \
  -o jsonpath='{range .spec.tasks[*]}{.name}={.replicas},{end}'
expect_eq "status names the Volcano Job" "train-1" k -n "$ns" get ajjob train-1 -o jsonpath='{.status.volcano.jobName}'
expect_eq "observedGeneration follows the spec" "1" k -n "$ns" get ajjob train-1 -o jsonpath='{.status.observedGeneration}'
expect_ok "an Event says it was created" bash -c \
  "'$AJ_KUBECTL' -n '$ns' get events.events.k8s.io -o jsonpath='{.items[*].reason}' | grep -q VolcanoJobCreated"

# --- acting as Volcano: the AjJob phase follows ---
set_volcano_phase train-1 Running
expect_ok "Running is mirrored" wait_for 20 phase_is train-1 Running
expect_eq "Running condition is True" "True" k -n "$ns" get ajjob train-1 \
  -o jsonpath='{.status.conditions[?(@.type=="Running")].status}'
set_volcano_phase train-1 Completed
expect_ok "Completed becomes Succeeded" wait_for 20 phase_is train-1 Succeeded

submit train-2 job
expect_ok "second job submitted" wait_for 20 phase_is train-2 Submitted
set_volcano_phase train-2 Failed
expect_ok "Failed is mirrored" wait_for 20 phase_is train-2 Failed

# --- invalid template: Failed with the resolver's message, nothing created ---
cat >"$work/broken.yaml" <<YAML
apiVersion: aj.dev/v1alpha1
kind: AjJob
metadata: {name: broken-1, namespace: $ns}
spec:
  name: template/job
  template:
    base: [common]
    config:
      target: {gpus_per_node: eight}
      jobs: [{name: train, instance_count: 2}]
  components:
    template/common: {config: {target: {service: volcano}}}
  command: [python, train.py]
  nodes: 2
YAML
expect_ok "apply an AjJob with a bad template" k apply -f "$work/broken.yaml"
expect_ok "it fails" wait_for 20 phase_is broken-1 Failed
expect_ok "the message names the key path and the problem" bash -c \
  "'$AJ_KUBECTL' -n '$ns' get ajjob broken-1 -o jsonpath='{.status.message}' | grep -q 'config.target.gpus_per_node: expected integer'"
expect_ok "...and every problem, not just the first" bash -c \
  "'$AJ_KUBECTL' -n '$ns' get ajjob broken-1 -o jsonpath='{.status.message}' | grep -q 'config.jobs\[0\].sku: required'"
expect_eq "no Volcano Job for it" "0" volcano_count broken-1
expect_ok "a Warning Event explains it" bash -c \
  "'$AJ_KUBECTL' -n '$ns' get events.events.k8s.io -o jsonpath='{range .items[*]}{.type}/{.reason} {end}' | grep -q Warning/InvalidTemplate"

# --- a base published as an AjTemplate resolves from the cluster ---
cat >"$work/remote.yaml" <<YAML
apiVersion: aj.dev/v1alpha1
kind: AjTemplate
metadata: {name: storage.shared, namespace: $ns}
spec:
  config: {target: {labels: {team: vision}}}
---
apiVersion: aj.dev/v1alpha1
kind: AjJob
metadata: {name: remote-1, namespace: $ns}
spec:
  name: template/remote
  template:
    base: [storage.shared]
    config:
      target: {service: volcano, gpus_per_node: 1, cpus_per_node: 2, memory: 4Gi}
      environment: {image: busybox}
      jobs: [{name: train, sku: G1, instance_count: 1}]
  command: [python, train.py]
YAML
expect_ok "apply an AjTemplate and an AjJob that uses it" k apply -f "$work/remote.yaml"
expect_ok "it is submitted" wait_for 20 phase_is remote-1 Submitted
expect_eq "the AjTemplate's config reached the Volcano Job" "vision" \
  k -n "$ns" get jobs.batch.volcano.sh remote-1 -o jsonpath='{.metadata.labels.team}'

# --- /metrics of a controller that saw jobs run and finish: Prometheus's promtool parses it
# (lint problems reported), and every query of the chart's Grafana dashboard returns data from it ---
expect_ok "/metrics is read" bash -c "$(declare -f http_get); work='$work'; http_get main /metrics >'$work/metrics.txt'"
expect_ok "promtool parses /metrics and each dashboard query returns data from it" \
  "$repo_root/tests/metrics/check-scrape.sh" "$work/metrics.txt" "$repo_root/charts/aj-controller/dashboards/aj-controller.json"
sed -n '/^\(ok\|FAIL\|#\)/p' "$t_out"

# --- crash between create and status: the restarted controller adopts, never duplicates ---
stop_controllers
submit crash-1 job
uid=$(k -n "$ns" get ajjob crash-1 -o jsonpath='{.metadata.uid}')
# What a controller killed right after its create leaves behind: the owned Volcano Job, no status.
k -n "$ns" get jobs.batch.volcano.sh train-1 -o json | python3 -c '
import json, sys
j = json.load(sys.stdin)
m = j["metadata"]
for k in ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"):
    m.pop(k, None)
m["name"] = "crash-1"
m["ownerReferences"][0].update(name="crash-1", uid=sys.argv[1])
j.pop("status", None)
print(json.dumps(j))' "$uid" | k apply -f - >/dev/null
# Cancelled before any controller saw it: nothing is ever created.
submit early-cancel job
k -n "$ns" annotate ajjob early-cancel aj.dev/cancel=true >/dev/null
start_controller restarted
expect_ok "the restarted controller records the existing Volcano Job" wait_for 30 phase_is crash-1 Submitted
expect_ok "an AjJob cancelled before submission ends Cancelled" wait_for 30 phase_is early-cancel Cancelled
expect_eq "...and never gets a Volcano Job" "0" volcano_count early-cancel
expect_eq "still exactly one Volcano Job" "1" volcano_count crash-1
expect_ok "it records the one it found and creates none" bash -c \
  "grep 'recorded volcano job' '$work/restarted.log' | grep -q crash-1 &&
   ! grep 'created volcano job' '$work/restarted.log' | grep -q crash-1"

# A Volcano Job of the same name that is not ours is never taken over.
k -n "$ns" create -f - >/dev/null <<YAML
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: taken-1, namespace: $ns}
spec:
  tasks: [{name: master, replicas: 1, template: {spec: {containers: [{name: c, image: busybox}]}}}]
YAML
submit taken-1 job
expect_ok "a name taken by a foreign Volcano Job fails the AjJob" wait_for 20 phase_is taken-1 Failed
expect_ok "...with the reason" bash -c \
  "'$AJ_KUBECTL' -n '$ns' get ajjob taken-1 -o jsonpath='{.status.message}' | grep -q 'does not belong to this AjJob'"

# SIGKILL at arbitrary moments while many AjJobs are submitted: never two Volcano Jobs for one.
# (waits name their pids: the controllers run in the background too)
subs=()
for i in $(seq 1 12); do submit burst-$i job & subs+=($!); done
wait "${subs[@]}"
pid=$(cat "$work/restarted.pid")
sleep 0.3; kill -KILL "$pid" 2>/dev/null
start_controller again
for i in $(seq 1 12); do
  wait_for 30 phase_is burst-$i Submitted >/dev/null 2>&1
done
expect_ok "after a SIGKILL every burst AjJob is submitted" bash -c "
  for i in \$(seq 1 12); do [[ \$('$AJ_KUBECTL' -n '$ns' get ajjob burst-\$i -o jsonpath='{.status.phase}') == Submitted ]] || exit 1; done"
expect_eq "...with exactly one Volcano Job each" "12" bash -c \
  "'$AJ_KUBECTL' -n '$ns' get jobs.batch.volcano.sh -o name | grep -c '/burst-'"

# --- cancel: the annotation deletes the Volcano Job (Foreground), Cancelled once it is gone ---
# (no garbage collector on this control plane: the script finishes the deletion; with the real
# one and real pods, integration.lifecycle-volcano)
k -n "$ns" annotate ajjob burst-1 aj.dev/cancel=true >/dev/null
expect_ok "cancelling" wait_for 20 phase_is burst-1 Cancelling
expect_eq "...the Volcano Job waits for its dependents" "foregroundDeletion" \
  k -n "$ns" get jobs.batch.volcano.sh burst-1 -o jsonpath='{.metadata.finalizers[0]}'
finish_foreground_delete burst-1
expect_ok "cancelled once it is gone" wait_for 20 phase_is burst-1 Cancelled
expect_eq "its Volcano Job is gone" "0" volcano_count burst-1

# --- a Volcano Job deleted behind our back fails the AjJob ---
k -n "$ns" delete jobs.batch.volcano.sh burst-2 >/dev/null
expect_ok "a deleted Volcano Job fails its AjJob" wait_for 20 phase_is burst-2 Failed

# --- status conflicts are retried: metadata changes race the status writes ---
subs=()
for i in $(seq 1 15); do k -n "$ns" annotate --overwrite ajjob burst-3 "touch=$i" >/dev/null & subs+=($!); done
set_volcano_phase burst-3 Running
wait "${subs[@]}"
expect_ok "the status still converges under concurrent writes" wait_for 20 phase_is burst-3 Running

# --- the API server restarts mid-watch: the controller recovers and catches up ---
if restart_apiserver; then
  expect_ok "the API server comes back" wait_for 60 k get --raw /readyz
  submit after-restart job
  expect_ok "an AjJob created after the restart is submitted" wait_for 60 phase_is after-restart Submitted
  set_volcano_phase burst-4 Running
  expect_ok "status changes after the restart are mirrored" wait_for 60 phase_is burst-4 Running
else
  fail "restart the kube-apiserver"
fi

# --- two controllers: only the leader writes, and the other takes over ---
stop_controllers
start_controller lead-a --leader-elect --identity ctl-a
sleep 1
start_controller lead-b --leader-elect --identity ctl-b
holder() { k -n "$sys" get lease aj-controller -o jsonpath='{.spec.holderIdentity}'; }
expect_ok "one of them holds the Lease" wait_for 30 bash -c "[[ -n \$('$AJ_KUBECTL' -n '$sys' get lease aj-controller -o jsonpath='{.spec.holderIdentity}') ]]"
leader=$(holder)
case $leader in ctl-a) follower=lead-b; leader_log=lead-a ;; *) follower=lead-a; leader_log=lead-b ;; esac
submit elect-1 job
expect_ok "the leader submits" wait_for 30 phase_is elect-1 Submitted
expect_ok "...the leader's log shows the create" grep -q '"ajjob":"'"$ns"'/elect-1"' "$work/$leader_log.log"
expect_ok "...and the follower wrote nothing" bash -c "! grep -q 'created volcano job' '$work/$follower.log'"
kill -TERM "$(cat "$work/$leader_log.pid")"
expect_ok "the leader releases the Lease on shutdown and the other takes over" \
  wait_for 30 bash -c "[[ \$('$AJ_KUBECTL' -n '$sys' get lease aj-controller -o jsonpath='{.spec.holderIdentity}') == ctl-${follower#lead-} ]]"
submit elect-2 job
expect_ok "the new leader submits" wait_for 30 phase_is elect-2 Submitted
stop_controllers
start_controller again

# --- metrics carry controller-runtime's names ---
expect_ok "reconcile totals are exported" wait_for 30 bash -c \
  "$(declare -f http_get); work='$work'; http_get again /metrics | grep -q '^controller_runtime_reconcile_total{controller=\"ajjob\",result=\"success\"} [1-9]'"
expect_ok "queue depth is exported" bash -c \
  "$(declare -f http_get); work='$work'; http_get again /metrics | grep -q '^workqueue_depth{name=\"ajjob\"} '"
expect_ok "API requests are counted by code and method, as client-go does" bash -c \
  "$(declare -f http_get); work='$work'; http_get again /metrics | grep -q '^rest_client_requests_total{code=\"200\",method=\"GET\"} [1-9]'"
stop_controllers
expect_ok "SIGTERM stops it cleanly" grep -q '"msg":"aj-controller stopped"' "$work/again.log"
expect_ok "no token in any log" bash -c "! grep -qF -- '$token' '$work'/*.log"

finish
