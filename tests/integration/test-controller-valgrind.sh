#!/usr/bin/env bash
# aj-controller under valgrind memcheck against the real API server: it
# starts, reconciles a valid, an invalid and a cancelled AjJob, mirrors a
# Volcano phase, follows a deletion, and on SIGTERM exits 0 with no memory
# error and no definite or indirect leak (valgrind's exit status 99 says
# otherwise).
source "$(dirname "$0")/lib.sh"
: "${AJ_CONTROLLER_BIN:?AJ_CONTROLLER_BIN must name the aj-controller executable}"
command -v valgrind >/dev/null || { echo "valgrind is not installed"; exit 77; }

ns=$(new_namespace vg)
work=$(mktemp -d "${TMPDIR:-/tmp}/aj-it-vg.XXXXXX")
pid=
cleanup() {
  [[ -n $pid ]] && { kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
  if ((t_fail)) && [[ -f $work/controller.log ]]; then
    echo "--- controller log"; grep -v '^{' "$work/controller.log" | tail -n 60
  fi
  rm -rf "$work" "$t_out"
}
trap cleanup EXIT

ajjob() { # ajjob NAME GPUS [ANNOTATIONS]: an AjJob with its template embedded
  local ann=
  [[ -n ${3:-} ]] && ann=", annotations: {$3}"
  cat <<YAML
apiVersion: aj.dev/v1alpha1
kind: AjJob
metadata: {name: $1, namespace: $ns$ann}
spec:
  name: template/job
  template:
    base: [common]
    config:
      target: {gpus_per_node: $2, cpus_per_node: 4, memory: 16Gi}
      environment: {image: registry.example.com/train:1}
      jobs: [{name: train, sku: "{nodes}xG{processes}", instance_count: 2}]
  components:
    template/common: {config: {target: {service: volcano, queue: default}}}
  command: [python, train.py]
  nodes: 2
YAML
}

valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
  --track-fds=no "$AJ_CONTROLLER_BIN" --kubeconfig "$KUBECONFIG" --namespace "$ns" \
  --health-addr 127.0.0.1 --health-port 0 --port-file "$work/port" >"$work/controller.log" 2>&1 &
pid=$!
expect_ok "the controller starts under valgrind" wait_for 120 test -s "$work/port"

{ ajjob ok-1 1; echo ---; ajjob bad-1 eight; echo ---; ajjob stop-1 1 '"aj.dev/cancel": "true"'; } >"$work/jobs.yaml"
expect_ok "apply a valid, an invalid and a cancelled AjJob" k apply -f "$work/jobs.yaml"
expect_ok "a valid AjJob is submitted" wait_for 120 phase_is ok-1 Submitted
expect_ok "an invalid one fails" wait_for 60 phase_is bad-1 Failed
expect_ok "one cancelled before submission ends Cancelled" wait_for 60 phase_is stop-1 Cancelled
k -n "$ns" patch jobs.batch.volcano.sh ok-1 --subresource=status --type=merge \
  -p '{"status":{"state":{"phase":"Running"}}}' >/dev/null
expect_ok "the Volcano phase is mirrored" wait_for 60 phase_is ok-1 Running
expect_ok "an AjJob is deleted while watched" k -n "$ns" delete ajjob bad-1 --wait=false
sleep 2

kill -TERM "$pid"
wait "$pid"; rc=$?
pid=
expect_eq "SIGTERM: exit 0, no memory error, no leak" "0" echo "$rc"
expect_ok "valgrind reported nothing" bash -c "! grep -E '^==[0-9]+== ' '$work/controller.log'"
finish
