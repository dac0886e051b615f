#!/usr/bin/env bash
# Make one local cluster a MultiKueue manager of another (started with start.sh --worker): Kueue on
# the manager then sends the Jobs of ClusterQueue QUEUE to the worker, whose own Kueue admits them
# and whose Job controller and kwok nodes run them; the manager's Job only mirrors the worker's
# status. Both Kueues run as cluster-up.sh starts them: MultiKueue and its batch/Job adapter (the
# Job's spec.managedBy) are on by default in Kueue v0.17, so neither needs another flag.
#
# Usage: tests/controlplane/cluster/multikueue.sh MANAGER-ENV WORKER-ENV [QUEUE] [WORKER-NAME]
#   QUEUE (default team-mk): the ClusterQueue made on both, with the quotas of team-a (kueue.sh),
#   and its LocalQueue in namespace training on both. A Job's namespace and LocalQueue must exist
#   on the worker too: MultiKueue copies the Job and its Workload, nothing else.
#   WORKER-NAME (default worker1): the MultiKueueCluster.
# On the worker: ServiceAccount multikueue in kueue-system with ClusterRole multikueue-worker, only
# what MultiKueue does there for batch/Jobs (Jobs and Workloads: create, read, watch, update,
# delete; their status). On the manager, in Kueue's namespace kueue-system: Secret
# WORKER-NAME-kubeconfig, a kubeconfig for the worker with its CA and a token of that account
# (48 h; run the script again to renew) embedded: Kueue refuses file paths, token files and exec
# plugins; MultiKueueCluster WORKER-NAME, MultiKueueConfig QUEUE, AdmissionCheck QUEUE with controllerName
# kueue.x-k8s.io/multikueue, and ClusterQueue QUEUE naming it. Waits until the MultiKueueCluster
# is connected and both ClusterQueues are Active; otherwise prints their conditions and exits 1.
# Running it again renews the token and changes nothing else.
set -euo pipefail
manager_env=${1:?usage: multikueue.sh MANAGER-ENV WORKER-ENV [QUEUE] [WORKER-NAME]}
worker_env=${2:?usage: multikueue.sh MANAGER-ENV WORKER-ENV [QUEUE] [WORKER-NAME]}
queue=${3:-team-mk}
name=${4:-worker1}
timeout_s=${AJ_CP_READY_TIMEOUT:-60}
die() { echo "multikueue.sh: $*" >&2; exit 1; }
for f in "$manager_env" "$worker_env"; do
  [[ -f $f ]] || die "no env file $f (start the clusters with start.sh --cluster and start.sh --worker)"
done
# shellcheck disable=SC1090
worker_kc=$(source "$worker_env" && echo "$KUBECONFIG")
# shellcheck disable=SC1090
[[ $(source "$worker_env" && echo "${AJ_CP_WORKER:-0}") == 1 ]] ||
  die "$worker_env is not a worker cluster (start it with start.sh --worker)"
# shellcheck disable=SC1090
source "$manager_env"
manager_kc=$KUBECONFIG
km() { "$AJ_KUBECTL" --kubeconfig "$manager_kc" --request-timeout 30s "$@"; }
kw() { "$AJ_KUBECTL" --kubeconfig "$worker_kc" --request-timeout 30s "$@"; }

# ClusterQueue QUEUE with team-a's resource groups, and with ADMISSION-CHECK when one is given.
queue_yaml() { # kubectl-function [admission-check]
  "$1" get clusterqueue team-a -o json | python3 -c '
import json, sys
cq, queue, check = json.load(sys.stdin), sys.argv[1], sys.argv[2]
spec = {"namespaceSelector": {}, "resourceGroups": cq["spec"]["resourceGroups"]}
if check:
    spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": check}]}
print(json.dumps({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
                  "metadata": {"name": queue}, "spec": spec}))
print(json.dumps({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                  "metadata": {"name": queue, "namespace": "training"},
                  "spec": {"clusterQueue": queue}}))' "$queue" "${2:-}"
}

# --- the worker: the same queue with quota, no admission check ---
queue_yaml kw | kw apply -f - >/dev/null || die "creating ClusterQueue $queue on the worker failed"

# --- the worker: the account MultiKueue uses there, allowed what it does and no more ---
kw apply -f - >/dev/null <<YAML || die "creating the multikueue ServiceAccount on the worker failed"
apiVersion: v1
kind: ServiceAccount
metadata: {name: multikueue, namespace: kueue-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: multikueue-worker}
rules:
- apiGroups: [batch]
  resources: [jobs]
  verbs: [create, delete, get, list, watch, update, patch]
- apiGroups: [batch]
  resources: [jobs/status]
  verbs: [get]
- apiGroups: [kueue.x-k8s.io]
  resources: [workloads]
  verbs: [create, delete, get, list, watch, update, patch]
- apiGroups: [kueue.x-k8s.io]
  resources: [workloads/status]
  verbs: [get, update, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: multikueue-worker}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: multikueue-worker}
subjects: [{kind: ServiceAccount, name: multikueue, namespace: kueue-system}]
YAML
token=$(kw -n kueue-system create token multikueue --duration 48h) || die "no token for the worker's multikueue account"
kc=$(mktemp)
trap 'rm -f "$kc"' EXIT
server=$(kw config view --minify -o jsonpath='{.clusters[0].cluster.server}')
ca=$(kw config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
cat >"$kc" <<KC
apiVersion: v1
kind: Config
clusters: [{name: $name, cluster: {server: "$server", certificate-authority-data: $ca}}]
users: [{name: multikueue, user: {token: $token}}]
contexts: [{name: $name, context: {cluster: $name, user: multikueue}}]
current-context: $name
KC

# --- the manager: the worker's credentials, the cluster, the config, the check, the queue ---
km -n kueue-system create secret generic "$name-kubeconfig" --from-file=kubeconfig="$kc" \
  --dry-run=client -o yaml | km apply -f - >/dev/null || die "storing the worker's kubeconfig failed"
km apply -f - >/dev/null <<YAML || die "creating the MultiKueue objects on the manager failed"
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata: {name: $name}
spec:
  clusterSource:
    kubeConfig: {locationType: Secret, location: $name-kubeconfig}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueConfig
metadata: {name: $queue}
spec: {clusters: [$name]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: $queue}
spec:
  controllerName: kueue.x-k8s.io/multikueue
  parameters: {apiGroup: kueue.x-k8s.io, kind: MultiKueueConfig, name: $queue}
YAML
queue_yaml km "$queue" | km apply -f - >/dev/null || die "creating ClusterQueue $queue on the manager failed"

# Active: the cluster connected, the check Active, both ClusterQueues Active.
active() { # kubectl-function kind name
  [[ $("$1" get "$2" "$3" -o jsonpath='{.status.conditions[?(@.type=="Active")].status}' 2>/dev/null) == True ]]
}
t_end=$(($(date +%s) + timeout_s))
for check in "km multikueueclusters.kueue.x-k8s.io $name" "km admissionchecks.kueue.x-k8s.io $queue" \
             "km clusterqueues.kueue.x-k8s.io $queue" "kw clusterqueues.kueue.x-k8s.io $queue"; do
  # shellcheck disable=SC2086
  until active $check; do
    if (($(date +%s) >= t_end)); then
      set -- $check
      "$1" get "$2" "$3" -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}' >&2
      die "$2 $3 on the $([[ $1 == km ]] && echo manager || echo worker) is not Active after ${timeout_s}s"
    fi
    sleep 0.5
  done
done
echo "multikueue.sh: ClusterQueue $queue on the manager dispatches to worker $name ($server)" >&2
