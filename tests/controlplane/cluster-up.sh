#!/usr/bin/env bash
# Turn a running control plane (start.sh) into a batch cluster: kube-controller-manager,
# kube-scheduler, kwok's simulated nodes, the real Volcano (admission webhook, controller,
# scheduler) and the real Kueue (cluster/kueue.sh), plus what the examples need (queues, shared
# volume, priority class).
#
# Usage: tests/controlplane/cluster-up.sh DIR [worker]    (DIR: the control plane's run directory)
#   worker: a MultiKueue worker (cluster/multikueue.sh): Kueue runs the Jobs a manager sends it, so
#   Volcano, its CRDs and aj's are left out (nothing there makes an AjJob or a Volcano Job).
# Environment: AJ_CLUSTER_NODES  node shapes and counts (default "a100=4 h100=4 cpu=3"): a100 and
#   h100 are 8-GPU nodes with RDMA, tainted nvidia.com/gpu=present:NoSchedule and labelled
#   nvidia.com/gpu.product; cpu nodes are untainted.
#   AJ_CLUSTER_REAL_NODE  how many real nodes real-0, real-1, ... beside kwok's (default 1, a worker 0; 0: none):
#   a kubelet with containerd and runc each, one pod network and the cluster DNS (node.sh), each
#   node labelled and tainted aj.dev/node=real and as big as this machine.
#
# Every component listens on 127.0.0.1 on a free port and is recorded in DIR/components
# ("name pid health-url log", in start order) so that stop.sh stops it and local-cluster.sh status
# reports it. On failure it names the component with its last log lines and exits non-zero; the
# caller stops what was started.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dir=${1:?usage: cluster-up.sh DIR [worker]}
worker=0
case ${2:-} in
  '') ;;
  worker) worker=1 ;;
  *) echo "cluster-up.sh: unknown role '$2' (worker or nothing)" >&2; exit 2 ;;
esac
# shellcheck disable=SC1091
source "$dir/env"
source "$cp_here/node.sh"
root=$(cd "$cp_here/../.." && pwd)
pki=$dir/pki
timeout_s=${AJ_CP_READY_TIMEOUT:-60}
k() { "$AJ_KUBECTL" --kubeconfig "$KUBECONFIG" "$@"; }
die() { echo "cluster-up.sh: $*" >&2; exit 1; }

parts=(volcano kwok kueue)
((worker)) && parts=(kwok kueue)
built=$("$cp_here/build-cluster.sh" "${parts[@]}") || die "building ${parts[*]} failed"
volcano=$(awk '$1 == "volcano" {print $2}' <<<"$built")
kwok=$(awk '$1 == "kwok" {print $2}' <<<"$built")
kueue=$(awk '$1 == "kueue" {print $2}' <<<"$built")
bin=$(dirname "$AJ_KUBECTL")
for b in kube-controller-manager kube-scheduler; do
  [[ -x $bin/$b ]] || die "$bin/$b is missing (rebuild the control plane: tests/controlplane/build.sh)"
done

# Ports below the kernel's ephemeral range, which outgoing connections (busy during tests) take
# from at any moment between our check and the component's bind.
eph_low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
((eph_low > 12000)) || eph_low=32768
free_port() {
  local p
  while :; do
    p=$((10000 + RANDOM % (eph_low - 10000)))
    port_free "$p" && [[ " ${taken:-} " != *" $p "* ]] && break
  done
  taken+=" $p"
  echo "$p"
}

# start NAME HEALTH-URL CMD...: spawn, record, wait for HEALTH-URL (https is not verified: the
# components serve self-signed certificates of their own).
start() {
  local name=$1 url=$2 log=$dir/$1.log pid t_end
  shift 2
  pid=$(spawn "$log" "$@")
  echo "$name $pid $url $log" >>"$dir/components"
  t_end=$(($(date +%s) + timeout_s))
  until curl -ksf -o /dev/null --max-time 2 "$url"; do
    kill -0 "$pid" 2>/dev/null || failed "$name" "exited during start-up"
    (($(date +%s) <= t_end)) || failed "$name" "did not become healthy at $url within ${timeout_s}s"
    sleep 0.2
  done
  printf 'cluster-up.sh: %-22s pid %-7s %s\n' "$name" "$pid" "$url" >&2
}
# failed NAME WHAT: name the component and what went wrong, with the last lines of its log; exit.
failed() {
  echo "cluster-up.sh: $1 $2; last lines of $dir/$1.log:" >&2
  tail -n 15 "$dir/$1.log" >&2
  exit 1
}

# A serving certificate for 127.0.0.1 from the control plane's CA (kwok and Volcano's webhook).
serving_cert() { # name
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$pki/$1.key" 2>/dev/null
  openssl req -new -key "$pki/$1.key" -subj "/CN=$1" -out "$pki/$1.csr" 2>/dev/null
  printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" "extendedKeyUsage=serverAuth" >"$pki/$1.ext"
  openssl x509 -req -in "$pki/$1.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 30 -extfile "$pki/$1.ext" -out "$pki/$1.crt" 2>/dev/null || die "openssl: no certificate for $1"
  chmod 600 "$pki/$1.key"
}

t0=$(date +%s)
: >"$dir/components"

# --- CRDs first (a worker has none): Volcano's and aj's ---
source "$cp_here/cluster/volcano.sh"
((worker)) || volcano_crds "$volcano"

# --- kube-controller-manager: garbage collection, namespaces, endpoints, volumes, node lifecycle, Jobs,
# Deployments (the Helm chart's controller on a real node),
# the kube-root-ca.crt ConfigMap of every namespace (ServiceAccount token volumes need it) ---
ctrls=garbage-collector,namespace,endpoints,endpointslice,persistentvolume-binder,serviceaccount
ctrls+=,pod-garbage-collector,ttl-after-finished,node-lifecycle,persistentvolumeclaim-protection
ctrls+=,persistentvolume-protection,job,root-ca-certificate-publisher,deployment,replicaset
p=$(free_port)
start kube-controller-manager "https://127.0.0.1:$p/healthz" "$bin/kube-controller-manager" \
  --kubeconfig "$KUBECONFIG" --authentication-kubeconfig "$KUBECONFIG" --authorization-kubeconfig "$KUBECONFIG" \
  --leader-elect=false --bind-address 127.0.0.1 --secure-port "$p" --cert-dir "$dir/kcm-certs" \
  --service-cluster-ip-range 10.0.0.0/24 --use-service-account-credentials=false --root-ca-file "$pki/ca.crt" \
  --controllers "$(sed 's/\([^,]*\)/\1-controller/g' <<<"$ctrls")"

# --- kube-scheduler: pods that do not ask for Volcano (a code helper pod) ---
p=$(free_port)
start kube-scheduler "https://127.0.0.1:$p/healthz" "$bin/kube-scheduler" \
  --kubeconfig "$KUBECONFIG" --authentication-kubeconfig "$KUBECONFIG" --authorization-kubeconfig "$KUBECONFIG" \
  --leader-elect=false --bind-address 127.0.0.1 --secure-port "$p" --cert-dir "$dir/scheduler-certs"

# --- kwok: the nodes' kubelets, simulated; the API server reaches it as each node's kubelet ---
serving_cert kwok
# Container logs (pods/log through the API server): one file per role, kwok's ClusterLogs.
"$cp_here/cluster/logs.sh" "$dir/kwok-logs" >"$dir/kwok-logs.yaml" || die "cannot write kwok's logs"
p=$(free_port)
start kwok "https://127.0.0.1:$p/healthz" "$kwok/bin/kwok" --kubeconfig "$KUBECONFIG" \
  --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
  --node-lease-duration-seconds=40 --cidr=10.244.0.0/16 --node-ip=127.0.0.1 --node-port="$p" \
  --server-address="127.0.0.1:$p" --tls-cert-file "$pki/kwok.crt" --tls-private-key-file "$pki/kwok.key" \
  --config "$cp_here/cluster/stages.yaml" --config "$dir/kwok-logs.yaml"

nodes=$(python3 "$cp_here/cluster/nodes.py" "${AJ_CLUSTER_NODES:-a100=4 h100=4 cpu=3}") ||
  die "bad AJ_CLUSTER_NODES '${AJ_CLUSTER_NODES:-}'"
k apply -f - >/dev/null <<<"$nodes" || die "creating the nodes failed"
n=$(grep -c '^kind: Node' <<<"$nodes")
# Ready, and the not-ready taint the API server puts on new nodes removed by node-lifecycle.
t_end=$(($(date +%s) + timeout_s))
until [[ $(k get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{" "}{.spec.taints[*].key}{"\n"}{end}' |
           grep -c '^True \?\(nvidia.com/gpu\)\?$') -ge $n ]]; do
  (($(date +%s) < t_end)) || { k get nodes -o wide >&2; die "the $n nodes did not become Ready and untainted within ${timeout_s}s"; }
  sleep 0.5
done

# --- Volcano (cluster/volcano.sh): its CRDs were installed first, its webhook, controller, scheduler ---
((worker)) || volcano_up "$volcano"

# --- what the examples name: namespace training, its shared volume, the priority class ---
mkdir -p "$dir/shared-volume"
k apply -f - >/dev/null <<YAML || die "creating the examples' namespace, volume and priority class failed"
apiVersion: v1
kind: Namespace
metadata: {name: training}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: training-shared}
spec:
  capacity: {storage: 1Ti}
  accessModes: [ReadWriteMany]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  hostPath: {path: "$dir/shared-volume"}
  claimRef: {namespace: training, name: training-shared}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: training-shared, namespace: training}
spec:
  accessModes: [ReadWriteMany]
  storageClassName: ""
  volumeName: training-shared
  resources: {requests: {storage: 1Ti}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high-priority}
value: 100000
description: the examples' pretraining jobs
YAML
# --- Kueue, once namespace training exists for its LocalQueue ---
source "$cp_here/cluster/kueue.sh"
kueue_up "$kueue"
real_nodes=${AJ_CLUSTER_REAL_NODE:-$((1 - worker))}
[[ $real_nodes =~ ^[0-8]$ ]] || die "AJ_CLUSTER_REAL_NODE is '$real_nodes'; the number of real nodes, 0 to 8 (0: kwok's nodes only)"
((real_nodes == 0)) || node_up "$real_nodes"
echo "cluster-up.sh: $n kwok nodes and $real_nodes real, Volcano $( ((worker)) && echo none || basename "$volcano"), kwok $(basename "$kwok"), Kueue $(basename "$kueue") ready in $(($(date +%s) - t0)) s" >&2
