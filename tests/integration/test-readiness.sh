#!/usr/bin/env bash
# What aj-controller says when its cluster is not set up: a missing CRD or a
# missing permission keeps /readyz at 503 with a body naming the resource and
# the API server's answer, and the log names it too; a watch that had listed
# and keeps failing past the 30 s relist period turns it to 503 too. Runs its
# own control plane (CRDs are cluster-wide: removing them would break the
# other tests).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
: "${AJ_CONTROLLER_BIN:?AJ_CONTROLLER_BIN must name the aj-controller executable}"
work=$(mktemp -d "${TMPDIR:-/tmp}/aj-it-readiness.XXXXXX")
ctl_pid=
finish_all() {
  [[ -n $ctl_pid ]] && { kill -TERM "$ctl_pid" 2>/dev/null; wait "$ctl_pid" 2>/dev/null; }
  "$root/tests/controlplane/stop.sh" --dir "$work/cp" >/dev/null 2>&1
  rm -rf "$work"
}
trap finish_all EXIT
"$root/tests/controlplane/start.sh" --dir "$work/cp" >"$work/start.log" 2>&1 ||
  { echo "FAIL - start a private control plane"; cat "$work/start.log"; exit 1; }
export AJ_CP_ENV=$work/cp/env
source "$here/lib.sh"
trap 'finish_all; rm -f "$t_out"' EXIT

# start_controller KUBECONFIG: one controller at a time, log in $work/ctl.log
start_controller() {
  stop_controller
  "$AJ_CONTROLLER_BIN" --kubeconfig "$1" --health-addr 127.0.0.1 --health-port 0 \
    --port-file "$work/port" >"$work/ctl.log" 2>&1 &
  ctl_pid=$!
  local i
  for ((i = 0; i < 50; i++)); do [[ -s $work/port ]] && return 0; sleep 0.1; done
}
stop_controller() {
  [[ -n $ctl_pid ]] && { kill -TERM "$ctl_pid" 2>/dev/null; wait "$ctl_pid" 2>/dev/null; }
  ctl_pid=
  rm -f "$work/port"
}
# readyz: "<HTTP code> <body>"
readyz() {
  python3 - "$work/port" <<'PY'
import sys, urllib.request, urllib.error
port = open(sys.argv[1]).read().strip()
try:
    r = urllib.request.urlopen("http://127.0.0.1:%s/readyz" % port, timeout=10)
    print(r.status, r.read().decode().strip())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())
PY
}
# wait_readyz SECONDS PATTERN: until the readyz answer matches the ERE
wait_readyz() {
  local i
  for ((i = 0; i < $1 * 5; i++)); do
    readyz 2>/dev/null | grep -qE -- "$2" && return 0
    sleep 0.2
  done
  echo "last /readyz answer: $(readyz 2>&1)"
  return 1
}

# --- no CRDs at all ---
start_controller "$KUBECONFIG"
expect_ok "without the CRDs /readyz is 503 and names the AjJob resource as not found" \
  wait_readyz 20 '^503 not ready: ajjobs\.aj\.dev not listed yet: the CRD ajjobs\.aj\.dev is not installed \(watch ajjobs\.aj\.dev: .*NotFound \(HTTP 404\)'
for r in ajjobs.aj.dev ajtemplates.aj.dev jobs.batch.volcano.sh; do
  expect_ok "a log line names the missing $r" \
    grep -qF "\"error\":\"watch $r: list $r: NotFound (HTTP 404)" "$work/ctl.log"
done

# --- the AjJob and AjTemplate CRDs, not Volcano's ---
expect_ok "install the AjJob and AjTemplate CRDs" install_crds "$root/crd/ajjob.yaml" "$root/crd/ajtemplate.yaml"
expect_ok "then /readyz names the missing Volcano Job CRD" \
  wait_readyz 30 '^503 not ready: jobs\.batch\.volcano\.sh not listed yet: the CRD jobs\.batch\.volcano\.sh is not installed \(watch jobs\.batch\.volcano\.sh: list jobs\.batch\.volcano\.sh: NotFound \(HTTP 404\)'
expect_ok "install the Volcano CRDs" install_crds "$here"/crds/volcano/*.yaml
expect_ok "then the controller becomes ready without a restart" wait_readyz 30 '^200 ok$'
stop_controller

# --- the chart's RBAC without one permission ---
# sa_kubeconfig NAME RBAC_FILE: install the RBAC (deploy/rbac.yaml's names with
# suffix NAME) and write a kubeconfig for its ServiceAccount token.
sys=$(new_namespace ajsys)
sa_kubeconfig() {
  local name=$1 kc=$work/$1.kubeconfig token
  awk -v sys="$sys" -v sfx="$name" '
    /^---/ { kind = "" }
    /^kind: / { kind = $2 }
    (kind == "ClusterRole" || kind == "ClusterRoleBinding") && $0 == "  name: aj-controller" {
      print "  name: aj-controller-" sfx; next }
    (kind == "ServiceAccount" && $0 == "  name: aj-controller") || $0 == "    name: aj-controller" {
      sub(/aj-controller/, "aj-controller-" sfx) }
    { sub(/namespace: aj-system/, "namespace: " sys); print }
  ' "$2" >"$work/$name-rbac.yaml"
  k apply -f "$work/$name-rbac.yaml" >/dev/null || return 1
  token=$(k -n "$sys" create token "aj-controller-$name" --duration=1h) || return 1
  KUBECONFIG=$kc k config set-cluster cp --server="$AJ_KUBE_SERVER" \
    --certificate-authority="$AJ_KUBE_CA" --embed-certs >/dev/null &&
  KUBECONFIG=$kc k config set-credentials sa --token="$token" >/dev/null &&
  KUBECONFIG=$kc k config set-context sa --cluster=cp --user=sa --namespace="$sys" >/dev/null &&
  KUBECONFIG=$kc k config use-context sa >/dev/null && echo "$kc"
}

# 1. no list/watch on ajtemplates: readiness names the resource and the verb.
sed '/resources: \[ajjobs, ajtemplates\]/s/, ajtemplates//' "$root/deploy/rbac.yaml" >"$work/no-templates.yaml"
expect_ok "the edited RBAC really lacks ajtemplates" bash -c "! grep -q ajtemplates '$work/no-templates.yaml'"
kc=$(sa_kubeconfig notpl "$work/no-templates.yaml") || fail "set up a ServiceAccount without ajtemplates access"
start_controller "$kc"
expect_ok "without list on ajtemplates /readyz is 503 and names the resource, the verb and the identity" \
  wait_readyz 20 "^503 not ready: ajtemplates\.aj\.dev not listed yet: .*Forbidden \(HTTP 403\): .*User \"system:serviceaccount:$sys:aj-controller-notpl\" cannot list resource \"ajtemplates\" in API group \"aj\.dev\""
expect_ok "...and so does a log line" \
  grep -qF 'cannot list resource \"ajtemplates\" in API group \"aj.dev\"' "$work/ctl.log"
stop_controller

# 2. the chart's RBAC as it is: ready.
kc=$(sa_kubeconfig full "$root/deploy/rbac.yaml") || fail "set up a ServiceAccount with deploy/rbac.yaml"
start_controller "$kc"
expect_ok "with exactly deploy/rbac.yaml the controller becomes ready" wait_readyz 20 '^200 ok$'
expect_ok "...and its start-up check finds nothing missing" bash -c "! grep -q 'missing permission' '$work/ctl.log'"
stop_controller

# 2b. no list on nodes: placement's views lack them, which only degrades placement: the start-up
#     check warns naming the rule and what is lost, and the controller becomes ready.
sed '/apiGroups: \[""\]/{N;/resources: \[nodes\]/{N;d}}' "$root/deploy/rbac.yaml" >"$work/no-nodes.yaml"
expect_ok "the edited RBAC really lacks nodes, and only them" \
  bash -c "! grep -qF 'resources: [nodes]' '$work/no-nodes.yaml' && [ \$(diff '$root/deploy/rbac.yaml' '$work/no-nodes.yaml' | grep -c '^<') = 3 ]"
kc=$(sa_kubeconfig nonodes "$work/no-nodes.yaml") || fail "set up a ServiceAccount without list on nodes"
start_controller "$kc"
expect_ok "without list on nodes the controller still becomes ready" wait_readyz 20 '^200 ok$'
expect_ok "...and a warning names the rule and its consequence" \
  grep -qF '"msg":"missing permission","permission":"list nodes in the cluster","consequence":"every cluster candidate of a placement is ranked unknown' "$work/ctl.log"
expect_ok "...and no other rule is missing" bash -c "[ \$(grep -c 'missing permission' '$work/ctl.log') = 1 ]"
stop_controller

# 2c. no watch on pods: the pod watch (a failed pod's exit code after the pod is gone) is not
#     started; a warning says what is lost, and the controller becomes ready.
sed '/resources: \[pods\]/{n;s/verbs: \[list, watch\]/verbs: [list]/}' "$root/deploy/rbac.yaml" >"$work/no-watch-pods.yaml"
expect_ok "the edited RBAC really lacks watch on pods, and only that" \
  bash -c "grep -A1 'resources: \[pods\]' '$work/no-watch-pods.yaml' | grep -qF 'verbs: [list]' && [ \$(diff '$root/deploy/rbac.yaml' '$work/no-watch-pods.yaml' | grep -c '^<') = 1 ]"
kc=$(sa_kubeconfig nowatchpods "$work/no-watch-pods.yaml") || fail "set up a ServiceAccount without watch on pods"
start_controller "$kc"
expect_ok "without watch on pods the controller still becomes ready" wait_readyz 20 '^200 ok$'
expect_ok "...and a warning names the rule and its consequence" \
  grep -qF '"msg":"missing permission","permission":"watch pods in all namespaces","consequence":"a failed job whose pod was deleted before it was listed' "$work/ctl.log"
expect_ok "...and no other rule is missing" bash -c "[ \$(grep -c 'missing permission' '$work/ctl.log') = 1 ]"
expect_ok "...nor does any watch fail" bash -c "! grep -q 'watch failed' '$work/ctl.log'"
stop_controller

# 3. no create on Volcano Jobs: the controller asks the API server about its
#    write permissions and stays unready naming the missing one; a reconcile
#    that needs it also says so in its log line.
# only Volcano's Jobs: the kube backend's batch/v1 Jobs keep their create
sed '/apiGroups: \[batch.volcano.sh\]/{n;n;s/, create//}' "$root/deploy/rbac.yaml" >"$work/no-create.yaml"
expect_ok "the edited RBAC really lacks create on Volcano Jobs, and only there" \
  bash -c "grep -A2 'apiGroups: \[batch.volcano.sh\]' '$work/no-create.yaml' | grep -q 'verbs: \[get, list, watch, delete\]' &&
           grep -A2 'apiGroups: \[batch\]' '$work/no-create.yaml' | grep -q 'verbs: \[get, list, watch, create, delete\]'"
kc=$(sa_kubeconfig nocreate "$work/no-create.yaml") || fail "set up a ServiceAccount without create on jobs"
ns=$(new_namespace rdy)
start_controller "$kc"
expect_ok "without create on Volcano Jobs /readyz is 503 and names the permission" \
  wait_readyz 20 '^503 not ready: missing permission: create jobs\.batch\.volcano\.sh in all namespaces$'
expect_ok "...and so does a log line" \
  grep -qF '"msg":"missing permission","permission":"create jobs.batch.volcano.sh in all namespaces"' "$work/ctl.log"
k apply -f - >/dev/null <<YAML
apiVersion: aj.dev/v1alpha1
kind: AjJob
metadata: {name: train-1, namespace: $ns}
spec:
  name: template/job
  template:
    base: []
    config:
      target: {service: volcano, gpus_per_node: 1, cpus_per_node: 2, memory: 4Gi}
      environment: {image: busybox}
      jobs: [{name: train, sku: G1, instance_count: 1}]
  command: [python, train.py]
YAML
wait_log() {
  local i
  for ((i = 0; i < 100; i++)); do grep -qF -- "$1" "$work/ctl.log" && return 0; sleep 0.2; done
  tail -n 5 "$work/ctl.log"; return 1
}
expect_ok "a submitted AjJob's reconcile log line names the missing permission" \
  wait_log 'cannot create resource \"jobs\" in API group \"batch.volcano.sh\"'
expect_ok "...and the AjJob it concerns" bash -c \
  "grep -F 'cannot create resource' '$work/ctl.log' | grep -qF '\"ajjob\":\"$ns/train-1\"'"
stop_controller

# 4. a watch that had listed keeps failing: ready until it has not synced for longer than the
#    relist period (30 s, the longest backoff), then 503 naming it and its last error; ready
#    again, without a restart, once it lists again. The Volcano Job CRD goes away and comes back.
start_controller "$KUBECONFIG"
expect_ok "a controller with every CRD becomes ready" wait_readyz 30 '^200 ok$'
expect_ok "delete the Volcano Job CRD" k delete crd jobs.batch.volcano.sh --wait=true
t0=$(date +%s)
expect_ok "a watch failing for a few seconds keeps /readyz at 200" \
  bash -c "sleep 5; $(declare -f readyz); work='$work'; readyz | grep -qx '200 ok'"
expect_ok "past 30 s of failures /readyz is 503 naming the resource, how long and the last error" \
  wait_readyz 120 '^503 not ready: jobs\.batch\.volcano\.sh has not synced for [0-9]+ s: .*NotFound \(HTTP 404\)'
waited=$(($(date +%s) - t0))
expect_ok "...not before the relist period had passed (${waited} s after the delete)" test "$waited" -gt 30
expect_ok "reinstall the Volcano Job CRD" install_crds "$here/crds/volcano/batch.volcano.sh_jobs.yaml"
expect_ok "then /readyz is 200 again without a restart" wait_readyz 90 '^200 ok$'
stop_controller
finish
