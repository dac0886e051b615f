#!/usr/bin/env bash
# The controller's security rule on the real API server: an AjJob that adds capabilities fails,
# creating nothing, unless the controller's --privileged-namespaces lists its namespace (default:
# none); a bad list stops the controller at start. The controller runs with deploy/rbac.yaml's
# permissions and watches only this script's namespace.
source "$(dirname "$0")/lib.sh"
: "${AJ_BIN:?AJ_BIN must name the aj executable}"
: "${AJ_CONTROLLER_BIN:?AJ_CONTROLLER_BIN must name the aj-controller executable}"

ns=$(new_namespace priv)
sys=$(new_namespace privsys)
work=$(mktemp -d "${TMPDIR:-/tmp}/aj-it-priv.XXXXXX")
pid=
stop_controller() {
  [[ -n $pid ]] && { kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
  pid=
}
trap 'stop_controller; rm -rf "$work" "$t_out"' EXIT
controller_identity "$sys" "$work"
start_controller() { # start_controller [args...]
  "$AJ_CONTROLLER_BIN" --kubeconfig "$work/kubeconfig" --namespace "$ns" --health-addr 127.0.0.1 \
    --health-port 0 --lease-namespace "$sys" "$@" >>"$work/controller.log" 2>&1 &
  pid=$!
}
mkdir -p "$work/home/template" "$work/code"
cat >"$work/home/template/nested.yaml" <<YAML
config:
  target: {service: volcano, gpus_per_node: 0, cpus_per_node: 1, memory: 1Gi}
  environment: {image: "busybox:1.36"}
  jobs:
    - name: nested
      sku: C1
      instance_count: 1
      submit_args:
        container_args: {capabilities: [SYS_ADMIN], scratch_mount_path: /var/lib/containers}
YAML
submit() { # submit NAME: a template adding SYS_ADMIN, as aj run --dry-run prints it
  (cd "$work/code" && AJ_HOME=$work/home \
    "$AJ_BIN" run -t nested --name "$1" --namespace "$ns" --dry-run -o json -- python train.py) |
    k apply -f - >/dev/null
}
wait_phase() { # wait_phase NAME PHASE
  local i
  for ((i = 0; i < 150; i++)); do [[ $(phase "$1") == "$2" ]] && return 0; sleep 0.2; done
  phase "$1"; return 1
}
message() { k -n "$ns" get ajjob "$1" -o jsonpath='{.status.message}'; }
volcano_jobs() { k -n "$ns" get jobs.batch.volcano.sh -o name | tr '\n' ' '; }

expect_fail "a bad list stops the controller at start" '"Team_B" is not a namespace name or "*"' \
  "$AJ_CONTROLLER_BIN" --kubeconfig "$work/kubeconfig" --privileged-namespaces "team-a,Team_B"

# --- default: no namespace permits capabilities ---
start_controller
submit caps-1
expect_ok "by default an AjJob adding capabilities fails" wait_phase caps-1 Failed
expect_ok "...naming the key, the namespace and the setting" bash -c \
  "$(declare -f message k); ns='$ns'; AJ_KUBECTL='$AJ_KUBECTL'; message caps-1 | grep -qF \
  'config.jobs[0].submit_args.container_args.capabilities: adding capabilities is not permitted in namespace \"$ns\": the controller'\''s --privileged-namespaces (AJ_PRIVILEGED_NAMESPACES) permits none by default'"
expect_eq "...and creates no Volcano Job" "" volcano_jobs
stop_controller

# --- a list without this namespace ---
AJ_PRIVILEGED_NAMESPACES="other,$ns-x" start_controller
submit caps-2
expect_ok "a list naming other namespaces refuses it too" wait_phase caps-2 Failed
expect_ok "...saying the list does not name it" bash -c \
  "$(declare -f message k); ns='$ns'; AJ_KUBECTL='$AJ_KUBECTL'; message caps-2 | grep -qF 'does not list it'"
stop_controller

# --- listed: built as asked ---
start_controller --privileged-namespaces "other, $ns"
submit caps-3
expect_ok "with the namespace listed it is submitted" wait_phase caps-3 Submitted
expect_eq "...and the Volcano Job adds the capability" "SYS_ADMIN" k -n "$ns" get jobs.batch.volcano.sh caps-3 \
  -o 'jsonpath={.spec.tasks[0].template.spec.containers[0].securityContext.capabilities.add[0]}'
stop_controller
finish
