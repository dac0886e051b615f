#!/usr/bin/env bash
# aj run with _extra.code_upload.strategy: blob, against the API server (the
# AjJob), Azurite (the storage) and the loopback Azure peer (the user's Entra
# token: an unsigned JWT, which Azurite's "basic" OAuth accepts). Checks: the
# archive lands at <upload_dir>/<sha256>.tar.gz with exactly the bytes the
# digest names (sha256sum over a download), the AjJob carries the digest, a
# second run sends nothing, --dry-run sends nothing, every failure names the
# account and container and creates no AjJob, and no token reaches any output.
source "$(dirname "$0")/lib.sh"
# shellcheck source=azure/azurite.sh
source "$it_dir/azure/azurite.sh"
: "${AJ_BIN:?AJ_BIN must name the aj executable}"
if ! command -v npm >/dev/null && [[ ! -d ${AJ_CACHE_DIR:-$HOME/.cache/aj}/azurite ]]; then
  echo "skipped: npm is not installed (Azurite)"
  exit 77
fi

ns=$(new_namespace cb)
work=$(mktemp -d "${TMPDIR:-/tmp}/aj-it-code-blob.XXXXXX")
peer_pid=
cleanup() {
  [[ -n $peer_pid ]] && { kill -TERM "$peer_pid" 2>/dev/null; wait "$peer_pid" 2>/dev/null; }
  azurite_stop
  rm -rf "$work" "$t_out"
}
trap cleanup EXIT

azurite_start || { echo "FAIL - Azurite did not start"; exit 1; }
start_azure_peer "$work"
peer_post config '{"storage_jwt": true}'
# A storage token of the test's own, for creating the container and reading back.
tok=$(curl -sf "$peer/tenant-t/oauth2/v2.0/token" -d grant_type=client_credentials -d client_id=t \
  -d client_secret=s --data-urlencode scope=https://storage.azure.com/.default |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["access_token"])')
storage() { # storage METHOD PATH [curl args...]
  local m=$1 p=$2; shift 2
  curl -sf --cacert "$AJ_AZURITE_CA" -X "$m" -H "Authorization: Bearer $tok" -H "x-ms-version: 2024-11-04" \
    "$AJ_AZURITE_ENDPOINT/$p" "$@"
}
blob_exists() { # blob_exists CONTAINER/NAME
  curl -sf -I -o /dev/null --cacert "$AJ_AZURITE_CA" -H "Authorization: Bearer $tok" \
    -H "x-ms-version: 2024-11-04" "$AJ_AZURITE_ENDPOINT/$1"
}
blob_absent() { ! blob_exists "$1"; }
expect_ok "the container exists" storage PUT "code?restype=container" -H "Content-Length: 0"

export AJ_HOME=$work/home
mkdir -p "$AJ_HOME/template" "$work/code/src"
template() { # template NAME CONTAINER
  cat >"$AJ_HOME/template/$1.yaml" <<YAML
config:
  target: {service: volcano, gpus_per_node: 0, cpus_per_node: 1, memory: 1Gi}
  environment: {image: "busybox:1.36"}
  code: {ignore: ["*.log"]}
  _extra:
    code_upload:
      strategy: blob
      blob: {storage_account: devstoreaccount1, container: $2, upload_dir: team/aj-code}
  jobs: [{name: train, sku: C1, instance_count: 1}]
YAML
}
template job code
template nocontainer missing-container
printf 'print("train")\n' >"$work/code/train.py"
printf 'x = 1\n' >"$work/code/src/model.py"
printf 'noise\n' >"$work/code/debug.log"

# The user: a service principal whose token endpoint is the peer.
user() {
  (cd "$work/code" && env AZURE_TENANT_ID=tenant-u AZURE_CLIENT_ID=user AZURE_CLIENT_SECRET=not-a-real-secret \
    AZURE_AUTHORITY_HOST="$peer" AJ_AZURE_BLOB_ENDPOINT="${AJ_AZURITE_ENDPOINT%/*}/{account}" AJ_AZURE_CA_FILE="$AJ_AZURITE_CA" \
    "$@")
}
log() { cat "$t_out" >>"$work/user.log"; }
field() { k -n "$ns" get ajjob "$1" -o jsonpath="$2"; }
gone() { ! k -n "$ns" get ajjob "$1" >/dev/null 2>&1; }

expect_ok "--dry-run --digest computes the digest" user "$AJ_BIN" run -t job --name dry --namespace "$ns" --dry-run --digest -o json -- python train.py
digest_of() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["spec"]["code"]["digest"])' "$1"; }
dry=$(digest_of "$t_out")
expect_ok "...and sends nothing" blob_absent "code/team/aj-code/$dry.tar.gz"
expect_ok "render --digest shows it in the pods' check of the archive" user "$AJ_BIN" render -t job --name dry --namespace "$ns" --digest -- python train.py
# the pods' script as the kubelet hands it to bash: $$ is $
sed 's/[$][$]/$/g' "$t_out" >"$work/render.yaml"
expect_ok "...as the SHA-256 they compare" grep -qF "if [ \"\$aj_got\" != '$dry' ]" "$work/render.yaml"

expect_ok "aj run uploads the archive and submits" user "$AJ_BIN" run -t job --name cb-1 --namespace "$ns" -- python train.py
log
digest=$(field cb-1 '{.spec.code.digest}')
expect_eq "the AjJob carries the digest --dry-run and render printed" "$dry" echo "$digest"
expect_ok "...saying where the archive went" grep -qF \
  "aj: code ${digest:0:12} uploaded to storage account devstoreaccount1, container code: team/aj-code/$digest.tar.gz" "$work/user.log"
expect_ok "the blob is there" storage GET "code/team/aj-code/$digest.tar.gz" -o "$work/got.tar.gz"
expect_eq "...and its SHA-256 is the digest" "$digest" bash -c "sha256sum '$work/got.tar.gz' | cut -c1-64"
expect_eq "...holding the shipped files (not the ignored log)" "src/ src/model.py train.py" \
  bash -c "tar tzf '$work/got.tar.gz' | sort | tr '\n' ' ' | sed 's/ \$//'"
etag() { curl -sf -I --cacert "$AJ_AZURITE_CA" -H "Authorization: Bearer $tok" -H "x-ms-version: 2024-11-04" \
  "$AJ_AZURITE_ENDPOINT/code/team/aj-code/$digest.tar.gz" | tr -d '\r' | awk -F': ' 'tolower($1) == "etag" {print $2}'; }
before=$(etag)
expect_ok "the same code again" user "$AJ_BIN" run -t job --name cb-2 --namespace "$ns" -- python train.py
log
expect_ok "...is found, not sent" grep -qF \
  "aj: code ${digest:0:12} is already in storage account devstoreaccount1, container code" "$work/user.log"
expect_eq "...the blob untouched" "$before" etag
expect_eq "...and the AjJob names it" "$digest" field cb-2 '{.spec.code.digest}'

expect_fail "a missing container: named, with the service's reason" \
  "cannot upload the code to storage account devstoreaccount1, container missing-container:" \
  user "$AJ_BIN" run -t nocontainer --name cb-3 --namespace "$ns" -- python train.py
log
expect_ok "...ContainerNotFound" grep -qF "ContainerNotFound" "$work/user.log"
expect_ok "...and no AjJob" gone cb-3
peer_post config '{"storage_jwt": false}'
printf 'print("changed")\n' >"$work/code/train.py"
expect_ok "changed code: its digest" user "$AJ_BIN" run -t job --name cb-4 --namespace "$ns" --dry-run --digest -o json -- python train.py
changed=$(digest_of "$t_out")
expect_fail "a token storage refuses: named, nothing created" \
  "cannot upload the code to storage account devstoreaccount1, container code:" \
  user "$AJ_BIN" run -t job --name cb-4 --namespace "$ns" -- python train.py
log
expect_ok "...and no AjJob" gone cb-4
expect_ok "...and no blob" blob_absent "code/team/aj-code/$changed.tar.gz"
expect_fail "no credential at all: named, nothing created" \
  "cannot upload the code to storage account devstoreaccount1, container code:" \
  bash -c "cd '$work/code' && env -u AZURE_CLIENT_SECRET -u AZURE_CLIENT_ID -u AZURE_TENANT_ID \
    -u AZURE_FEDERATED_TOKEN_FILE AZURE_POD_IDENTITY_AUTHORITY_HOST=http://127.0.0.1:9 PATH=/nonexistent \
    AJ_AZURE_BLOB_ENDPOINT='${AJ_AZURITE_ENDPOINT%/*}/{account}' AJ_AZURE_CA_FILE='$AJ_AZURITE_CA' \
    '$AJ_BIN' run -t job --name cb-5 --namespace '$ns' -- python train.py"
log
expect_ok "...and no AjJob" gone cb-5
expect_ok "no token in the user's output or the AjJobs" bash -c \
  "! grep -q 'eyJ' '$work/user.log' && ! '$AJ_KUBECTL' -n '$ns' get ajjobs -o json | grep -q 'eyJ'"

finish
