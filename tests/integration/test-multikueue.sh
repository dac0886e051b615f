#!/usr/bin/env bash
# MultiKueue with two local control planes: the manager (AJ_CP_ENV, a cluster of its own with
# aj-controller under deploy/rbac.yaml's identity) and a worker (AJ_MK_WORKER_ENV, start.sh
# --worker: kube-controller-manager, kube-scheduler, kwok nodes and Kueue). cluster/multikueue.sh
# makes ClusterQueue team-mk on the manager dispatch to the worker. An AjJob of a kube template whose
# queue is team-mk: the controller creates the Job on the manager, Kueue's webhook marks it managed by
# MultiKueue (so the manager's Job controller makes no pod), Kueue reserves quota there, MultiKueue
# copies the Workload and the Job to the worker, whose Kueue admits it and whose kwok nodes run its
# pods to completion; the worker's Job status is copied back to the manager's Job, which aj mirrors:
# the AjJob goes Submitted -> Running -> Succeeded. A failing rank fails it with the Job's reason;
# a held job is cancelled through aj and its copy on the worker goes too. Prints the figures of docs/placement.md ("MultiKueue") as "figure:" lines.
source "$(dirname "$0")/lib.sh"
: "${AJ_MK_WORKER_ENV:?AJ_MK_WORKER_ENV must name the env file of the worker cluster (start.sh --worker)}"
[[ -f $AJ_MK_WORKER_ENV ]] || { echo "FAIL - worker env file $AJ_MK_WORKER_ENV missing (did the mk-worker fixture start?)"; exit 1; }
cluster_test mk
worker_kc=$(source "$AJ_MK_WORKER_ENV" && echo "$KUBECONFIG")
kw() { KUBECONFIG=$worker_kc k "$@"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

procs_of() { # the /proc directories of the processes an env file and its components list name
  local p
  for p in $(source "$1" && { echo "$AJ_CP_APISERVER_PID $AJ_CP_ETCD_PID"; awk '{print $2}' "$AJ_CP_DIR/components"; }); do
    echo "/proc/$p"
  done
}
rss_of() { # their resident memory, MiB
  # shellcheck disable=SC2046
  awk '/^VmRSS/ { s += $2 } END { printf "%.0f", s / 1024 }' $(procs_of "$1" | sed 's|$|/status|') 2>/dev/null
}
cpu_of() { # the CPU time they used so far, seconds
  local f
  for f in $(procs_of "$1"); do cat "$f/stat" 2>/dev/null; echo; done |
    awk -v hz="$(getconf CLK_TCK)" 'NF > 22 { sub(/^.*\) /, ""); cpu += ($12 + $13) / hz } END { printf "%.1f", cpu }'
}
t_start=$(now)
w_cpu0=$(cpu_of "$AJ_MK_WORKER_ENV")
m_cpu0=$(cpu_of "$AJ_CP_ENV")

# --- the two clusters wired: the worker's credentials, the MultiKueue objects, team-mk on both ---
expect_ok "cluster/multikueue.sh makes ClusterQueue team-mk dispatch to the worker" \
  "$repo_root/tests/controlplane/cluster/multikueue.sh" "$AJ_CP_ENV" "$AJ_MK_WORKER_ENV"
expect_eq "...MultiKueueCluster worker1 is connected" "True Active" \
  k get multikueueclusters.kueue.x-k8s.io worker1 -o jsonpath='{.status.conditions[?(@.type=="Active")].status} {.status.conditions[?(@.type=="Active")].reason}'
expect_eq "...AdmissionCheck team-mk is MultiKueue's, Active" "kueue.x-k8s.io/multikueue True" \
  k get admissionchecks.kueue.x-k8s.io team-mk -o jsonpath='{.spec.controllerName} {.status.conditions[?(@.type=="Active")].status}'
expect_eq "...the manager's ClusterQueue team-mk names it" "team-mk" \
  k get clusterqueues.kueue.x-k8s.io team-mk -o jsonpath='{.spec.admissionChecksStrategy.admissionChecks[*].name}'
expect_eq "...the worker's has none and its own quota (64 GPUs)" " 32 32" \
  kw get clusterqueues.kueue.x-k8s.io team-mk -o jsonpath='{.spec.admissionChecksStrategy} {.spec.resourceGroups[0].flavors[1].resources[2].nominalQuota} {.spec.resourceGroups[0].flavors[2].resources[2].nominalQuota}'
expect_eq "the worker runs no Volcano and knows no AjJob" "kube-controller-manager kube-scheduler kwok kueue NotFound" bash -c \
  "echo \$(awk '{print \$1}' '$(source "$AJ_MK_WORKER_ENV" && echo "$AJ_CP_DIR")/components') \$('$AJ_KUBECTL' --kubeconfig '$worker_kc' get crd ajjobs.aj.dev 2>&1 | grep -o NotFound)"
may() { # what the worker's multikueue account may do, one yes or no per "VERB RESOURCE"
  local a out=()
  for a in "$@"; do
    # shellcheck disable=SC2086
    out+=("$(kw auth can-i $a --as system:serviceaccount:kueue-system:multikueue 2>/dev/null)")
  done
  echo "${out[*]}"
}
expect_eq "...through a worker account that may create Jobs and Workloads and write their status, nothing else" \
  "yes yes yes no no no" may 'create jobs.batch' 'create workloads.kueue.x-k8s.io' \
  'patch workloads.kueue.x-k8s.io/status' 'get secrets' 'create pods' 'delete nodes'
expect_eq "...whose token, not the admin certificate, is what the manager holds" "token" bash -c \
  "'$AJ_KUBECTL' -n kueue-system get secret worker1-kubeconfig -o jsonpath='{.data.kubeconfig}' | base64 -d | grep -oE 'client-certificate-data|token:' | tr -d :"
expect_ok "running it again (a new token) keeps it connected" \
  "$repo_root/tests/controlplane/cluster/multikueue.sh" "$AJ_CP_ENV" "$AJ_MK_WORKER_ENV"
expect_fail "a cluster that is not a worker is refused" "is not a worker cluster" \
  "$repo_root/tests/controlplane/cluster/multikueue.sh" "$AJ_CP_ENV" "$AJ_CP_ENV"

# --- what MultiKueue needs on the worker: the job's namespace, its LocalQueue, what its pods mount ---
local_queue() { "$1" apply -f - <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: team-mk, namespace: $ns}
spec: {clusterQueue: team-mk}
YAML
}
expect_ok "LocalQueue team-mk in $ns on the manager" local_queue k
expect_ok "namespace $ns on the worker" kw create namespace "$ns"
expect_ok "...with LocalQueue team-mk" local_queue kw
# (the PVC's PV on the worker, a hostPath nobody reads: kwok runs no container)
KUBECONFIG=$worker_kc expect_ok "...and the examples' shared volume (the pods mount PVC training-shared)" shared_volume

# A template home: the examples, and template/kube in queue team-mk.
cp -r "$repo_root/examples/.azure_jobs" "$work/home"
export AJ_HOME=$work/home
printf 'base: kube\nconfig:\n  target:\n    queue: team-mk\n' >"$work/home/template/kube-mk.yaml"

# What happens on the worker, as it happens (its copy is deleted once the job is finished).
# (kubectl itself: k's --request-timeout would end a watch after 30 s)
watch_worker() { # NAME what jsonpath
  "$AJ_KUBECTL" --kubeconfig "$worker_kc" -n "$ns" get "$2" --watch -o jsonpath="$3" >"$work/$1.seen" 2>/dev/null &
  echo $! >"$work/$1.watch"
}
watch_worker worker-jobs jobs.batch '{.metadata.name} {.metadata.labels.kueue\.x-k8s\.io/multikueue-origin} {.spec.managedBy} {.spec.suspend} {.status.conditions[?(@.status=="True")].type}{"\n"}'
watch_worker worker-wls workloads.kueue.x-k8s.io '{.metadata.name} {.status.admission.clusterQueue} {.status.conditions[?(@.type=="Admitted")].status}{"\n"}'
watch_worker worker-pods pods '{.metadata.labels.batch\.kubernetes\.io/job-name} {.metadata.name} {.spec.nodeName} {.status.phase}{"\n"}'
seen() { grep -q "$2" "$work/$1.seen"; }

jobf() { k -n "$ns" get jobs.batch "$1" -o jsonpath="$2"; }
wlf() { # wlf KUBECTL JOB JSONPATH: the Workload of the Job (on the worker the prebuilt one of the same name)
  local name
  name=$(jobf "$2" '{.metadata.labels.kueue\.x-k8s\.io/prebuilt-workload-name}')
  [[ -n $name ]] || name=$("$1" -n "$ns" get workloads.kueue.x-k8s.io -l "kueue.x-k8s.io/job-uid=$(jobf "$2" '{.metadata.uid}')" -o jsonpath='{.items[0].metadata.name}')
  "$1" -n "$ns" get workloads.kueue.x-k8s.io "$name" -o jsonpath="$3"
}
manager_wl() { wlf k "$1" "$2"; }

# --- an AjJob in queue team-mk runs on the worker ---
start_controller main
t0=$(now)
submit_ajjob mk kube-mk 2
# every status the AjJob goes through, with its message
"$AJ_KUBECTL" -n "$ns" get ajjob mk --watch -o jsonpath='{.status.phase} {.status.message}{"\n"}' >"$work/mk.phases" 2>/dev/null &
echo $! >"$work/mk.watch"
managed() { [[ $(jobf mk '{.spec.managedBy}') == kueue.x-k8s.io/multikueue ]]; }
expect_ok "the controller creates Job mk on the manager; Kueue's webhook makes it MultiKueue's (spec.managedBy)" \
  wait_for 60 managed
on_worker() { kw -n "$ns" get jobs.batch mk >/dev/null 2>&1; }
expect_ok "MultiKueue creates its copy on the worker" wait_for 90 on_worker
t_dispatch=$(since "$t0")
echo "figure: AjJob created -> its Job on the worker in $t_dispatch s (polled every 0.2 s; load $(cut -d' ' -f1-3 /proc/loadavg))"
expect_eq "...labelled with MultiKueue's origin and the manager's Workload, managed by the worker's Job controller" \
  "multikueue $(manager_wl mk '{.metadata.name}') " \
  kw -n "$ns" get jobs.batch mk -o jsonpath='{.metadata.labels.kueue\.x-k8s\.io/multikueue-origin} {.metadata.labels.kueue\.x-k8s\.io/prebuilt-workload-name} {.spec.managedBy}'
mgr_admitted() {
  [[ $(manager_wl mk '{.status.conditions[?(@.type=="Admitted")].status} {.status.admissionChecks[?(@.name=="team-mk")].state}') == "True Ready" ]]
}
expect_ok "the manager's Workload is Admitted, its admission check team-mk Ready" wait_for 60 mgr_admitted
expect_eq "...in ClusterQueue team-mk, placed on worker1" "team-mk worker1" \
  manager_wl mk '{.status.admission.clusterQueue} {.status.clusterName}'
expect_eq "...the check says where" "The workload got reservation on \"worker1\"" \
  manager_wl mk '{.status.admissionChecks[?(@.name=="team-mk")].message}'
wl_admitted() { seen worker-wls "^$(manager_wl mk '{.metadata.name}') team-mk True$"; }
expect_ok "the worker's Kueue admitted the copy of the Workload (same name) in its own team-mk" wait_for 30 wl_admitted
pods_done() { [[ $(grep -c '^mk .* kwok-a100-[01] Succeeded$' "$work/worker-pods.seen") -ge 2 ]]; }
expect_ok "the worker's two pods ran to Succeeded on its kwok GPU nodes" wait_for 90 pods_done
worker_complete() { seen worker-jobs '^mk multikueue  false .*Complete'; }
expect_ok "...and its Job is Complete" wait_for 60 worker_complete
expect_ok "AjJob mk: Succeeded" wait_for 90 phase_is mk Succeeded
echo "figure: AjJob created -> Succeeded in $(since "$t0") s"
expect_eq "...by the Job's own words, copied back from the worker" "Job mk is Complete: all 2 indexes succeeded" \
  jpath mk '{.status.message}'
expect_eq "...the manager's Job holds the worker's status (Complete, 2 succeeded)" "True 2 0,1" \
  jobf mk '{.status.conditions[?(@.type=="Complete")].status} {.status.succeeded} {.status.completedIndexes}'
expect_eq "...and no pod ever ran on the manager" "" \
  k -n "$ns" get pods -l batch.kubernetes.io/job-name=mk -o jsonpath='{.items[*].metadata.name}'
kill "$(cat "$work/mk.watch")" 2>/dev/null
echo "statuses of AjJob mk:"
awk '$1 != ""' "$work/mk.phases" | uniq | sed 's/^/  /'
expect_ok "...its phases never went back" never_back "$work/mk.phases"
expect_ok "...it was Running while the worker ran it (ready pods copied back)" grep -q '^Running' "$work/mk.phases"
mgr_finished() { [[ $(manager_wl mk '{.status.conditions[?(@.type=="Finished")].status}') == True ]]; }
expect_ok "the manager's Workload is Finished" wait_for 30 mgr_finished
gone_on_worker() { ! kw -n "$ns" get jobs.batch "$1" >/dev/null 2>&1; }
expect_ok "...and MultiKueue deletes the copy on the worker" wait_for 60 gone_on_worker mk
expect_eq "the headless Service stays on the manager: MultiKueue copies the Job alone" "service/mk" bash -c \
  "echo \$('$AJ_KUBECTL' -n '$ns' get service mk -o name) \$('$AJ_KUBECTL' --kubeconfig '$worker_kc' -n '$ns' get services -o name)"

# --- a failing rank on the worker: the Failed condition comes back with the Job's reason ---
submit_ajjob mkf kube-mk 2 '{"target": {"labels": {"aj.dev/kwok-fail-task": "worker-1", "aj.dev/kwok-exit-code": "3"}}}'
expect_ok "AjJob mkf (index 1 exits 3 on the worker): Failed" wait_for 120 phase_is mkf Failed
echo "message of AjJob mkf: $(jpath mkf '{.status.message}')"
expect_ok "...naming the Job's pod failure policy and the exit code" bash -c \
  "m=\$('$AJ_KUBECTL' -n '$ns' get ajjob mkf -o jsonpath='{.status.message}'); [[ \$m == *PodFailurePolicy* && \$m == *'exit code 3'* ]]"
expect_ok "...and the worker's copy is deleted" wait_for 60 gone_on_worker mkf

# --- cancel through aj: the manager's Job goes, and MultiKueue removes the worker's copy ---
submit_ajjob mkc kube-mk 2 '{"target": {"labels": {"aj.dev/kwok-hold": "true"}}}'
expect_ok "AjJob mkc (pods held): Running on the worker" wait_for 120 phase_is mkc Running
held() { [[ $(grep -c '^mkc .* kwok-a100-[01] Running$' "$work/worker-pods.seen") -ge 2 ]]; }
expect_ok "...its two pods run on the worker" wait_for 30 held
expect_ok "...status.tasks from the copied Job status: both running" wait_for 30 tasks_are mkc "worker 2 0 2 0 0;"
logs_say() { # logs_say NAME TEXT: aj logs NAME says TEXT
  local out
  out=$("$AJ_BIN" logs "$1" --namespace "$ns" 2>&1)
  echo "$out"
  grep -qF "$2" <<<"$out"
}
expect_ok "...aj logs finds none of its pods: they are on the worker" logs_say mkc "no pods of ajjob.aj.dev/mkc (phase Running)"
k -n "$ns" annotate ajjob mkc aj.dev/cancel=true >/dev/null
expect_ok "...cancelled: Cancelled" wait_for 90 phase_is mkc Cancelled
expect_ok "...the Job on the worker is gone" wait_for 60 gone_on_worker mkc
no_worker_pods() { [[ -z $(kw -n "$ns" get pods -l batch.kubernetes.io/job-name=mkc -o jsonpath='{.items[*].metadata.name}') ]]; }
expect_ok "...and so are its pods" wait_for 60 no_worker_pods

expect_ok "Kueue on the manager was never refused by the worker (its account is enough)" bash -c \
  "! grep -i forbidden '$(source "$AJ_CP_ENV" && echo "$AJ_CP_DIR")/kueue.log'"

# --- what the second control plane costs ---
echo "figure: worker RSS $(rss_of "$AJ_MK_WORKER_ENV") MiB (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, Kueue), manager $(rss_of "$AJ_CP_ENV") MiB; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "figure: CPU seconds used during the test's $(since "$t_start") s: worker $(awk -v a="$w_cpu0" -v b="$(cpu_of "$AJ_MK_WORKER_ENV")" 'BEGIN { print b - a }'), manager $(awk -v a="$m_cpu0" -v b="$(cpu_of "$AJ_CP_ENV")" 'BEGIN { print b - a }') (before it: $w_cpu0 and $m_cpu0 since they started)"
for f in "$work"/worker-*.watch; do kill "$(cat "$f")" 2>/dev/null; done
finish
