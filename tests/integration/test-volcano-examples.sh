#!/usr/bin/env bash
# Every Volcano example template as an AjJob on the cluster fixture, run by the real Volcano on
# kwok's nodes: each ends Succeeded (every pod succeeded, none killed). Then the rank contract
# (docs/rank-contract.md) on the pods Volcano created, homogeneous and heterogeneous:
# MASTER_ADDR, WORLD_SIZE, AJ_NODES, NODE_RANK's offsets, Volcano's task index, host names and
# the headless Service.
source "$(dirname "$0")/lib.sh"
cluster_test examples
start_controller main --privileged-namespaces "$ns"

# --- every Volcano example succeeds (run one at a time: the GPU jobs each want most nodes) ---
mapfile -t examples < <("$AJ_BIN" template list | awk 'NR > 1 && $3 == "volcano" {print $1}')
expect_ok "there are Volcano examples (${#examples[@]})" test "${#examples[@]}" -ge 5
for t in "${examples[@]}"; do
  submit_ajjob "ex-$t" "$t" ""
  expect_ok "example $t: Succeeded" wait_for 60 phase_is "ex-$t" Succeeded
  expect_eq "...every pod of it succeeded" "" \
    pods_of "ex-$t" '{.items[?(@.status.phase!="Succeeded")].metadata.name}'
done

# --- the rank contract on Volcano's pods ---
hold='{"target": {"labels": {"aj.dev/kwok-hold": "true"}}}'
env_of() { # env_of POD VAR: the value aj or Volcano put into the pod's container
  k -n "$ns" get pod "$1" -o jsonpath="{.spec.containers[0].env[?(@.name==\"$2\")].value}"
}
# check_pods JOB WORLD NODES TASK:OFFSET...: every pod of JOB, against the contract
check_pods() {
  local job=$1 world=$2 nodes=$3 spec pod task idx off
  shift 3
  for spec in "$@"; do
    task=${spec%%:*} off=${spec#*:}
    for pod in $(pods_of "$job" "{.items[?(@.metadata.labels.volcano\\.sh/task-spec==\"$task\")].metadata.name}"); do
      idx=${pod##*-}
      expect_eq "$pod: MASTER_ADDR" "$job-master-0.$job" env_of "$pod" MASTER_ADDR
      expect_eq "$pod: WORLD_SIZE" "$world" env_of "$pod" WORLD_SIZE
      expect_eq "$pod: AJ_NODES" "$nodes" env_of "$pod" AJ_NODES
      expect_eq "$pod: Volcano's VK_TASK_INDEX" "$idx" env_of "$pod" VK_TASK_INDEX
      expect_eq "$pod: host name and subdomain" "$pod.$job" \
        k -n "$ns" get pod "$pod" -o jsonpath='{.spec.hostname}.{.spec.subdomain}'
      # the command as the kubelet hands it to bash: $$ is $
      expect_ok "$pod: NODE_RANK is $off + its index" bash -c \
        "'$AJ_KUBECTL' -n '$ns' get pod '$pod' -o jsonpath='{.spec.containers[0].command}' | sed 's/[$][$]/\$/g' | grep -qF 'NODE_RANK=\$(($off + \${VK_TASK_INDEX:-0}))'"
    done
  done
  expect_eq "$job: the headless Service selects its pods" "None $job" \
    k -n "$ns" get service "$job" -o jsonpath='{.spec.clusterIP} {.spec.selector.volcano\.sh/job-name}'
}
all_running() { [[ -n $(pods_of "$1" '{.items[*].metadata.name}') &&
                   -z $(pods_of "$1" '{.items[?(@.status.phase!="Running")].metadata.name}') ]]; }

submit_ajjob rank-h volcano 3 "$hold"
expect_ok "homogeneous: three pods run" wait_for 60 all_running rank-h
expect_eq "...one master, two workers" "1 2" bash -c \
  "for t in master worker; do '$AJ_KUBECTL' -n '$ns' get pods -l volcano.sh/job-name=rank-h,volcano.sh/task-spec=\$t -o name | wc -l; done | xargs"
procs=$(env_of rank-h-master-0 AJ_PROCESSES_PER_NODE)
check_pods rank-h "$((3 * procs))" 3 master:0 worker:1
k -n "$ns" delete ajjob rank-h --wait=false >/dev/null

submit_ajjob rank-x heterogeneous "" "$hold"
expect_ok "heterogeneous: seven pods run" wait_for 90 all_running rank-x
expect_eq "...master, two A100 and four H100 workers" "1 2 4" bash -c \
  "for t in master a100-worker h100-worker; do '$AJ_KUBECTL' -n '$ns' get pods -l volcano.sh/job-name=rank-x,volcano.sh/task-spec=\$t -o name | wc -l; done | xargs"
expect_ok "...each worker on a node of its GPU product" bash -c "
  for p in \$('$AJ_KUBECTL' -n '$ns' get pods -l volcano.sh/job-name=rank-x,volcano.sh/task-spec=h100-worker -o jsonpath='{.items[*].spec.nodeName}'); do
    [[ \$('$AJ_KUBECTL' get node \$p -o jsonpath='{.metadata.labels.nvidia\.com/gpu\.product}') == H100-80GB-HBM3 ]] || exit 1; done"
check_pods rank-x 49 7 master:0 a100-worker:1 h100-worker:3
k -n "$ns" delete ajjob rank-x --wait=false >/dev/null

stop_controllers
finish
