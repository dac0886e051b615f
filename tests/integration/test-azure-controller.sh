#!/usr/bin/env bash
# aj-controller forwarding aml and sing AjJobs to Azure ML, against the real
# API server (with the permissions of deploy/rbac.yaml) and the loopback Azure
# peer (tests/peers/azure_peer.py) for IMDS and ARM. Checks: one PUT per
# AjJob, also when the reply to it is lost; status mirrored from the job;
# Singularity auto-selection; the namespace rules; cancel and finalizer on
# delete; code uploaded by aj run, registered once and referenced; no token
# ever in the controller's or the user's output; every body the controller
# sent and every answer it read passes azure-ai-ml's REST models
# (tests/azure-models/check_models.py).
source "$(dirname "$0")/lib.sh"
: "${AJ_CONTROLLER_BIN:?AJ_CONTROLLER_BIN must name the aj-controller executable}"
: "${AJ_BIN:?AJ_BIN must name the aj executable}"

ns=$(new_namespace az)
sys=$(new_namespace azsys)
work=$(mktemp -d "${TMPDIR:-/tmp}/aj-it-azure.XXXXXX")
sub=00000000-1111-2222-3333-444444444444
ws_id=/subscriptions/$sub/resourceGroups/ml-rg/providers/Microsoft.MachineLearningServices/workspaces/ws-main

pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  if ((t_fail)); then
    for f in "$work"/*.log; do [[ -f $f ]] && { echo "--- $f"; tail -n 30 "$f"; }; done
  fi
  rm -rf "$work" "$t_out"
}
trap cleanup EXIT

# --- the Azure peer, recording every ARM exchange for the model check ---
mkdir -p "$work/records"
AJ_AZURE_PEER_RECORD=$work/records start_azure_peer "$work"
pids+=("$peer_pid")
at_least() { (( $(requests "$2" "$3") >= $1 )); }   # at_least N METHOD PATH-REGEX
peer_jobs() { curl -sf "$peer/_peer/jobs" | python3 -c 'import json, sys; print(" ".join(json.load(sys.stdin)))'; }
peer_job() { # peer_job NAME FIELD-PATH: a value of the job as last PUT
  python3 - "$peer" "$1" "$2" <<'PY'
import json, sys, urllib.request
peer, name, path = sys.argv[1:]
reqs = json.load(urllib.request.urlopen(peer + "/_peer/requests"))
puts = [json.loads(r["body"]) for r in reqs if r["method"] == "PUT" and r["path"].endswith("/jobs/" + name)]
v = puts[-1]
for k in path.split("."):
    v = v[k]
print(v if not isinstance(v, (dict, list)) else json.dumps(v, sort_keys=True))
PY
}
# Jobs stay Running until the test moves them (the first two GETs walk NotStarted, Queued).
peer_post config '{"status_sequence": ["NotStarted", "Queued", "Running"],
  "subscriptions": [{"subscriptionId": "'$sub'", "state": "Enabled"}],
  "vcs": [
    {"subscriptionId": "'$sub'", "resourceGroup": "sing-rg", "name": "vc-small",
     "resource": {"location": "westus2", "properties": {"managed": {"quotas": {"westus2": {"limits": [
       {"id": "ND_A100_v4", "slaTier": "Premium", "limit": 32, "used": 16}]}}}}}},
    {"subscriptionId": "'$sub'", "resourceGroup": "sing-rg", "name": "vc-big",
     "resource": {"location": "westus2", "properties": {"managed": {"quotas": {"westus2": {"limits": [
       {"id": "ND_A100_v4", "slaTier": "Premium", "limit": 128, "used": 16}]}}}}}},
    {"subscriptionId": "'$sub'", "resourceGroup": "sing-rg", "name": "vc-forbidden",
     "resource": {"location": "westus2", "properties": {"managed": {"quotas": {"westus2": {"limits": [
       {"id": "ND_A100_v4", "slaTier": "Premium", "limit": 1024, "used": 0}]}}}}}}]}'

# --- the controller's identity: deploy/rbac.yaml in a namespace of its own ---
awk -v sys="$sys" '
  /^---/ { kind = "" }
  /^kind: / { kind = $2 }
  (kind == "ClusterRole" || kind == "ClusterRoleBinding") && $0 == "  name: aj-controller" {
    print "  name: aj-controller-" sys; next }
  { sub(/namespace: aj-system/, "namespace: " sys); print }
' "$repo_root/deploy/rbac.yaml" >"$work/rbac.yaml"
expect_ok "install the controller's RBAC" k apply -f "$work/rbac.yaml"
token=$(k -n "$sys" create token aj-controller --duration=2h) || { echo "FAIL - create token"; exit 1; }
kc=$work/kubeconfig
KUBECONFIG=$kc "$AJ_KUBECTL" config set-cluster cp --server="$AJ_KUBE_SERVER" \
  --certificate-authority="$AJ_KUBE_CA" --embed-certs >/dev/null
KUBECONFIG=$kc "$AJ_KUBECTL" config set-credentials sa --token="$token" >/dev/null
KUBECONFIG=$kc "$AJ_KUBECTL" config set-context sa --cluster=cp --user=sa --namespace="$sys" >/dev/null
KUBECONFIG=$kc "$AJ_KUBECTL" config use-context sa >/dev/null

# Managed identity through IMDS, which the peer plays.
env -u AZURE_CLIENT_ID -u AZURE_TENANT_ID -u AZURE_CLIENT_SECRET -u AZURE_FEDERATED_TOKEN_FILE \
  AZURE_POD_IDENTITY_AUTHORITY_HOST="$peer" PATH="/nonexistent" \
  "$AJ_CONTROLLER_BIN" --kubeconfig "$kc" --namespace "$ns" --health-addr 127.0.0.1 --health-port 0 \
  --port-file "$work/ctl.port" --lease-namespace "$sys" --log-level debug \
  --azure-workspace "$sub/ml-rg/ws-main" --azure-arm-endpoint "$peer" --azure-poll 1 \
  --azure-allow "$ns=workspace:*/ml-rg/ws-main,vc:$sub/sing-rg/vc-small,vc:$sub/sing-rg/vc-big" \
  >"$work/controller.log" 2>&1 &
pids+=($!)

wait_for() {
  local t=$1 i; shift
  for ((i = 0; i < t * 5; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  "$@"
}
phase_is() { [[ $(k -n "$ns" get ajjob "$1" -o jsonpath='{.status.phase}') == "$2" ]]; }
# Submitted, or already further along: polls come every second.
submitted() { [[ $(k -n "$ns" get ajjob "$1" -o jsonpath='{.status.phase}') == @(Submitted|Running) ]]; }
message_has() { k -n "$ns" get ajjob "$1" -o jsonpath='{.status.message}' | grep -qF -- "$2"; }
field() { k -n "$ns" get ajjob "$1" -o jsonpath="$2"; }
gone() { ! k -n "$ns" get ajjob "$1" >/dev/null 2>&1; }
ajjob() { # ajjob NAME CONFIG-JSON
  cat <<YAML | k apply -f - >/dev/null
apiVersion: aj.dev/v1alpha1
kind: AjJob
metadata: {name: $1, namespace: $ns}
spec:
  name: template/$1
  template:
    config: $2
  command: [python, train.py]
YAML
}
aml_config='{"target": {"service": "aml", "name": "gpu-cluster", "gpus_per_node": 1},
  "environment": {"image": "train:1.0", "registry": "registry.example.com/team"},
  "storage": {"out": {"storage_account_name": "acct1", "container_name": "results", "mount_dir": "/mnt/out"}},
  "jobs": [{"name": "train", "sku": "G1", "instance_count": 2, "tags": ["team:vision"]}]}'

# --- aml: one PUT, the job's state in the status ---
peer_post faults '[{"path": "/jobs/k8s-", "method": "PUT", "lose_reply": true}]'
ajjob train-1 "$aml_config"
expect_ok "the AjJob is submitted" wait_for 60 submitted train-1
uid=$(field train-1 '{.metadata.uid}')
jobname=$(field train-1 '{.status.azure.jobName}')
expect_ok "the job name is derived from namespace and name" bash -c "[[ '$jobname' == k8s-$ns-train-1-???????? ]]"
expect_eq "one job created although the first reply was lost" "$jobname" peer_jobs
expect_eq "two PUTs (the retry found the job), one job" "2" requests PUT "/jobs/$jobname\$"
expect_eq "compute is the workspace's cluster" "$ws_id/computes/gpu-cluster" peer_job "$jobname" properties.computeId
expect_eq "the image is registered with the registry prefix, version from the image" \
  "$ws_id/environments/k8s-$ns/versions/$(printf %s registry.example.com/team/train:1.0 | sha256sum | cut -c1-16)" \
  peer_job "$jobname" properties.environmentId
expect_eq "PyTorch distribution across 2 nodes" '{"distributionType": "PyTorch", "processCountPerInstance": 1}' \
  peer_job "$jobname" properties.distribution
expect_eq "managed identity" "Managed" peer_job "$jobname" properties.identity.identityType
expect_eq "tags name the AjJob and its task" "{\"k8s-name\": \"train-1\", \"k8s-namespace\": \"$ns\", \"k8s-task\": \"train\", \"k8s-uid\": \"$uid\", \"team\": \"vision\"}" \
  peer_job "$jobname" properties.tags
expect_ok "Running is mirrored" wait_for 30 phase_is train-1 Running
expect_eq "status.tasks: the one task, both instances running" "train 2 0 2" \
  field train-1 '{.status.tasks[0].name} {.status.tasks[0].replicas} {.status.tasks[0].pending} {.status.tasks[0].running}'
expect_eq "...summed up" "2/2 running" field train-1 '{.status.tasksSummary}'
expect_eq "portal URL in the status" "https://ml.azure.com/runs/$jobname?wsid=$ws_id" field train-1 '{.status.azure.portalUrl}'
expect_eq "workspace in the status" "$ws_id" field train-1 '{.status.azure.workspace}'
expect_eq "no virtual cluster for an AML compute" "" field train-1 '{.status.azure.virtualCluster}'
expect_eq "finalizer set" "aj.dev/azure-job" field train-1 '{.metadata.finalizers[0]}'
expect_eq "the environment version was registered once" "1" requests PUT "/environments/k8s-$ns/versions/"
expect_eq "the storage mount's datastore was created once" "1" requests PUT "/workspaces/ws-main/datastores/aj_out\$"
expect_eq "...and the job writes to it" "azureml://datastores/aj_out/paths/train-1/" peer_job "$jobname" properties.outputs.out.uri
# Every token issued so far stops working: the controller gets a new one and goes on.
peer_post revoke ''
peer_post job-status "{\"name\": \"$jobname\", \"status\": \"Completed\"}"
expect_ok "Completed becomes Succeeded" wait_for 30 phase_is train-1 Succeeded
expect_eq "...both instances succeeded" "2/2 succeeded" field train-1 '{.status.tasksSummary}'
expect_eq "still one PUT of that job after all the polls" "2" requests PUT "/jobs/$jobname\$"
expect_ok "a new token came from IMDS after the revocation" at_least 2 GET "^/metadata/identity/oauth2/token\$"

# --- deleting a running job: cancel, then the finalizer goes ---
ajjob train-2 "$aml_config"
expect_ok "second job Running" wait_for 60 phase_is train-2 Running
job2=$(field train-2 '{.status.azure.jobName}')
k -n "$ns" delete ajjob train-2 --wait=false >/dev/null
expect_ok "cancel POSTed" wait_for 30 at_least 1 POST "/jobs/$job2/cancel\$"
expect_ok "the AjJob goes once Azure reports Canceled" wait_for 30 gone train-2
expect_eq "one cancel" "1" requests POST "/jobs/$job2/cancel\$"

# --- cancel by annotation ---
ajjob train-3 "$aml_config"
expect_ok "third job Running" wait_for 60 phase_is train-3 Running
k -n "$ns" annotate ajjob train-3 aj.dev/cancel=true >/dev/null
expect_ok "cancelled by annotation" wait_for 30 phase_is train-3 Cancelled

# --- sing: auto-selection among the allowed VCs ---
ajjob sing-1 '{"target": {"service": "sing", "gpus_per_node": 8},
  "environment": {"image": "amlt-sing/acpt-torch2.7"},
  "jobs": [{"name": "train", "sku": "{nodes}x80G{processes}-A100", "instance_count": 2, "sla_tier": "Premium"}]}'
expect_ok "the sing AjJob is submitted" wait_for 60 phase_is sing-1 Running
expect_eq "the allowed VC with the most quota left" "vc-big" field sing-1 '{.status.azure.virtualCluster}'
expect_eq "tier and instance type in the status" "Premium/ND96amrs_A100_v4" field sing-1 '{.status.azure.tier}/{.status.azure.instanceType}'
sjob=$(field sing-1 '{.status.azure.jobName}')
expect_eq "computeId is the VC" "/subscriptions/$sub/resourceGroups/sing-rg/providers/Microsoft.MachineLearningServices/virtualclusters/vc-big" \
  peer_job "$sjob" properties.computeId
expect_eq "the curated image runs through imageVersion" "acpt-torch2.7" \
  peer_job "$sjob" properties.resources.properties.AISuperComputer.imageVersion

# --- the namespace rules ---
ajjob other-ws '{"target": {"service": "aml", "name": "c", "workspace_name": "ws-other", "gpus_per_node": 1},
  "environment": {"image": "i:1"}, "jobs": [{"name": "t", "sku": "G1", "instance_count": 1}]}'
expect_ok "another workspace is refused" wait_for 30 phase_is other-ws Failed
expect_ok "...saying why" message_has other-ws "namespace $ns may not use workspace $sub/ml-rg/ws-other"
ajjob vc-denied '{"target": {"service": "sing", "name": "vc-forbidden", "resource_group": "sing-rg", "gpus_per_node": 8},
  "environment": {"image": "i:1"}, "jobs": [{"name": "t", "sku": "80G8-A100", "instance_count": 1}]}'
expect_ok "a VC outside the rules is refused" wait_for 30 phase_is vc-denied Failed
expect_ok "...saying why" message_has vc-denied "namespace $ns may not use virtual cluster $sub/sing-rg/vc-forbidden"
expect_eq "nothing was PUT for refused AjJobs" "0" requests PUT "/jobs/k8s-$ns-(other-ws|vc-denied)-"

# --- code: aj run uploads the files, the controller registers the version ---
export AJ_HOME=$work/home
mkdir -p "$AJ_HOME/template" "$work/code/src"
cat >"$AJ_HOME/template/coded.yaml" <<'YAML'
config:
  target: {service: aml, name: gpu-cluster, gpus_per_node: 1}
  environment: {image: "train:1.0"}
  code: {ignore: ["*.log"]}
  jobs: [{name: train, sku: G1, instance_count: 1}]
YAML
printf 'print("train")\n' >"$work/code/train.py"
printf 'x = 1\n' >"$work/code/src/model.py"
printf 'noise\n' >"$work/code/run.log"
ln -s train.py "$work/code/link.py"
# Enough files for every sender to take some.
mkdir -p "$work/code/src/gen"
for i in 0 1 2 3 4 5 6 7 8 9; do printf 'v = %d\n' "$i" >"$work/code/src/gen/m$i.py"; done
# The user's credential: a service principal whose token endpoint is the peer.
aj_user() {
  (cd "$work/code" && env AZURE_TENANT_ID=tenant-u AZURE_CLIENT_ID=user AZURE_CLIENT_SECRET=not-a-real-secret \
    AZURE_AUTHORITY_HOST="$peer" AJ_AZURE_ARM_ENDPOINT="$peer" AJ_AZURE_BLOB_ENDPOINT="$peer/blob/{account}" \
    AJ_AZURE_WORKSPACE="$sub/ml-rg/ws-main" "$@")
}
blob_puts() { requests PUT "^/blob/wsstore/azureml-blobstore-0000/aj-code/"; }
peer_blob() { curl -sf "$peer/_peer/blob/wsstore/azureml-blobstore-0000/aj-code/$1"; }
expect_ok "aj run uploads the code and submits" aj_user "$AJ_BIN" run -t coded --name code-1 --namespace "$ns" -- python train.py
cat "$t_out" >>"$work/user.log"
digest=$(field code-1 '{.spec.code.digest}')
expect_ok "...saying what it sent: twelve files (the log is ignored, the link left out)" \
  grep -qE "^aj: code ${digest:0:12} uploaded: 12 files, 81 bytes \(symbolic links left out" "$work/user.log"
expect_eq "the AjJob names the datastore folder" "azureml://datastores/workspaceblobstore/paths/aj-code/$digest/" \
  field code-1 '{.spec.code.uri}'
expect_eq "the files are in the default datastore under the digest" 'print("train")' peer_blob "$digest/train.py"
expect_eq "...with their directories" "x = 1" peer_blob "$digest/src/model.py"
expect_eq "...every one of them" "v = 0" peer_blob "$digest/src/gen/m0.py"
expect_eq "...to the last" "v = 9" peer_blob "$digest/src/gen/m9.py"
expect_eq "...each sent once" "12" requests PUT "^/blob/wsstore/azureml-blobstore-0000/aj-code/$digest/"
expect_ok "...but not the ignored file" bash -c "! curl -sf '$peer/_peer/blob/wsstore/azureml-blobstore-0000/aj-code/$digest/run.log'"
expect_ok "...nor the symbolic link" bash -c "! curl -sf '$peer/_peer/blob/wsstore/azureml-blobstore-0000/aj-code/$digest/link.py'"
expect_eq "the marker, written last, records the upload" "{\"sha256\":\"$digest\",\"files\":12,\"bytes\":81}" \
  peer_blob "$digest.complete"
expect_ok "the coded AjJob is submitted" wait_for 60 submitted code-1
cjob=$(field code-1 '{.status.azure.jobName}')
expect_eq "the code version is the digest, registered once on the folder" "1" requests PUT "/codes/aj-code/versions/$digest\$"
expect_eq "...whose codeUri is the folder's blob URL" \
  "https://wsstore.blob.core.windows.net/azureml-blobstore-0000/aj-code/$digest" \
  bash -c "curl -sf '$peer/_peer/requests' | python3 -c '
import json, sys
print([json.loads(r[\"body\"]) for r in json.load(sys.stdin) if r[\"method\"] == \"PUT\" and r[\"path\"].endswith(\"/codes/aj-code/versions/$digest\")][0][\"properties\"][\"codeUri\"])'"
expect_eq "the job's codeId is the version's ARM id" "$ws_id/codes/aj-code/versions/$digest" peer_job "$cjob" properties.codeId
puts=$(blob_puts)
expect_ok "the same code again: nothing is sent" aj_user "$AJ_BIN" run -t coded --name code-2 --namespace "$ns" -- python train.py
cat "$t_out" >>"$work/user.log"
expect_ok "...saying it is already there" grep -qF "aj: code ${digest:0:12} is already in datastore workspaceblobstore of workspace ws-main" "$work/user.log"
expect_eq "...no blob written" "$puts" blob_puts
expect_ok "the second job is submitted" wait_for 60 submitted code-2
expect_eq "...on the same code version, not registered again" "1" requests PUT "/codes/aj-code/versions/$digest\$"
expect_eq "...which it references" "$ws_id/codes/aj-code/versions/$digest" \
  peer_job "$(field code-2 '{.status.azure.jobName}')" properties.codeId
printf 'print("changed")\n' >"$work/code/train.py"
peer_post faults '[{"path": "^/blob/wsstore/", "method": "HEAD", "status": 403,
  "headers": {"x-ms-error-code": "AuthorizationPermissionMismatch"}}]'
expect_fail "storage refusing the user: a clear error naming account and container" \
  "cannot upload the code to datastore workspaceblobstore of workspace ws-main (storage account wsstore, container azureml-blobstore-0000):" \
  aj_user "$AJ_BIN" run -t coded --name code-3 --namespace "$ns" -- python train.py
cat "$t_out" >>"$work/user.log"
expect_ok "...with the service's reason" grep -qF "HTTP 403 AuthorizationPermissionMismatch" "$work/user.log"
expect_ok "...and no AjJob" gone code-3
expect_eq "...and nothing written" "$puts" blob_puts
expect_fail "without AJ_AZURE_WORKSPACE: said what is missing" "but no workspace is named: set target.subscription_id, resource_group and workspace_name in the template, or AJ_AZURE_WORKSPACE=" \
  aj_user env -u AJ_AZURE_WORKSPACE "$AJ_BIN" run -t coded --name code-4 --namespace "$ns" -- python train.py
cat "$t_out" >>"$work/user.log"
expect_ok "...and no AjJob" gone code-4
# The template may name the workspace itself: subscription, group and name together.
sed "s|target: {service: aml,|target: {service: aml, subscription_id: $sub, resource_group: ml-rg, workspace_name: ws-main,|" \
  "$AJ_HOME/template/coded.yaml" >"$AJ_HOME/template/coded-ws.yaml"
expect_ok "without AJ_AZURE_WORKSPACE, the template's workspace is used" \
  aj_user env -u AJ_AZURE_WORKSPACE "$AJ_BIN" run -t coded-ws --name code-6 --namespace "$ns" -- python train.py
expect_ok "...and the AjJob is created" k -n "$ns" get ajjob code-6
expect_fail "no credential at all: said where the code was to go" \
  "cannot find where the code goes: the default datastore of workspace $sub/ml-rg/ws-main" \
  bash -c "cd '$work/code' && env -u AZURE_CLIENT_SECRET -u AZURE_CLIENT_ID -u AZURE_TENANT_ID \
    -u AZURE_FEDERATED_TOKEN_FILE AZURE_POD_IDENTITY_AUTHORITY_HOST=http://127.0.0.1:9 PATH=/nonexistent \
    AJ_AZURE_ARM_ENDPOINT='$peer' AJ_AZURE_WORKSPACE='$sub/ml-rg/ws-main' \
    '$AJ_BIN' run -t coded --name code-5 --namespace '$ns' -- python train.py"
cat "$t_out" >>"$work/user.log"
expect_ok "...and no AjJob" gone code-5
# An AjJob whose folder is not its digest's is refused before anything is registered.
cat <<YAML | k apply -f - >/dev/null
apiVersion: aj.dev/v1alpha1
kind: AjJob
metadata: {name: code-bad, namespace: $ns}
spec:
  name: template/coded
  template:
    config: {"target": {"service": "aml", "name": "c", "gpus_per_node": 1}, "environment": {"image": "i:1"},
             "jobs": [{"name": "t", "sku": "G1", "instance_count": 1}]}
  command: [python, train.py]
  code: {digest: "$(printf 'a%.0s' $(seq 64))", uri: "azureml://datastores/workspaceblobstore/paths/aj-code/$digest/"}
YAML
expect_ok "a code folder that does not match the digest fails the AjJob" wait_for 30 phase_is code-bad Failed
expect_ok "...saying why" message_has code-bad "spec.code.uri"
expect_eq "...with nothing PUT for it" "0" requests PUT "/codes/aj-code/versions/aaaa"
expect_ok "the user's output holds no token" bash -c "! grep -q 'eyJ0' '$work/user.log'"

expect_ok "no token in any AjJob or Event" bash -c "! '$AJ_KUBECTL' -n '$ns' get ajjob,events.events.k8s.io -o json | grep -q 'eyJ0'"

# --- delete the finished and refused ones: nothing blocks ---
k -n "$ns" delete ajjob train-1 train-3 sing-1 other-ws vc-denied code-1 code-2 code-bad --wait=false >/dev/null
for j in train-1 train-3 sing-1 other-ws vc-denied code-1 code-2 code-bad; do
  expect_ok "$j is deleted" wait_for 60 gone "$j"
done

# --- secrets ---
expect_ok "the controller's log holds no token" bash -c "! grep -q 'eyJ0' '$work/controller.log'"
expect_ok "the controller logged at debug (so the check above saw the Azure traffic)" \
  grep -q 'x-ms-request-id' "$work/controller.log"

# --- the bodies of the real forwarding path, by Microsoft's models ---
if py=$("$repo_root/tests/azure-models/setup-venv.sh" --no-install | tail -n 1); then
  expect_ok "every job, environment, code and datastore body and answer passes azure-ai-ml's models" \
    "$py" "$repo_root/tests/azure-models/check_models.py" --min 20 "$work/records"
  sed -n '/^# /p; $p' "$t_out"
else
  fail "no venv for the model check (run tests/azure-models/setup-venv.sh)"
fi

finish
