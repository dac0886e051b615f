#!/usr/bin/env bash
# The kube backend on the cluster fixture: kube-controller-manager's Job controller,
# kube-scheduler and kwok's nodes. First without the controller: `aj render` of the example
# template/kube (and of children that set target.labels or target.queue) applied with kubectl.
# The Job runs to Complete with the rank contract on its pods (host names in the headless
# Service, JOB_COMPLETION_INDEX, MASTER_ADDR, WORLD_SIZE); one failing rank fails the whole Job
# by its podFailurePolicy and stops the other ranks; with target.queue the Job waits suspended
# until the real Kueue admits it, and one over the ClusterQueue's quota stays so with Kueue's reason. Then through aj-controller (deploy/rbac.yaml's
# permissions): AjJob -> Job and Service -> pods -> Succeeded, a failing rank -> Failed with
# the Job's reason, and a cancel; status.tasks and the Tasks column of kubectl get ajjob; an
# AjJob over the ClusterQueue's quota waits with Kueue's reason on its status and in one Event,
# then is admitted (the ClusterQueue named) and Succeeds once the AjJobs holding the quota go; finished
# AjJobs deleted after their spec.ttlSecondsAfterFinished, or the controller's
# --ttl-seconds-after-finished after a restart, one with 0 kept.
source "$(dirname "$0")/lib.sh"
cluster_test kube

# A template home: the examples, and children of template/kube that choose what kwok does.
cp -r "$repo_root/examples/.azure_jobs" "$work/home"
export AJ_HOME=$work/home
child() { # child NAME TARGET-YAML: template/NAME is template/kube with more target keys
  printf 'base: kube\nconfig:\n  target:\n%s\n' "$2" >"$work/home/template/$1.yaml"
}
child kube-fail '    labels: {aj.dev/kwok-fail-task: worker-1, aj.dev/kwok-exit-code: "3", aj.dev/kwok-slow-task: worker, aj.dev/kwok-slow-seconds: "120"}'
child kube-queued '    queue: team-a'
child kube-held '    labels: {aj.dev/kwok-hold: "true"}'

# apply NAME TEMPLATE NODES: the List that aj renders, created in $ns
apply() {
  "$AJ_BIN" render -t "$2" -n "$3" --namespace "$ns" --name "$1" -o json -- python train.py >"$work/$1.json" &&
    k create -f "$work/$1.json" >/dev/null
}
jobf() { k -n "$ns" get jobs.batch "$1" -o jsonpath="$2"; }
cond() { jobf "$1" "{.status.conditions[?(@.type==\"$2\")].status}"; }
cond_true() { [[ $(cond "$1" "$2") == True ]]; }
kpods() { k -n "$ns" get pods -l "batch.kubernetes.io/job-name=$1" -o jsonpath="$2"; }

# --- the example runs to Complete ---
expect_ok "aj render -t kube gives a List that the API server creates" apply kj kube 2
expect_eq "...a headless Service and an Indexed Job" "None Indexed 2 2 0" bash -c \
  "echo \$('$AJ_KUBECTL' -n '$ns' get service kj -o jsonpath='{.spec.clusterIP}') \$('$AJ_KUBECTL' -n '$ns' get jobs.batch kj -o jsonpath='{.spec.completionMode} {.spec.completions} {.spec.parallelism} {.spec.backoffLimit}')"
expect_ok "the Job is Complete" wait_for 90 cond_true kj Complete
expect_eq "...both indexes succeeded" "2 0,1" jobf kj '{.status.succeeded} {.status.completedIndexes}'
expect_eq "...its two pods succeeded" "Succeeded Succeeded" kpods kj '{.items[*].status.phase}'
expect_ok "...on two different GPU nodes" bash -c \
  "n=\$('$AJ_KUBECTL' -n '$ns' get pods -l batch.kubernetes.io/job-name=kj -o jsonpath='{.items[*].spec.nodeName}'); [[ \$n =~ ^kwok-[ah]100-[0-9]+\ kwok-[ah]100-[0-9]+\$ ]] && [[ \$(tr ' ' '\n' <<<\"\$n\" | sort -u | wc -l) == 2 ]]"

# --- the rank contract on the Job controller's pods, while they run ---
expect_ok "a held job of three ranks is created" apply kh kube-held 3
all_running() { [[ $(kpods kh '{.items[*].status.phase}') == "Running Running Running" ]]; }
expect_ok "...its three pods run" wait_for 90 all_running
envf() { # envf POD VAR: a variable of the pod's container, as written or from its field
  k -n "$ns" get pod "$1" -o jsonpath="{.spec.containers[0].env[?(@.name==\"$2\")].value}{.spec.containers[0].env[?(@.name==\"$2\")].valueFrom.fieldRef.fieldPath}"
}
for i in 0 1 2; do
  pod=$(kpods kh "{.items[?(@.metadata.annotations.batch\\.kubernetes\\.io/job-completion-index==\"$i\")].metadata.name}")
  expect_ok "index $i has a pod ($pod)" test -n "$pod"
  expect_eq "$pod: host name <job>-<index> in the Service's subdomain" "kh-$i.kh" \
    k -n "$ns" get pod "$pod" -o jsonpath='{.spec.hostname}.{.spec.subdomain}'
  expect_eq "$pod: the Job controller's JOB_COMPLETION_INDEX, from the pod's index" \
    "metadata.labels['batch.kubernetes.io/job-completion-index']" envf "$pod" JOB_COMPLETION_INDEX
  for v in MASTER_ADDR:kh-0.kh WORLD_SIZE:3 AJ_NODES:3 AJ_TASK:worker; do
    expect_eq "$pod: ${v%%:*}" "${v#*:}" envf "$pod" "${v%%:*}"
  done
  expect_eq "$pod: labels aj.dev/ajjob and aj.dev/task" "kh worker" \
    k -n "$ns" get pod "$pod" -o jsonpath='{.metadata.labels.aj\.dev/ajjob} {.metadata.labels.aj\.dev/task}'
  # the command as the kubelet hands it to bash: $$ is $
  expect_ok "$pod: the script makes NODE_RANK of the index" bash -c \
    "'$AJ_KUBECTL' -n '$ns' get pod '$pod' -o jsonpath='{.spec.containers[0].command[2]}' | sed 's/[$][$]/\$/g' | grep -qF 'NODE_RANK=\$((0 + \${JOB_COMPLETION_INDEX:-0}))'"
done
hostnames() {
  k -n "$ns" get endpointslices -l kubernetes.io/service-name=kh -o jsonpath='{.items[*].endpoints[*].hostname}' | tr ' ' '\n' | sort | xargs
}
hostnames_are() { [[ $(hostnames) == "kh-0 kh-1 kh-2" ]]; }
expect_ok "the headless Service resolves the three host names (EndpointSlice)" wait_for 30 hostnames_are
k -n "$ns" delete jobs.batch kh --wait=false >/dev/null

# --- one failing rank fails the Job and stops the others ---
expect_ok "a job whose index 1 exits 3 is created" apply kf kube-fail 3
expect_ok "the Job is Failed" wait_for 90 cond_true kf Failed
expect_eq "...by its pod failure policy" "PodFailurePolicy" jobf kf '{.status.conditions[?(@.type=="Failed")].reason}'
# the ranks it stopped count as failed too
expect_eq "...with no success" "3 " jobf kf '{.status.failed} {.status.succeeded}'
expect_eq "...which is index 1, exit code 3" "1 3" bash -c \
  "'$AJ_KUBECTL' -n '$ns' get pods -l batch.kubernetes.io/job-name=kf -o jsonpath='{range .items[?(@.status.phase==\"Failed\")]}{.metadata.annotations.batch\.kubernetes\.io/job-completion-index} {.status.containerStatuses[0].state.terminated.exitCode}{end}'"
no_active() { [[ -z $(kpods kf '{.items[?(@.status.phase=="Running")].metadata.name}') ]] && [[ -z $(jobf kf '{.status.active}') ]]; }
expect_ok "...and its running ranks are stopped (they had 120 s to go)" wait_for 60 no_active

# --- target.queue: suspended until the real Kueue admits it ---
# The cluster's ClusterQueue team-a holds the kwok GPU nodes' 64 GPUs (tests/controlplane/cluster/kueue.sh);
# this namespace gets its own LocalQueue team-a in front of it.
k apply -f - >/dev/null <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: team-a, namespace: $ns}
spec: {clusterQueue: team-a}
YAML
wl() { # wl JOB JSONPATH: the Workload Kueue made for the Job
  k -n "$ns" get workloads.kueue.x-k8s.io -l "kueue.x-k8s.io/job-uid=$(jobf "$1" '{.metadata.uid}')" -o jsonpath="$2"
}
wl_cond() { wl "$1" "{.items[0].status.conditions[?(@.type==\"$2\")].status}"; }
wl_admitted() { [[ $(wl_cond "$1" Admitted) == True ]]; }
expect_ok "a job with target.queue is created" apply kq kube-queued 2
expect_eq "...with the Kueue queue label, created suspended" "team-a True" python3 -c "
import json
job = [o for o in json.load(open('$work/kq.json'))['items'] if o['kind'] == 'Job'][0]
print(job['metadata']['labels']['kueue.x-k8s.io/queue-name'], job['spec']['suspend'])"
expect_ok "...Kueue admits its Workload (QuotaReserved and Admitted)" wait_for 60 wl_admitted kq
expect_eq "...on flavors with 16 GPUs of ClusterQueue team-a" "team-a 16" bash -c \
  "'$AJ_KUBECTL' -n '$ns' get workloads.kueue.x-k8s.io -l kueue.x-k8s.io/job-uid=\$('$AJ_KUBECTL' -n '$ns' get jobs.batch kq -o jsonpath='{.metadata.uid}') -o jsonpath='{.items[0].status.admission.clusterQueue} {.items[0].status.admission.podSetAssignments[0].resourceUsage.nvidia\.com/gpu}'"
expect_ok "...unsuspends the Job, which runs to Complete" wait_for 90 cond_true kq Complete
# 9 pods of 8 GPUs ask for 72 of the ClusterQueue's 64: Kueue keeps it suspended and says why.
expect_ok "a job over the ClusterQueue's quota is created" apply kover kube-queued 9
over_reason() { [[ $(wl kover '{.items[0].status.conditions[?(@.type=="QuotaReserved")].message}') == *"insufficient"* ]]; }
expect_ok "...Kueue does not admit it, saying the quota is insufficient" wait_for 60 over_reason
expect_eq "...it stays suspended with no pod" "true" bash -c \
  "echo \$('$AJ_KUBECTL' -n '$ns' get jobs.batch kover -o jsonpath='{.spec.suspend}') \$('$AJ_KUBECTL' -n '$ns' get pods -l batch.kubernetes.io/job-name=kover -o jsonpath='{.items[*].metadata.name}')"
k -n "$ns" delete jobs.batch kover --wait=false >/dev/null

# --- refusals come from aj, before anything reaches the cluster ---
expect_fail "a heterogeneous template is refused, naming the key" \
  "config._extra.volcano.tasks: service kube builds one Indexed Job" \
  bash -c "printf 'base: heterogeneous\nconfig:\n  target: {service: kube}\n' >'$work/home/template/kube-h.yaml' && '$AJ_BIN' render -t kube-h"
# --- through aj-controller: AjJob -> Job -> pods -> Succeeded; a failing rank -> Failed; cancel ---
start_controller main
submit_ajjob aj-ok kube 2
expect_ok "AjJob aj-ok: Succeeded" wait_for 90 phase_is aj-ok Succeeded
expect_ok "...status.tasks: its one task, both pods succeeded" wait_for 10 tasks_are aj-ok "worker 2 0 0 2 0;"
expect_eq "...the Tasks column of kubectl get ajjob" "2/2 succeeded" tasks_column aj-ok
expect_eq "...its Job is Complete with both indexes" "True 2" jobf aj-ok '{.status.conditions[?(@.type=="Complete")].status} {.status.succeeded}'
expect_eq "...the status names the Job and the backend" "aj-ok kube" jpath aj-ok '{.status.kube.jobName} {.status.backend}'
expect_eq "...the AjJob owns the Job and the Service" "AjJob AjJob" bash -c \
  "echo \$('$AJ_KUBECTL' -n '$ns' get jobs.batch aj-ok -o jsonpath='{.metadata.ownerReferences[0].kind}') \$('$AJ_KUBECTL' -n '$ns' get service aj-ok -o jsonpath='{.metadata.ownerReferences[0].kind}')"
submit_ajjob aj-fail kube 3 '{"target": {"labels": {"aj.dev/kwok-fail-task": "worker-1", "aj.dev/kwok-exit-code": "3", "aj.dev/kwok-slow-task": "worker", "aj.dev/kwok-slow-seconds": "120"}}}'
expect_ok "AjJob aj-fail: Failed" wait_for 90 phase_is aj-fail Failed
expect_ok "...naming the pod failure policy, the index and the exit code" bash -c \
  "m=\$('$AJ_KUBECTL' -n '$ns' get ajjob aj-fail -o jsonpath='{.status.message}'); [[ \$m == *PodFailurePolicy* && \$m == *'exit code 3'* && \$m == *'index 1'* ]]"
submit_ajjob aj-cancel kube 2 '{"target": {"labels": {"aj.dev/kwok-hold": "true"}}}'
expect_ok "AjJob aj-cancel: Running" wait_for 90 phase_is aj-cancel Running
both_ready() { tasks_are aj-cancel "worker 2 0 2 0 0;"; }
expect_ok "...status.tasks: both pods running (the Job's ready pods)" wait_for 30 both_ready
expect_eq "...the Tasks column of kubectl get ajjob" "2/2 running" tasks_column aj-cancel
rv_steady() { # nothing changes: the same status, so nothing is written
  local a b
  a=$(jpath aj-cancel '{.metadata.resourceVersion}'); sleep 3; b=$(jpath aj-cancel '{.metadata.resourceVersion}')
  echo "resourceVersion $a then $b" >&2; [[ -n $a && $a == "$b" ]]
}
expect_ok "...written once: the AjJob is not written again while its pods stay as they are" rv_steady
k -n "$ns" annotate ajjob aj-cancel aj.dev/cancel=true >/dev/null
expect_ok "...cancelled: Cancelled" wait_for 90 phase_is aj-cancel Cancelled
expect_eq "...its Job and pods are gone" "" kpods aj-cancel '{.items[*].metadata.name}'
expect_eq "...and so are its tasks (the Job is gone)" "" jpath aj-cancel '{.status.tasks}{.status.tasksSummary}'

# --- target.queue through aj-controller: over quota, the AjJob waits with Kueue's own reason ---
# Two held AjJobs of four 8-GPU ranks take the ClusterQueue's 64 GPUs (a100 and h100 flavors).
held='{"target": {"queue": "team-a", "labels": {"aj.dev/kwok-hold": "true"}}}'
submit_ajjob aj-hold-1 kube 4 "$held"
submit_ajjob aj-hold-2 kube 4 "$held"
holding() { phase_is aj-hold-1 Running && phase_is aj-hold-2 Running; }
expect_ok "two queued AjJobs of 4 ranks hold the ClusterQueue's 64 GPUs: admitted, Running" wait_for 120 holding
expect_ok "...its message names the ClusterQueue that admitted it (told when Kueue unsuspended the Job)" bash -c \
  "'$AJ_KUBECTL' -n '$ns' get events.events.k8s.io -o jsonpath='{range .items[?(@.regarding.name==\"aj-hold-1\")]}{.reason}: {.note}{\"\\n\"}{end}' | grep -E '^KubeJob(Resumed|Running): .*; admitted by Kueue to ClusterQueue team-a\$'"
# its pods run 10 s once admitted: time to see it unsuspended before it completes
submit_ajjob aj-over kube 2 '{"target": {"queue": "team-a", "labels": {"aj.dev/kwok-slow-task": "worker", "aj.dev/kwok-slow-seconds": "10"}}}'
cond_of() { jpath "$1" "{.status.conditions[?(@.type==\"$2\")].$3}"; }
kueue_said() { [[ $(cond_of aj-over Unschedulable status) == True ]]; }
expect_ok "AjJob aj-over (16 more GPUs): Unschedulable with Kueue's reason" wait_for 60 kueue_said
over_msg="Job aj-over is suspended, not admitted by Kueue: Pending: couldn't assign flavors to pod set main: "
expect_ok "...its message: Kueue's reason and message for the Workload's QuotaReserved condition" bash -c \
  "m=\$('$AJ_KUBECTL' -n '$ns' get ajjob aj-over -o jsonpath='{.status.message}'); echo \"\$m\" >&2; [[ \$m == \"$over_msg\"*'insufficient unused quota for nvidia.com/gpu in flavor a100'* ]]"
expect_eq "...still Submitted and Suspended" "Submitted True" bash -c \
  "echo \$('$AJ_KUBECTL' -n '$ns' get ajjob aj-over -o jsonpath='{.status.phase}') \$('$AJ_KUBECTL' -n '$ns' get ajjob aj-over -o jsonpath='{.status.conditions[?(@.type==\"Suspended\")].status}')"
wl_says() { # the Workload's own "reason: message" of QuotaReserved
  wl aj-over '{.items[0].status.conditions[?(@.type=="QuotaReserved")].reason}: {.items[0].status.conditions[?(@.type=="QuotaReserved")].message}'
}
kueue_words=$(wl_says)
echo "Kueue: $kueue_words"
expect_eq "...the condition's message is the Workload's own, word for word" "$kueue_words" cond_of aj-over Unschedulable message
over_events() {
  k -n "$ns" get events.events.k8s.io -o jsonpath='{range .items[?(@.regarding.name=="aj-over")]}{.type} {.reason}: {.note}{"\n"}{end}' |
    grep -c '^Warning Unschedulable: Pending: couldn.t assign flavors to pod set main: '
}
expect_eq "...told in one Warning Event Unschedulable" "1" over_events
sleep 20   # two more looks (5 s after submission, then 15 s later): the same reason, no second Event
expect_eq "...not told again while the reason stays the same" "1" over_events
k -n "$ns" delete ajjob aj-hold-1 --wait=false >/dev/null
expect_ok "its quota freed (aj-hold-1 deleted), aj-over is admitted and Succeeds" wait_for 150 phase_is aj-over Succeeded
expect_ok "...when Kueue unsuspended it, its message named the ClusterQueue (Event KubeJobResumed)" bash -c \
  "'$AJ_KUBECTL' -n '$ns' get events.events.k8s.io -o jsonpath='{range .items[?(@.regarding.name==\"aj-over\")]}{.reason}: {.note}{\"\\n\"}{end}' | grep -E '^KubeJobResumed: Job aj-over is (pending|running): .*; admitted by Kueue to ClusterQueue team-a\$'"
expect_eq "...and the Unschedulable condition is gone" "False" cond_of aj-over Unschedulable status
k -n "$ns" delete ajjob aj-hold-2 --wait=false >/dev/null

# --- finished AjJobs go after their time to live, like batch/v1 Jobs ---
submit_ajjob aj-ttl kube 1 '{}' '{"ttlSecondsAfterFinished": 3}'
submit_ajjob aj-keep kube 1 '{}' '{"ttlSecondsAfterFinished": 0}'
ajjob_gone() { ! k -n "$ns" get ajjob "$1" >/dev/null 2>&1; }
expect_ok "AjJob aj-ttl (ttlSecondsAfterFinished: 3): deleted after it finished" wait_for 90 ajjob_gone aj-ttl
expect_ok "...not before 3 s had passed since it completed (the condition's time is whole seconds)" bash -c \
  "'$AJ_KUBECTL' -n '$ns' get events.events.k8s.io -o json | python3 -c '
import json, sys, datetime
ev = [e for e in json.load(sys.stdin)[\"items\"] if e[\"regarding\"][\"name\"] == \"aj-ttl\"]
t = lambda s: datetime.datetime.fromisoformat(s.replace(\"Z\", \"+00:00\"))
done = [t(e[\"eventTime\"]) for e in ev if e[\"reason\"] == \"KubeJobComplete\"]
gone = [t(e[\"eventTime\"]) for e in ev if e[\"reason\"] == \"Expired\"]
assert done and gone, (done, gone)
assert (gone[0] - done[0]).total_seconds() >= 2, (done, gone)'"
expect_eq "...told in a Normal Event" "Normal Deleted after ttlSecondsAfterFinished: 3 s after it finished" bash -c \
  "'$AJ_KUBECTL' -n '$ns' get events.events.k8s.io -o jsonpath='{range .items[?(@.reason==\"Expired\")]}{.type} {.note}{end}'"
job_gone() { ! k -n "$ns" get jobs.batch aj-ttl >/dev/null 2>&1; }
expect_ok "...its Job went with it (garbage collector)" wait_for 60 job_gone
expect_ok "...and the controller logged it" grep -q '"msg":"deleted after ttlSecondsAfterFinished","ajjob":"'"$ns"'/aj-ttl"' "$work/main.log"
expect_ok "AjJob aj-keep (0: kept) and those without one stay" bash -c \
  "'$AJ_KUBECTL' -n '$ns' get ajjob aj-ok aj-fail aj-cancel aj-keep >/dev/null"
expect_ok "...aj-keep did finish" wait_for 60 phase_is aj-keep Succeeded
stop_controllers

# --- a restarted controller with --ttl-seconds-after-finished deletes those long due ---
start_controller ttl --ttl-seconds-after-finished 1
expect_ok "the flag's time to live: AjJobs without one of their own go (aj-ok, aj-fail, aj-cancel)" \
  wait_for 60 bash -c "! '$AJ_KUBECTL' -n '$ns' get ajjob aj-ok && ! '$AJ_KUBECTL' -n '$ns' get ajjob aj-fail && ! '$AJ_KUBECTL' -n '$ns' get ajjob aj-cancel"
sleep 2
expect_ok "...spec.ttlSecondsAfterFinished: 0 overrides it: aj-keep stays" k -n "$ns" get ajjob aj-keep
stop_controllers
finish
