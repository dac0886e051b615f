#!/usr/bin/env bash
# The local cluster itself (fixture "cluster"): every component healthy on 127.0.0.1, kwok's
# nodes Ready with their shapes, Volcano's webhook admitting and rejecting, its controller and
# scheduler running a job to Completed, Kueue's queues and Job webhook, the kwok stages that tests
# choose per pod (fail with an exit code, stay running), kube-scheduler placing a plain pod, and kube-controller-manager's
# garbage collector removing a deleted job's pods. Hand-written Volcano Jobs: aj is not involved.
source "$(dirname "$0")/lib.sh"
ns=$(new_namespace cluster)

# --- components ---
# PID listens, and only on 127.0.0.1
listens_local() {
  local a
  a=$(ss -ltnpH | grep "pid=$1," | awk '{print $4}')
  [[ -n $a ]] && ! grep -qv '^127\.0\.0\.1:' <<<"$a"
}
while read -r name pid url _; do
  expect_ok "$name runs (pid $pid)" kill -0 "$pid"
  expect_ok "$name is healthy at $url" curl -ksf -o /dev/null --max-time 5 "$url"
  expect_ok "$name listens on 127.0.0.1 only" listens_local "$pid"
done <"$AJ_CP_DIR/components"
# (the real nodes' own: test-real-node.sh)
expect_eq "the seven components beside etcd and kube-apiserver are recorded, then the real nodes'" \
  "kube-controller-manager kube-scheduler kwok vc-webhook-manager vc-controller-manager vc-scheduler kueue" \
  bash -c "awk '{print \$1}' '$AJ_CP_DIR/components' | grep -v '^cluster-dns\$\|^api-relay\$\|@real-' | tr '\n' ' ' | sed 's/ \$//'"

# --- nodes ---
ready() { k get nodes -l type=kwok -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c True; }
expect_eq "11 kwok nodes are Ready" "11" ready
expect_eq "8 of them have 8 GPUs" "8" \
  bash -c "'$AJ_KUBECTL' get nodes -o jsonpath='{range .items[*]}{.status.allocatable.nvidia\.com/gpu}{\"\n\"}{end}' | grep -cx 8"
expect_eq "two GPU products, four nodes each" "4 A100-SXM4-80GB 4 H100-80GB-HBM3" \
  bash -c "'$AJ_KUBECTL' get nodes -L nvidia.com/gpu.product --no-headers | awk 'NF==6{print \$6}' | sort | uniq -c | xargs"
expect_eq "the CPU nodes are untainted" "3" \
  bash -c "'$AJ_KUBECTL' get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.spec.taints}{\"\n\"}{end}' | grep -c '^kwok-cpu-[0-9]* \$'"
expect_eq "queue default is Open" "Open" k get queue default -o jsonpath='{.status.state}'

# vcjob NAME [LABELS] [QUEUE]: a master (1) + worker (2) CPU job like aj's shape; every pod is
# labelled role: <task> as aj's are, plus LABELS ("key: value, ...")
vcjob() {
  cat <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1, namespace: $ns}
spec:
  schedulerName: volcano
  queue: ${3:-default}
  minAvailable: 3
  plugins: {env: [], svc: []}
  tasks:
$(for t in master worker; do
  r=1; [[ $t == worker ]] && r=2
  cat <<TASK
  - name: $t
    replicas: $r
    template:
      metadata:
        labels: {role: $t${2:+, $2}}
      spec:
        restartPolicy: Never
        containers:
        - name: main
          image: busybox
          command: [sh, -c, "true"]
          resources: {requests: {cpu: "1"}, limits: {cpu: "1"}}
TASK
done)
JOB
}
job_phase() { k -n "$ns" get jobs.batch.volcano.sh "$1" -o jsonpath='{.status.state.phase}'; }
job_phase_is() { [[ $(job_phase "$1") == "$2" ]]; }
pods_of() { k -n "$ns" get pods -l "volcano.sh/job-name=$1" -o jsonpath="$2"; }

# --- admission ---
expect_fail "the webhook rejects an unknown queue" "unable to find job queue" \
  bash -c "'$AJ_KUBECTL' create -f - <<<\"\$1\"" _ "$(vcjob badq '' research)"
vcjob ok | k create -f - >/dev/null
# --- Kueue: its queues, and its Job webhook suspending a queued Job created running ---
expect_eq "Kueue's ClusterQueue team-a is Active" "True" \
  k get clusterqueue team-a -o jsonpath='{.status.conditions[?(@.type=="Active")].status}'
expect_eq "...behind the LocalQueue team-a in training" "team-a" \
  k -n training get localqueue team-a -o jsonpath='{.spec.clusterQueue}'
expect_eq "Kueue's webhook suspends a Job that names a queue" "true" bash -c "'$AJ_KUBECTL' -n '$ns' create -o jsonpath='{.spec.suspend}' -f - <<'JOB'
apiVersion: batch/v1
kind: Job
metadata: {name: queued, labels: {kueue.x-k8s.io/queue-name: team-a}}
spec:
  suspend: false
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
JOB"
expect_eq "the mutating webhook sets each task's maxRetry" "3 3" \
  k -n "$ns" get jobs.batch.volcano.sh ok -o jsonpath='{.spec.tasks[*].maxRetry}'

# --- a job runs to Completed on kwok's nodes ---
expect_ok "the job reaches Completed" wait_for 60 job_phase_is ok Completed
expect_eq "its three pods succeeded" "Succeeded Succeeded Succeeded" pods_of ok '{.items[*].status.phase}'
expect_ok "...on kwok's CPU nodes" bash -c "[[ \$('$AJ_KUBECTL' -n '$ns' get pods -l volcano.sh/job-name=ok -o jsonpath='{.items[*].spec.nodeName}') =~ ^(kwok-cpu-[0-9] ?)+$ ]]"
expect_ok "Volcano injected VK_TASK_INDEX" bash -c "'$AJ_KUBECTL' -n '$ns' get pods -l volcano.sh/job-name=ok -o yaml | grep -q VK_TASK_INDEX"
expect_ok "...and made a PodGroup" k -n "$ns" get podgroups.scheduling.volcano.sh -o name

# --- kwok stages chosen by labels ---
vcjob failing '"aj.dev/kwok-fail-task": worker, "aj.dev/kwok-exit-code": "3"' | k create -f - >/dev/null
failed_code() { pods_of failing '{range .items[?(@.status.phase=="Failed")]}{.status.containerStatuses[0].state.terminated.exitCode}{"\n"}{end}' | grep -qx 3; }
expect_ok "a pod of the failing task fails with exit code 3" wait_for 60 failed_code

vcjob held '"aj.dev/kwok-hold": "true"' | k create -f - >/dev/null
running3() { [[ $(pods_of held '{.items[*].status.phase}') == "Running Running Running" ]]; }
expect_ok "held pods run" wait_for 60 running3
sleep 8
expect_ok "...and still run 8 s later" running3
expect_eq "...so the job is Running" "Running" job_phase held

# --- kube-scheduler places a pod that does not ask for Volcano ---
k -n "$ns" run plain --image=busybox --restart=Never --command -- sleep 1000 >/dev/null
plain_on_cpu() { [[ $(k -n "$ns" get pod plain -o jsonpath='{.status.phase} {.spec.nodeName}') =~ ^Running\ kwok-cpu- ]]; }
expect_ok "kube-scheduler puts a plain pod on a CPU node, kwok runs it" wait_for 60 plain_on_cpu

# --- garbage collection is kube-controller-manager's ---
k -n "$ns" delete jobs.batch.volcano.sh held --wait=false >/dev/null
no_pods() { [[ -z $(pods_of held '{.items[*].metadata.name}') ]]; }
expect_ok "deleting the job removes its pods (garbage collector, grace period)" wait_for 90 no_pods
no_pg() { ! k -n "$ns" get podgroups.scheduling.volcano.sh -o name | grep -q held; }
expect_ok "...and its PodGroup" wait_for 30 no_pg
finish
