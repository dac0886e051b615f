# Helpers for integration test scripts (sourced). Each script runs against the control plane whose
# env file is named by $AJ_CP_ENV (set by tests/integration/CMakeLists.txt, written by
# tests/controlplane/start.sh). The cases and their verdict come from tests/lib/expect.sh.

set -uo pipefail
it_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$it_dir/../.." && pwd)

: "${AJ_CP_ENV:?AJ_CP_ENV must name the env file written by tests/controlplane/start.sh}"
[[ -f $AJ_CP_ENV ]] || { echo "FAIL - control plane env file $AJ_CP_ENV missing (did the controlplane fixture start?)"; exit 1; }
# shellcheck disable=SC1090
source "$AJ_CP_ENV"

source "$repo_root/tests/lib/expect.sh"

k() { "$AJ_KUBECTL" --request-timeout=30s "$@"; }

# A fresh namespace per script: namespaces never finish deleting on a control plane without controllers.
new_namespace() {
  local ns
  ns="$1-$(date +%s)-$RANDOM"
  k create namespace "$ns" >/dev/null || { echo "FAIL - create namespace $ns"; exit 1; }
  echo "$ns"
}

# wait_for SECONDS cmd...: until the command succeeds (its output is shown only if it never does)
wait_for() {
  local t=$1 i; shift
  for ((i = 0; i < t * 5; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  "$@"
}

# AjJobs and Volcano Jobs in the script's namespace $ns.
phase() { k -n "$ns" get ajjob "$1" -o jsonpath='{.status.phase}'; }
phase_is() { [[ $(phase "$1") == "$2" ]]; }
volcano_exists() { k -n "$ns" get jobs.batch.volcano.sh "$1" >/dev/null 2>&1; }
# finish_foreground_delete NAME: act as kube-controller-manager's garbage collector on a control
# plane without it: a Volcano Job deleted with propagation Foreground (a cancel) keeps its
# foregroundDeletion finalizer until the GC removes it; there are no pods to wait for here.
finish_foreground_delete() {
  k -n "$ns" patch jobs.batch.volcano.sh "$1" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
}
# set_volcano_phase NAME PHASE: act as Volcano and write the job's state
set_volcano_phase() {
  k -n "$ns" patch jobs.batch.volcano.sh "$1" --subresource=status --type=merge \
    -p "{\"status\":{\"state\":{\"phase\":\"$2\"}}}" >/dev/null
}

# The loopback Azure peer (tests/peers/azure_peer.py), its log in DIR/peer.log; sets peer (its
# URL) and peer_pid. The script stops it. start_azure_peer DIR
start_azure_peer() {
  local i
  python3 "$repo_root/tests/peers/azure_peer.py" --port-file "$1/peer.port" >"$1/peer.log" 2>&1 &
  peer_pid=$!
  for ((i = 0; i < 100; i++)); do [[ -s $1/peer.port ]] && break; sleep 0.1; done
  peer=http://127.0.0.1:$(cat "$1/peer.port")
}
# peer_post WHAT JSON: configure the peer (config, faults, ...)
peer_post() { curl -sf -X POST -H 'Content-Type: application/json' "$peer/_peer/$1" -d "$2" >/dev/null; }
# requests METHOD PATH-REGEX [QUERY-COMP]: how many requests the peer saw
requests() {
  curl -sf "$peer/_peer/requests" | python3 -c '
import json, re, sys
m, p, comp = sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None
print(sum(1 for r in json.load(sys.stdin) if r["method"] == m and re.search(p, r["path"])
          and (comp is None or r["query"].get("comp") == comp)))' "$@"
}

# Install CRD files (idempotent) and wait until they are established.
install_crds() {
  local f fs=() names
  for f in "$@"; do fs+=(-f "$f"); done
  k apply --server-side --force-conflicts "${fs[@]}" >/dev/null || return 1
  names=$(k get "${fs[@]}" -o name) || return 1
  # shellcheck disable=SC2086
  k wait --for condition=Established --timeout=60s $names >/dev/null
}

# Pids of processes whose command line contains STRING (a fixed string), without procps.
pids_matching() {
  local f pid
  for f in /proc/[0-9]*/cmdline; do
    pid=${f#/proc/}; pid=${pid%/cmdline}
    [[ $pid == "$$" || $pid == "$BASHPID" ]] && continue
    tr '\0' ' ' 2>/dev/null <"$f" | grep -qF -- "$1" && echo "$pid"
  done
  return 0
}

# Restart the control plane's kube-apiserver as a crash would: SIGKILL (a graceful stop waits a minute
# for open watches), then the same command line. The env file then names the new pid, which the
# fixture's stop.sh stops. Returns at once; the caller waits for /readyz.
restart_apiserver() {
  local p pid= cmd
  for p in $(pids_matching "--cert-dir $AJ_CP_DIR/pki"); do
    tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q kube-apiserver && { pid=$p; break; }
  done
  [[ -n $pid ]] || { echo "no kube-apiserver process of $AJ_CP_DIR" >&2; return 1; }
  mapfile -d '' cmd <"/proc/$pid/cmdline"
  kill -KILL "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
  nohup "${cmd[@]}" >>"$AJ_CP_DIR/kube-apiserver.log" 2>&1 </dev/null &
  sed -i "s/^export AJ_CP_APISERVER_PID=.*/export AJ_CP_APISERVER_PID=$!/" "$AJ_CP_ENV"
}

# The "# expect: MESSAGE" header line of a negative-case data file.
expected_message() { sed -n '1s/^# expect: //p' "$1"; }

# Server-side dry run of one file in namespace $1, rejecting unknown fields.
dry_apply() { k apply -n "$1" --dry-run=server --validate=strict -f "$2"; }

# Every file in DIR is accepted by a server-side dry run in namespace NS.
check_valid_dir() { # ns dir label
  local f
  for f in "$2"/*.yaml; do
    expect_ok "$3 accepted: $(basename "$f")" dry_apply "$1" "$f"
  done
}

# Every file in DIR is rejected, and the server's message contains the file's "# expect:" line.
check_invalid_dir() { # ns dir label
  local f msg
  for f in "$2"/*.yaml; do
    msg=$(expected_message "$f")
    if [[ -z $msg ]]; then echo "(no '# expect:' line in $f)" >"$t_out"; fail "$3 rejected: $(basename "$f")"; continue; fi
    expect_fail "$3 rejected: $(basename "$f") ($msg)" "$msg" dry_apply "$1" "$f"
  done
}

# controller_identity SYS_NS WORK: install deploy/rbac.yaml into namespace SYS_NS (cluster-scoped
# names suffixed so runs do not collide) and write WORK/kubeconfig holding a token of the
# controller's service account, so a controller runs with exactly those permissions. Sets $token.
controller_identity() {
  local sys=$1 work=$2 kc=$2/kubeconfig
  awk -v sys="$sys" '
    /^---/ { kind = "" }
    /^kind: / { kind = $2 }
    (kind == "ClusterRole" || kind == "ClusterRoleBinding") && $0 == "  name: aj-controller" {
      print "  name: aj-controller-" sys; next }
    { sub(/namespace: aj-system/, "namespace: " sys); print }
  ' "$repo_root/deploy/rbac.yaml" >"$work/rbac.yaml"
  expect_ok "install the controller's RBAC" k apply -f "$work/rbac.yaml"
  token=$(k -n "$sys" create token aj-controller --duration=2h) || { echo "FAIL - create token"; exit 1; }
  KUBECONFIG=$kc "$AJ_KUBECTL" config set-cluster cp --server="$AJ_KUBE_SERVER" \
    --certificate-authority="$AJ_KUBE_CA" --embed-certs >/dev/null
  KUBECONFIG=$kc "$AJ_KUBECTL" config set-credentials sa --token="$token" >/dev/null
  KUBECONFIG=$kc "$AJ_KUBECTL" config set-context sa --cluster=cp --user=sa --namespace="$sys" >/dev/null
  KUBECONFIG=$kc "$AJ_KUBECTL" config use-context sa >/dev/null
}

# --- the controller, started by a script with $ns (watched), $sys (its own) and $work set, after
# controller_identity "$sys" "$work" ---
controllers=()
# start_controller NAME [args...]: runs in the background, log in $work/NAME.log, pid in $work/NAME.pid
start_controller() {
  local name=$1; shift
  "$AJ_CONTROLLER_BIN" --kubeconfig "$work/kubeconfig" --namespace "$ns" --health-addr 127.0.0.1 --health-port 0 \
    --port-file "$work/$name.port" --lease-namespace "$sys" "$@" >"$work/$name.log" 2>&1 &
  controllers+=($!)
  echo $! >"$work/$name.pid"
}
stop_controllers() {
  local p
  for p in "${controllers[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${controllers[@]}"; do wait "$p" 2>/dev/null; done
  controllers=()
}

# --- AjJobs on the cluster fixture (real Volcano, kwok pods) ---
# cluster_test PREFIX: what a script on the cluster fixture that runs the controller sets up: the
# example templates, namespace $ns (PREFIX-...) with the examples' shared volume, the
# controller's own $sys with deploy/rbac.yaml's identity, $work, and the cleanup on exit.
cluster_test() {
  : "${AJ_BIN:?AJ_BIN must name the aj executable}"
  : "${AJ_CONTROLLER_BIN:?AJ_CONTROLLER_BIN must name the aj-controller executable}"
  export AJ_HOME=$repo_root/examples/.azure_jobs
  ns=$(new_namespace "$1")
  sys=$(new_namespace ajsys)
  work=$(mktemp -d "${TMPDIR:-/tmp}/aj-it-$1.XXXXXX")
  trap cluster_cleanup EXIT
  controller_identity "$sys" "$work"
  shared_volume
}
cluster_cleanup() {
  local f
  for f in "$work"/*.watch; do [[ -f $f ]] && kill "$(cat "$f")" 2>/dev/null; done
  k delete pv "$ns-shared" --wait=false >/dev/null 2>&1
  controller_cleanup
}
# controller_test PREFIX: one controller under deploy/rbac.yaml's identity watching a fresh
# namespace $ns (PREFIX-...), its lease in $sys, files in $work, cleaned up on exit; sets $pid.
controller_test() {
  : "${AJ_CONTROLLER_BIN:?AJ_CONTROLLER_BIN must name the aj-controller executable}"
  ns=$(new_namespace "$1")
  sys=$(new_namespace "$1sys")
  work=$(mktemp -d "${TMPDIR:-/tmp}/aj-it-$1.XXXXXX")
  trap controller_cleanup EXIT
  controller_identity "$sys" "$work"
  start_controller controller
  pid=$(cat "$work/controller.pid")
}
# controller_cleanup: the EXIT trap of a script that ran controllers with start_controller.
controller_cleanup() {
  local f
  stop_controllers
  if ((t_fail)); then  # the controllers' last words and the AjJobs help more than the verdicts
    for f in "$work"/*.log "$work"/*.phases; do [[ -f $f ]] && { echo "--- $f"; tail -n 25 "$f"; }; done
    k -n "$ns" get ajjob -o custom-columns=NAME:.metadata.name,PHASE:.status.phase,MESSAGE:.status.message
  fi
  rm -rf "$work" "$t_out"
}
# submit_ajjob NAME TEMPLATE NODES [CONFIG-JSON [SPEC-JSON]]: the AjJob `aj run --dry-run` makes of an
# example template (NODES "" for the template's own), CONFIG-JSON merged into its leaf config (e.g.
# target.labels, which choose what kwok does with the pods) and SPEC-JSON into its spec (e.g.
# ttlSecondsAfterFinished), applied in $ns, which replaces the
# examples' target.namespace. Without spec.code: kwok runs no container, and code transfer has
# tests of its own (exec-upload, code-blob, volcano-storage). Needs AJ_HOME.
submit_ajjob() {
  local name=$1 tpl=$2 nodes=$3 extra=${4:-"{}"} spec=${5:-"{}"} n=()
  [[ -n $nodes ]] && n=(-n "$nodes")
  mkdir -p "$work/src"   # an empty working directory: the code archive stays small
  (cd "$work/src" && "$AJ_BIN" run -t "$tpl" --namespace "$ns" --name "$name" "${n[@]}" --dry-run -o json \
     -- python train.py) | python3 -c '
import json, sys
def merge(a, b):
    for k, v in b.items():
        a[k] = merge(a.get(k) or {}, v) if isinstance(v, dict) else v
    return a
job = json.load(sys.stdin)
job["spec"].pop("code", None)
config = job["spec"]["template"].setdefault("config", {})
merge(config, {"target": {"namespace": job["metadata"]["namespace"]}})
merge(config, json.loads(sys.argv[1]))
merge(job["spec"], json.loads(sys.argv[2]))
print(json.dumps(job))' "$extra" "$spec" | k apply -f - >/dev/null
}
# The examples' shared volume (PVC training-shared) in $ns, bound to a PV of its own.
shared_volume() {
  mkdir -p "$work/shared"
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: $ns-shared}
spec:
  capacity: {storage: 1Ti}
  accessModes: [ReadWriteMany]
  persistentVolumeReclaimPolicy: Delete
  storageClassName: ""
  hostPath: {path: "$work/shared"}
  claimRef: {namespace: $ns, name: training-shared}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: training-shared, namespace: $ns}
spec:
  accessModes: [ReadWriteMany]
  storageClassName: ""
  volumeName: $ns-shared
  resources: {requests: {storage: 1Ti}}
YAML
}
# jpath NAME JSONPATH: a field of AjJob NAME in $ns
jpath() { k -n "$ns" get ajjob "$1" -o jsonpath="$2"; }
# tasks_column NAME: the Tasks column of `kubectl get ajjob NAME` (its words may have spaces)
tasks_column() {
  k -n "$ns" get ajjob "$1" | awk 'NR == 1 { s = index($0, "TASKS"); e = index($0, "NODES") }
    NR == 2 { v = substr($0, s, e - s); sub(/ +$/, "", v); print v }'
}
# tasks_are NAME WANT: status.tasks as "name replicas pending running succeeded failed;..."
tasks_are() {
  local got
  got=$(jpath "$1" '{range .status.tasks[*]}{.name} {.replicas} {.pending} {.running} {.succeeded} {.failed};{end}')
  echo "status.tasks: $got" >&2
  [[ $got == "$2" ]]
}
cond_is() { [[ $(jpath "$1" "{.status.conditions[?(@.type==\"$2\")].status}") == "$3" ]]; }
pods_of() { k -n "$ns" get pods -l "volcano.sh/job-name=$1" -o jsonpath="$2"; }
# record_phases NAME: every status the AjJob goes through ("phase retryCount restarting suspended"),
# one line each, into $work/NAME.phases, until the script kills the watch ($work/NAME.watch pid)
record_phases() {
  k -n "$ns" get ajjob "$1" --watch -o jsonpath='{.status.phase} {.status.retryCount} {.status.conditions[?(@.type=="Restarting")].status} {.status.conditions[?(@.type=="Suspended")].status}{"\n"}' \
    >"$work/$1.phases" 2>/dev/null &
  echo $! >"$work/$1.watch"
}
# never_back FILE: the phases in FILE never go back (Pending < Submitted < Running < Cancelling < end)
never_back() {
  awk '{ r = ($1 == "Pending") ? 0 : ($1 == "Submitted") ? 1 : ($1 == "Running") ? 2 : ($1 == "Cancelling") ? 3 : ($1 == "") ? -1 : 4
         if (r < 0) next; if (r < last) { print "went back to " $1 " at line " NR; exit 1 } last = r }' "$1"
}
