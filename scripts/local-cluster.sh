#!/usr/bin/env bash
# A local Kubernetes API server (kube-apiserver + etcd, no nodes) for trying aj by hand.
#
# Usage: scripts/local-cluster.sh up|down|status [--version vX.Y.Z]
#   up      build the control plane if needed, start it, install the aj and Volcano CRDs
#   down    stop it and remove its state
#   status  say whether it runs, and where the kubeconfig is
# State lives in ${XDG_STATE_HOME:-$HOME/.local/state}/aj/local-cluster (override: AJ_LOCAL_CLUSTER_DIR).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cp=$root/tests/controlplane
dir=${AJ_LOCAL_CLUSTER_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/aj/local-cluster}
cmd=${1:-status}
shift || true
ver_args=()
[[ ${1:-} == --version ]] && ver_args=(--version "$2")

show() {
  # shellcheck disable=SC1091
  source "$dir/env"
  cat <<MSG
Local control plane $AJ_K8S_VERSION is running at $AJ_KUBE_SERVER
  kubeconfig: $KUBECONFIG
  kubectl:    $AJ_KUBECTL
Use it:   export KUBECONFIG=$KUBECONFIG
          "$AJ_KUBECTL" get ajjobs -A
Stop it:  scripts/local-cluster.sh down
MSG
}

case $cmd in
  up)
    if [[ -f $dir/env ]] && "$cp/stop.sh" --check "$dir/env"; then show; exit 0; fi
    [[ -f $dir/env ]] && "$cp/stop.sh" --dir "$dir" >/dev/null # stale (e.g. after a reboot)
    mkdir -p "$(dirname "$dir")"
    env_file=$("$cp/start.sh" --build --dir "$dir" "${ver_args[@]}" | tail -1)
    # shellcheck disable=SC1090
    source "$env_file"
    k() { "$AJ_KUBECTL" "$@"; }
    if ! { k apply --server-side -f "$root/crd/" -f "$root/tests/integration/crds/volcano/" >/dev/null &&
           k wait --for condition=Established --timeout=60s crd --all >/dev/null &&
           k apply -f - >/dev/null <<'Q'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: default}
spec: {weight: 1, reclaimable: true}
Q
         }; then
      echo "local-cluster: installing the CRDs failed; stopping" >&2
      "$cp/stop.sh" --dir "$dir" >&2
      exit 1
    fi
    echo "Installed CRDs: $(k get crd -o name | sed 's|.*/||' | tr '\n' ' ')"
    show
    ;;
  down)
    "$cp/stop.sh" --dir "$dir"
    ;;
  status)
    if [[ -f $dir/env ]] && "$cp/stop.sh" --check "$dir/env"; then show
    else echo "Local control plane is not running (start it: scripts/local-cluster.sh up)"; exit 1
    fi
    ;;
  *)
    echo "usage: scripts/local-cluster.sh up|down|status [--version vX.Y.Z]" >&2
    exit 2
    ;;
esac
