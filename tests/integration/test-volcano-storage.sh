#!/usr/bin/env bash
# Storage mounts and blob code on Volcano, against the real API server (the controller with
# deploy/rbac.yaml's permissions) and the loopback Azure peer (tests/peers/azure_peer.py) as IMDS
# and Blob Storage. Checks: the Secret <job>-storage owned by the AjJob, holding a blobfuse2
# configuration per storage entry whose SAS verifies against the peer's delegation key (racwdl on
# the container) and the code URL (read on the one blob); the Volcano Job mounting it; renewal once
# 2/3 of a short lifetime has passed; a 403 from Azure retried with an Event; someone else's Secret
# and a namespace without privilege refused; no SAS in any log, Event or status.
source "$(dirname "$0")/lib.sh"
: "${AJ_CONTROLLER_BIN:?AJ_CONTROLLER_BIN must name the aj-controller executable}"

ns=$(new_namespace stor)
sys=$(new_namespace storsys)
work=$(mktemp -d "${TMPDIR:-/tmp}/aj-it-storage.XXXXXX")
pids=()
pid=
stop_controller() {
  [[ -n $pid ]] && { kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
  pid=
}
finish_all() {
  local p
  stop_controller
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  # the log never carries a SAS, so it may be shown
  ((t_fail)) && [[ -f $work/controller.log ]] && tail -n 40 "$work/controller.log"
  rm -rf "$work" "$t_out"
}
trap finish_all EXIT

start_azure_peer "$work"
pids+=("$peer_pid")
keys_minted() { requests POST '^/blob/acct1/$' userdelegationkey; }

controller_identity "$sys" "$work"
start_controller() { # start_controller [args...]: managed identity through the peer's IMDS
  env -u AZURE_CLIENT_ID -u AZURE_TENANT_ID -u AZURE_CLIENT_SECRET -u AZURE_FEDERATED_TOKEN_FILE \
    AZURE_POD_IDENTITY_AUTHORITY_HOST="$peer" PATH="/nonexistent" \
    "$AJ_CONTROLLER_BIN" --kubeconfig "$work/kubeconfig" --namespace "$ns" --health-addr 127.0.0.1 \
    --health-port 0 --lease-namespace "$sys" --log-level debug \
    --port-file "$work/port" --azure-blob-endpoint "$peer/blob/{account}" "$@" \
    >>"$work/controller.log" 2>&1 &
  pid=$!
}
# metric NAME-AND-LABELS: the sum of the matching series on the controller's /metrics
metric() {
  python3 - "$work/port" "$1" <<'PY'
import sys, urllib.request
body = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % open(sys.argv[1]).read().strip(), timeout=10)
print(int(sum(float(l.rsplit(" ", 1)[1]) for l in body.read().decode().splitlines()
              if l.startswith(sys.argv[2]))))
PY
}
message_has() { k -n "$ns" get ajjob "$1" -o jsonpath='{.status.message}' | grep -qF -- "$2"; }
event_has() { k -n "$ns" get events.events.k8s.io -o json | grep -qF -- "$1"; }
field() { k -n "$ns" get "$1" "$2" -o jsonpath="$3"; }
exists() { k -n "$ns" get "$1" "$2" >/dev/null 2>&1; }
ajjob() { # ajjob NAME CONFIG-JSON [DIGEST]
  local code=
  [[ -n ${3:-} ]] && code="  code: {digest: $3}"
  cat <<YAML | k apply -f - >/dev/null
apiVersion: aj.dev/v1alpha1
kind: AjJob
metadata: {name: $1, namespace: $ns}
spec:
  name: template/$1
  template:
    config: $2
  command: [python, train.py]
$code
YAML
}
# check_secret NAME WHAT: verify the Secret's SAS with the peer's key; prints only the verdict
check_secret() {
  k -n "$ns" get secret "$1" -o json | python3 "$work/check.py" "$2"
}
cat >"$work/check.py" <<'PY'
import base64, hashlib, hmac, json, re, sys, time
from urllib.parse import parse_qs, unquote, urlsplit
secret, what = json.load(sys.stdin), sys.argv[1]
key = hashlib.sha256(b"peer-delegation-key").digest()
def verify(query, resource):
    q = {k: v[0] for k, v in parse_qs(query, keep_blank_values=True).items()}
    fields = [q.get("sp", ""), q.get("st", ""), q["se"], resource, q["skoid"], q["sktid"], q["skt"],
              q["ske"], q["sks"], q["skv"], "", "", "", q.get("sip", ""), q["spr"], q["sv"], q["sr"],
              "", "", "", "", "", "", ""]
    want = base64.b64encode(hmac.new(key, "\n".join(fields).encode(), hashlib.sha256).digest()).decode()
    left = time.mktime(time.strptime(q["se"], "%Y-%m-%dT%H:%M:%SZ")) - time.mktime(time.gmtime())
    return q, hmac.compare_digest(want, q["sig"]), left
data = {k: base64.b64decode(v).decode() for k, v in secret.get("data", {}).items()}
if what == "storage":
    cfg = data["data.yaml"]
    sas = re.search(r"^  sas: '([^']*)'$", cfg, re.M).group(1)
    q, ok, left = verify(sas, "/blob/acct1/results")
    good = (ok and q["sp"] == "racwdl" and q["sr"] == "c" and q["sv"] == "2024-11-04" and 0 < left <= 61
            and "  mode: sas\n" in cfg and "  account-name: acct1\n" in cfg and "  container: results\n" in cfg)
elif what == "code":
    url = urlsplit(data["code-url"])
    q, ok, left = verify(url.query, unquote(url.path))
    good = (ok and q["sp"] == "r" and q["sr"] == "b" and 86000 < left <= 86401
            and re.fullmatch(r"/blob/acct1/code/aj-code/[0-9a-f]{64}\.tar\.gz", url.path) is not None)
elif what == "keys":
    print(" ".join(sorted(data)))
    sys.exit(0)
print("valid" if good else "invalid")
PY

storage='{"target": {"service": "volcano", "gpus_per_node": 0, "cpus_per_node": 1, "memory": "1Gi"},
  "environment": {"image": "busybox:1.36"},
  "storage": {"data": {"storage_account_name": "acct1", "container_name": "results", "mount_dir": "/mnt/data"}},
  "jobs": [{"name": "train", "sku": "C1", "instance_count": 1}]}'
digest=$(printf 'archive' | sha256sum | cut -d ' ' -f 1)
blob_code='{"target": {"service": "volcano", "gpus_per_node": 0, "cpus_per_node": 1, "memory": "1Gi"},
  "environment": {"image": "busybox:1.36"},
  "jobs": [{"name": "train", "sku": "C1", "instance_count": 1}],
  "_extra": {"code_upload": {"strategy": "blob", "blob": {"storage_account": "acct1", "container": "code"}}}}'

# --- storage is privileged: refused where the controller does not permit it ---
start_controller --storage-sas-lifetime 60
ajjob refused "$storage"
expect_ok "storage in a namespace not permitted fails" wait_for 30 phase_is refused Failed
expect_ok "...saying why" message_has refused "config.storage.data: storage mounts run privileged pods, not permitted in namespace \"$ns\""
expect_eq "...creating no Secret" "" bash -c "'$AJ_KUBECTL' -n '$ns' get secrets -o name | grep storage || true"
expect_eq "...and asking Azure for nothing" "0" keys_minted
stop_controller

start_controller --storage-sas-lifetime 60 --privileged-namespaces "$ns"

# --- a storage mount: the Secret, then the Volcano Job mounting it ---
ajjob train-1 "$storage"
expect_ok "the AjJob is submitted" wait_for 60 phase_is train-1 Submitted
# First, while the 60 s SAS is young (renewal comes at 40 s, sooner than a slow machine runs all checks):
# One key per Secret write: one, or two when a slow machine reached the 40 s renewal already.
train_writes() { grep -c "\"msg\":\"storage secret written\",\"ajjob\":\"$ns/train-1\"" "$work/controller.log"; }
one_key_per_write() {
  local w1 k w2; w1=$(train_writes); k=$(keys_minted); w2=$(train_writes)
  (( w1 >= 1 )) && { (( k == w1 )) || (( k == w2 )); }
}
expect_ok "one delegation key was asked for per Secret write, with a bearer token" one_key_per_write
expect_eq "the Secret's SAS is signed with the delegation key: racwdl on the container, 60 s" "valid" \
  check_secret train-1-storage storage
uid=$(field ajjob train-1 '{.metadata.uid}')
expect_eq "the Secret is owned by the AjJob" "AjJob/train-1/$uid/true" \
  field secret train-1-storage '{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].uid}/{.metadata.ownerReferences[0].controller}'
expect_eq "...holds one blobfuse2 configuration" "data.yaml" check_secret train-1-storage keys
expect_eq "the Volcano Job mounts the Secret" "train-1-storage" field jobs.batch.volcano.sh train-1 \
  '{.spec.tasks[0].template.spec.volumes[?(@.name=="storage-secret")].secret.secretName}'
expect_eq "...in privileged containers" "true" field jobs.batch.volcano.sh train-1 \
  '{.spec.tasks[0].template.spec.containers[0].securityContext.privileged}'

# --- renewal at 2/3 of the lifetime (40 s) ---
first=$(field secret train-1-storage '{.metadata.annotations.aj\.dev/sas-renew-after}')
rv=$(field secret train-1-storage '{.metadata.resourceVersion}')
renewed() { [[ $(field secret train-1-storage '{.metadata.annotations.aj\.dev/sas-renew-after}') != "$first" ]]; }
expect_ok "the Secret is rewritten once 2/3 of the lifetime has passed" wait_for 75 renewed
expect_ok "...with a new resourceVersion" bash -c "[[ \$('$AJ_KUBECTL' -n '$ns' get secret train-1-storage -o jsonpath='{.metadata.resourceVersion}') != '$rv' ]]"
expect_eq "...and a fresh SAS from a new delegation key" "valid" check_secret train-1-storage storage
expect_ok "...asked for again" bash -c "(( \$($(declare -f requests keys_minted); peer='$peer'; keys_minted) >= 2 ))"

# --- a renewal Azure refuses: an Event, the job still mirrored, another attempt a minute later ---
second=$(field secret train-1-storage '{.metadata.annotations.aj\.dev/sas-renew-after}')
peer_post faults '[{"path": "^/blob/acct1/$", "method": "POST", "times": 1, "status": 403,
  "headers": {"x-ms-error-code": "AuthorizationPermissionMismatch"}}]'
expect_ok "a refused renewal is a Warning Event" wait_for 75 event_has StorageRenewalFailed
expect_ok "...the AjJob is still mirrored" phase_is train-1 Submitted
renewed_again() { [[ $(field secret train-1-storage '{.metadata.annotations.aj\.dev/sas-renew-after}') != "$second" ]]; }
expect_ok "...and the next attempt renews the Secret" wait_for 90 renewed_again
expect_eq "...with valid SAS" "valid" check_secret train-1-storage storage

# --- blob code: a read URL for the one archive ---
ajjob code-1 "$blob_code" "$digest"
expect_ok "a blob-code AjJob is submitted" wait_for 60 phase_is code-1 Submitted
expect_eq "its Secret holds the code URL only" "code-url" check_secret code-1-storage keys
expect_eq "...read-only on the archive, for sas_expiry_days" "valid" check_secret code-1-storage code
expect_eq "the Volcano Job downloads into the work directory" "/aj/code" field jobs.batch.volcano.sh code-1 \
  '{.spec.tasks[0].template.spec.containers[0].workingDir}'
expect_eq "...without privilege" "" field jobs.batch.volcano.sh code-1 \
  '{.spec.tasks[0].template.spec.containers[0].securityContext}'

# --- Azure refuses the key once: an Event names the cause, the retry succeeds ---
peer_post faults '[{"path": "^/blob/acct1/$", "method": "POST", "times": 1, "status": 403,
  "headers": {"x-ms-error-code": "AuthorizationPermissionMismatch", "Content-Type": "application/xml"},
  "body": "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>AuthorizationPermissionMismatch</Code><Message>This request is not authorized to perform this operation using this permission.</Message></Error>"}]'
ajjob denied-1 "$storage"
expect_ok "a 403 from Azure becomes a Warning Event" wait_for 30 event_has "cannot get a user delegation key for storage account acct1 with the controller's identity"
expect_ok "...naming the service's reason" event_has "AuthorizationPermissionMismatch"
expect_ok "...and the retry submits the job" wait_for 60 phase_is denied-1 Submitted

# --- someone else's Secret under the name is never overwritten ---
k -n "$ns" create secret generic other-1-storage --from-literal=x=y >/dev/null
ajjob other-1 "$storage"
expect_ok "a Secret of the same name fails the AjJob" wait_for 30 phase_is other-1 Failed
expect_ok "...saying so" message_has other-1 "a Secret named other-1-storage already exists and does not belong to this AjJob"
expect_eq "...leaving it untouched" "x" bash -c "'$AJ_KUBECTL' -n '$ns' get secret other-1-storage -o go-template='{{range \$k, \$v := .data}}{{\$k}}{{end}}'"
expect_ok "...and creating no Volcano Job" bash -c "! '$AJ_KUBECTL' -n '$ns' get jobs.batch.volcano.sh other-1 2>/dev/null"

# --- a restart: running jobs are settled from the cache and their status, nothing is read again ---
plain='{"target": {"service": "volcano", "gpus_per_node": 0, "cpus_per_node": 1, "memory": "1Gi"},
  "environment": {"image": "busybox:1.36"}, "jobs": [{"name": "train", "sku": "C1", "instance_count": 1}]}'
stop_controller
rm -f "$work/port"
# An hour's SAS from now on, so that no renewal falls due around the restart below.
start_controller --storage-sas-lifetime 3600 --privileged-namespaces "$ns"
for i in $(seq 1 12); do ajjob "plain-$i" "$plain"; done
all_submitted() { local i; for i in $(seq 1 12); do phase_is "plain-$i" Submitted || return 1; done; }
expect_ok "twelve AjJobs without storage are submitted" wait_for 60 all_submitted
renews_late() { # the status says the job's Secret is next renewed in more than 10 minutes
  local t; t=$(field ajjob "$1" '{.status.volcano.storageRenewAfter}')
  [[ -n $t ]] && (( $(date -d "$t" +%s) > $(date +%s) + 600 ))
}
long_lived() { renews_late train-1 && renews_late code-1 && renews_late denied-1; }
expect_ok "the storage jobs' Secrets are renewed with the longer SAS; their status says when next" \
  wait_for 90 long_lived
expect_eq "...the time the Secret's annotation names" \
  "$(field secret train-1-storage '{.metadata.annotations.aj\.dev/sas-renew-after}')" \
  field ajjob train-1 '{.status.volcano.storageRenewAfter}'
expect_eq "...and a job without storage has none" "" field ajjob plain-1 '{.status.volcano.storageRenewAfter}'
stop_controller
rm -f "$work/port"
before=$(field secret train-1-storage '{.metadata.annotations.aj\.dev/sas-renew-after}')
minted=$(keys_minted)
start_controller --storage-sas-lifetime 3600 --privileged-namespaces "$ns"
# 15 running AjJobs: the twelve, train-1, code-1, denied-1 (the Failed ones are skipped)
settled() { [[ -s $work/port ]] && (( $(metric 'controller_runtime_reconcile_total') >= 15 )) &&
  (( $(metric 'workqueue_depth') == 0 )); }
expect_ok "the restarted controller reconciles every running AjJob" wait_for 60 settled
expect_eq "...rewrites no Secret that is not due" "$before" \
  field secret train-1-storage '{.metadata.annotations.aj\.dev/sas-renew-after}'
expect_eq "...asks Azure for no key" "$minted" keys_minted
gets=$(metric 'rest_client_requests_total{code="200",method="GET"}')
# Four lists (AjJobs, AjTemplates and what each runner owns: Volcano Jobs, batch/v1 Jobs), and for
# each of the 15 AjJobs, all Submitted here (no Volcano runs their jobs), one look at why it waits
# (docs/api.md: a job Submitted for over 5 s is asked about at most every 15 s).
expect_ok "...and reads nothing but its four lists and why each job waits ($gets GETs)" bash -c "(( $gets <= 4 + 15 ))"
expect_eq "...leaving the twelve Submitted" "" bash -c \
  "for i in \$(seq 1 12); do [[ \$('$AJ_KUBECTL' -n '$ns' get ajjob plain-\$i -o jsonpath='{.status.phase}') == Submitted ]] || echo plain-\$i; done"

# --- no SAS anywhere but in the Secrets ---
expect_ok "no SAS in AjJobs or Events" bash -c "! '$AJ_KUBECTL' -n '$ns' get ajjob,events.events.k8s.io -o json | grep -q 'sig='"
expect_ok "no SAS or token in the controller's log" bash -c "! grep -qE 'sig=|skoid=|eyJ0' '$work/controller.log'"
stop_controller
finish
