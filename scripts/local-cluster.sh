#!/usr/bin/env bash
# A local batch cluster on 127.0.0.1 for trying aj by hand and for the demo: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kwok's simulated GPU and CPU nodes (no container runs
# there: kwok plays their kubelets), a real node real-0 (a kubelet with containerd and runc: pods
# run in containers, on a pod network of their own with the cluster DNS) and the real Volcano
# (admission webhook, controller, scheduler), with the `default` queue, the examples' namespace
# `training`, its shared volume and priority class.
#
# Usage: scripts/local-cluster.sh up|down|status [--version vX.Y.Z] [--api-only]
#   up          build what is missing (cached by version), start it, install the aj CRDs
#   down        stop every component and remove the state
#   status      every component with its pid and health, and the kubeconfig
#   --api-only  with up: only etcd and kube-apiserver (no nodes, no Volcano)
# Node shapes: AJ_CLUSTER_NODES (default "a100=4 h100=4 cpu=3"; see tests/controlplane/cluster-up.sh);
# real nodes: AJ_CLUSTER_REAL_NODE (default 1, 0 for none). A job reaches them with
# target.node_selector {aj.dev/node: real} and the image the env file names as AJ_LOCAL_IMAGE.
# Pod behaviour per job: tests/controlplane/cluster/stages.yaml (labels aj.dev/kwok-*).
# State lives in ${XDG_STATE_HOME:-$HOME/.local/state}/aj/local-cluster (override: AJ_LOCAL_CLUSTER_DIR).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cp=$root/tests/controlplane
dir=${AJ_LOCAL_CLUSTER_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/aj/local-cluster}
cmd=${1:-status}
shift || true
start_args=()
api_only=0
while (($#)); do
  case $1 in
    --version) start_args+=(--version "$2"); shift 2 ;;
    --api-only) api_only=1; shift ;;
    *) echo "usage: scripts/local-cluster.sh up|down|status [--version vX.Y.Z] [--api-only]" >&2; exit 2 ;;
  esac
done
((api_only)) || start_args+=(--cluster)

# One line per component: name, pid, health.
components() {
  local name pid url health
  printf '  %-24s %-8s %s\n' etcd "$AJ_CP_ETCD_PID" "http://127.0.0.1:$AJ_CP_ETCD_PORT"
  printf '  %-24s %-8s %s\n' kube-apiserver "$AJ_CP_APISERVER_PID" "$AJ_KUBE_SERVER"
  [[ -f $dir/components ]] || return 0
  while read -r name pid url _; do
    if curl -ksf -o /dev/null --max-time 2 "$url"; then health=healthy; else health=UNHEALTHY; fi
    printf '  %-24s %-8s %s %s\n' "$name" "$pid" "$health" "$url"
  done <"$dir/components"
}

show() {
  # shellcheck disable=SC1091
  source "$dir/env"
  local what="Local control plane"
  if [[ ${AJ_CP_CLUSTER:-0} == 1 ]]; then
    what="Local cluster (kwok's nodes simulated, no container runs there"
    if [[ -n ${AJ_LOCAL_IMAGE:-} ]]; then
      what+="; real nodes labelled aj.dev/node=real run pods in containers, image $AJ_LOCAL_IMAGE)"
    else
      what+="; no real node)"
    fi
  fi
  cat <<MSG
$what $AJ_K8S_VERSION is running at $AJ_KUBE_SERVER
$(components)
  kubeconfig: $KUBECONFIG
  kubectl:    $AJ_KUBECTL
Use it:   export KUBECONFIG=$KUBECONFIG${AJ_LOCAL_IMAGE:+ AJ_LOCAL_IMAGE=$AJ_LOCAL_IMAGE}
          "$AJ_KUBECTL" get nodes -L aj.dev/node,nvidia.com/gpu.product
          "$AJ_KUBECTL" get ajjobs -A
Stop it:  scripts/local-cluster.sh down
MSG
}

running() { [[ -f $dir/env ]] && "$cp/stop.sh" --check "$dir/env"; }

case $cmd in
  up)
    if running; then show; exit 0; fi
    [[ -f $dir/env ]] && "$cp/stop.sh" --dir "$dir" >/dev/null # stale (e.g. after a reboot or a kill)
    mkdir -p "$(dirname "$dir")"
    env_file=$("$cp/start.sh" --build --restart --dir "$dir" "${start_args[@]}" | tail -1)
    # shellcheck disable=SC1090
    source "$env_file"
    k() { "$AJ_KUBECTL" "$@"; }
    if [[ $AJ_CP_CLUSTER != 1 ]]; then
      # Without Volcano's controllers its CRDs (the copy the tests use) still let jobs be stored.
      if ! { k apply --server-side -f "$root/crd/" -f "$root/tests/integration/crds/volcano/" >/dev/null &&
             k wait --for condition=Established --timeout=60s crd --all >/dev/null; }; then
        echo "local-cluster: installing the CRDs failed; stopping" >&2
        "$cp/stop.sh" --dir "$dir" >&2
        exit 1
      fi
    fi
    show
    ;;
  down)
    "$cp/stop.sh" --dir "$dir"
    ;;
  status)
    if running; then show
    else echo "Local cluster is not running (start it: scripts/local-cluster.sh up)"; exit 1
    fi
    ;;
  *)
    echo "usage: scripts/local-cluster.sh up|down|status [--version vX.Y.Z] [--api-only]" >&2
    exit 2
    ;;
esac
