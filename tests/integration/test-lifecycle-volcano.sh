#!/usr/bin/env bash
# The AjJob state machine (docs/api.md) against the real Volcano on the cluster fixture: the
# controller runs with exactly deploy/rbac.yaml's permissions and watches this script's namespace;
# kwok runs the pods as their labels say. A failing rank fails the AjJob naming its pod and exit
# code after Volcano's restarts (phase Running throughout, retryCount shown); a job too big waits
# with the scheduler's reason and aj's fact (it can never fit the nodes); a queue that does not
# exist fails it with Volcano's message; cancel is Cancelling until the Volcano Job and its pods
# are gone; abort and resume through Volcano Commands; deleting the AjJob lets the garbage
# collector take the rest.
source "$(dirname "$0")/lib.sh"
cluster_test life
start_controller main
expect_ok "the controller becomes ready" wait_for 30 grep -q '"msg":"aj-controller started"' "$work/main.log"

# kwok's behaviour per pod, chosen by labels (tests/controlplane/cluster/stages.yaml)
hold='{"target": {"labels": {"aj.dev/kwok-hold": "true"}}}'

# --- a failing rank: Volcano restarts the gang twice, then fails; the phase stays Running ---
submit_ajjob fails volcano-cpu 2 '{"target": {"labels": {"aj.dev/kwok-fail-task": "worker", "aj.dev/kwok-exit-code": "7"}},
  "_extra": {"volcano": {"max_retry": 2}}}'
record_phases fails
expect_ok "a failing rank fails the AjJob" wait_for 150 phase_is fails Failed
kill "$(cat "$work/fails.watch")" 2>/dev/null
expect_ok "the message names the task, the pod and the exit code" bash -c \
  "[[ \$('$AJ_KUBECTL' -n '$ns' get ajjob fails -o jsonpath='{.status.message}') == 'Volcano Job fails is Failed after 2 restarts: task worker, pod fails-worker-0: exit code 7'* ]]"
expect_ok "...which the pod watch recorded before Volcano deleted the pod" \
  grep -qF '"msg":"pod failed","ajjob":"'"$ns"'/fails","failure":"task worker, pod fails-worker-0: exit code 7' "$work/main.log"
expect_eq "status.retryCount is Volcano's" "2" jpath fails '{.status.retryCount}'
expect_eq "...no tasks: Volcano deleted every pod of the failed job" "" jpath fails '{.status.tasks}{.status.tasksSummary}'
expect_ok "the phase never went back (Volcano: Restarting, Pending, Running again)" never_back "$work/fails.phases"
expect_ok "...it was Running with the Restarting condition" grep -q '^Running [12] True' "$work/fails.phases"
expect_ok "one Warning Event tells the failure" bash -c \
  "[[ \$('$AJ_KUBECTL' -n '$ns' get events.events.k8s.io -o jsonpath='{range .items[?(@.reason==\"VolcanoJobFailed\")]}{.type}{\"\\n\"}{end}') == Warning ]]"
expect_ok "...and Events tell the restarts" bash -c \
  "'$AJ_KUBECTL' -n '$ns' get events.events.k8s.io -o jsonpath='{.items[*].reason}' | grep -q VolcanoJobRestarting"

# --- a job that cannot fit waits with the scheduler's reason ---
submit_ajjob huge volcano 40
expect_ok "too big: Submitted with the Unschedulable condition" wait_for 60 cond_is huge Unschedulable True
expect_eq "...and still Submitted" "Submitted" phase huge
reason_shown() { jpath huge '{.status.message}' | tee /dev/stderr | grep -qE '^Volcano Job huge is Pending: .*(overused|unschedulable|insufficient)'; }
expect_ok "the message carries the scheduler's reason" wait_for 30 reason_shown
expect_ok "a Warning Event Unschedulable says why" bash -c \
  "'$AJ_KUBECTL' -n '$ns' get events.events.k8s.io -o jsonpath='{range .items[*]}{.type}/{.reason} {end}' | grep -q Warning/Unschedulable"
# aj's own fact follows Volcano's words, with the numbers read here from the nodes: every GPU of
# the cluster (the kwok GPU nodes, all schedulable) against the 40 x 8 asked; the real nodes'
# taint, which the job does not tolerate, leaves them out ("it may use")
gpus=$(k get nodes -o jsonpath='{range .items[*]}{.status.allocatable.nvidia\.com/gpu}{"\n"}{end}' | awk '{ s += $1 } END { print s + 0 }')
real=$(k get nodes -l aj.dev/node=real -o name | grep -c . || true)
fact="; aj: can never fit: asks 40 pods × 8 nvidia.com/gpu = 320; the schedulable nodes$( ((real)) && echo " it may use") hold $gpus"
fact_shown() { [[ $(jpath huge '{.status.message}') == "Volcano Job huge is Pending: "*"$fact" ]]; }
expect_ok "...followed by aj's fact: 320 GPUs asked, the cluster's $gpus held" wait_for 30 fact_shown
jpath huge '{.status.message}' >&2; echo >&2
expect_ok "...on the Unschedulable condition too" bash -c \
  "[[ \$('$AJ_KUBECTL' -n '$ns' get ajjob huge -o jsonpath='{.status.conditions[?(@.type==\"Unschedulable\")].message}') == *'$fact' ]]"
expect_ok "...and in a Warning Event's note" bash -c \
  "'$AJ_KUBECTL' -n '$ns' get events.events.k8s.io -o jsonpath='{range .items[?(@.reason==\"Unschedulable\")]}{.note}{\"\\n\"}{end}' | grep -qF -- '$fact'"

# --- a queue that does not exist: Volcano's admission says no, the AjJob fails, no retry ---
submit_ajjob noqueue volcano-cpu 1 '{"target": {"queue": "research"}}'
expect_ok "rejected by Volcano's webhook: Failed" wait_for 30 phase_is noqueue Failed
expect_ok "...with Volcano's message" bash -c \
  "[[ \$('$AJ_KUBECTL' -n '$ns' get ajjob noqueue -o jsonpath='{.status.message}') == *'unable to find job queue: queue.scheduling.volcano.sh \"research\" not found'* ]]"
expect_eq "...reason VolcanoJobRejected" "VolcanoJobRejected" jpath noqueue '{.status.conditions[?(@.type=="Failed")].reason}'
expect_ok "...in a Warning Event" bash -c \
  "'$AJ_KUBECTL' -n '$ns' get events.events.k8s.io -o jsonpath='{range .items[*]}{.type}/{.reason} {end}' | grep -q Warning/VolcanoJobRejected"
sleep 3
expect_ok "...and not retried" bash -c "! grep -q 'reconcile failed; will retry.*noqueue' '$work/main.log'"

# --- cancel: Cancelling while the pods go, Cancelled only once they are gone ---
submit_ajjob stop volcano-cpu 2 "$hold"
expect_ok "a held job runs" wait_for 60 phase_is stop Running
all_running() { tasks_are stop "master 1 0 1 0 0;worker 1 0 1 0 0;"; }
expect_ok "...status.tasks: master and worker, their pods running (Volcano's taskStatusCount)" wait_for 30 all_running
expect_eq "...the Tasks column of kubectl get ajjob" "2/2 running" tasks_column stop
record_phases stop
k -n "$ns" annotate ajjob stop aj.dev/cancel=true >/dev/null
expect_ok "cancelled" wait_for 90 phase_is stop Cancelled
left=$(pods_of stop '{.items[*].metadata.name}')
kill "$(cat "$work/stop.watch")" 2>/dev/null
expect_eq "...with no pod of it left at that moment" "" echo "$left"
expect_ok "...nor its Volcano Job" bash -c "! '$AJ_KUBECTL' -n '$ns' get jobs.batch.volcano.sh stop"
expect_ok "...having been Cancelling before" grep -q '^Cancelling' "$work/stop.phases"
expect_ok "...never back" never_back "$work/stop.phases"
expect_eq "...its tasks left the status with the Volcano Job" "" jpath stop '{.status.tasks}{.status.tasksSummary}'
expect_eq "the cancel is told once" "1" bash -c \
  "'$AJ_KUBECTL' -n '$ns' get events.events.k8s.io -o jsonpath='{range .items[?(@.reason==\"Cancelled\")]}{.metadata.name}{\"\\n\"}{end}' | grep -c ."

# --- abort and resume with Volcano's Commands: parked, never cancelled, then running again ---
submit_ajjob park volcano-cpu 1 "$hold"
expect_ok "a held job runs" wait_for 60 phase_is park Running
command() { # command JOB ACTION: what vcctl job suspend/resume creates
  local uid
  uid=$(k -n "$ns" get jobs.batch.volcano.sh "$1" -o jsonpath='{.metadata.uid}')
  k create -f - >/dev/null <<YAML
apiVersion: bus.volcano.sh/v1alpha1
kind: Command
metadata:
  generateName: $1-$(tr 'A-Z' 'a-z' <<<"$2")-
  namespace: $ns
  ownerReferences: [{apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: $1, uid: $uid, controller: true}]
action: $2
target: {apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: $1, uid: $uid, controller: true}
YAML
}
command park AbortJob
expect_ok "AbortJob: Suspended" wait_for 60 cond_is park Suspended True
expect_eq "...the phase is kept" "Running" phase park
no_pods_running() { [[ -z $(pods_of park '{.items[?(@.status.phase=="Running")].metadata.name}') ]]; }
expect_ok "...and its pods stop" wait_for 60 no_pods_running
command park ResumeJob
expect_ok "ResumeJob: no longer Suspended" wait_for 60 cond_is park Suspended False
running_again() { [[ $(pods_of park '{.items[*].status.phase}') == Running ]] && phase_is park Running; }
expect_ok "...Running again with its pod" wait_for 60 running_again
expect_ok "...the resume counts as a restart" bash -c "(( \$('$AJ_KUBECTL' -n '$ns' get ajjob park -o jsonpath='{.status.retryCount}') >= 1 ))"
expect_ok "Events say aborted and resumed" bash -c \
  "r=\$('$AJ_KUBECTL' -n '$ns' get events.events.k8s.io -o jsonpath='{.items[*].reason}'); [[ \$r == *VolcanoJobAborted* && \$r == *VolcanoJobResumed* ]]"

# --- deleting the AjJob: the garbage collector removes its Volcano Job, PodGroup and pods ---
k -n "$ns" delete ajjob park --wait=false >/dev/null
gone() { ! k -n "$ns" get jobs.batch.volcano.sh park >/dev/null 2>&1 &&
         [[ -z $(pods_of park '{.items[*].metadata.name}') ]] &&
         ! k -n "$ns" get podgroups.scheduling.volcano.sh -o name | grep -q '/park-'; }
expect_ok "deleting the AjJob removes its Volcano Job, PodGroup and pods" wait_for 90 gone

stop_controllers
expect_ok "no token in the log" bash -c "! grep -qF -- '$token' '$work'/*.log"
finish
