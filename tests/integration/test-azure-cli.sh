#!/usr/bin/env bash
# aj quota list, aj sku list and aj image list against the loopback Azure
# peer (tests/peers/azure_peer.py): tables and JSON computed by hand from
# the quotas set up below, the filters, the error paths, and no token in any
# output. Needs no cluster. Usage: test-azure-cli.sh AJ_BINARY
set -uo pipefail
aj=${1:?usage: test-azure-cli.sh AJ_BINARY}
repo_root=$(cd "$(dirname "$0")/../.." && pwd)
source "$repo_root/tests/lib/expect.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/aj-azure-cli.XXXXXX")
peer_pid=

cleanup() {
  [[ -n $peer_pid ]] && { kill -TERM "$peer_pid" 2>/dev/null; wait "$peer_pid" 2>/dev/null; }
  rm -rf "$work" "$t_out"
}
trap cleanup EXIT
# check NAME WANT-FILE cmd...: the command succeeds and prints exactly WANT-FILE's content
check() {
  local name=$1 want=$2; shift 2
  "$@" >"$t_out" 2>"$work/err"; local rc=$?
  cat "$t_out" "$work/err" >>"$work/all"
  if ((rc == 0)) && diff -u "$want" "$t_out" >"$work/diff"; then ok "$name"
  else cat "$work/err" "$work/diff" >>"$t_out"; fail "$name"; fi
}
# check_fail NAME STATUS MESSAGE cmd...: exits with STATUS, stderr holds MESSAGE
check_fail() {
  local name=$1 status=$2 msg=$3 rc; shift 3
  "$@" >"$t_out" 2>"$work/err"; rc=$?
  cat "$t_out" "$work/err" >>"$work/all"
  if [[ $rc == "$status" ]] && grep -qF -- "$msg" "$work/err"; then ok "$name"
  else { echo "(exit $rc, want $status and: $msg)"; cat "$work/err"; } >>"$t_out"; fail "$name"; fi
}

python3 "$repo_root/tests/peers/azure_peer.py" --port-file "$work/port" >"$work/peer.log" 2>&1 &
peer_pid=$!
for ((i = 0; i < 100; i++)); do [[ -s $work/port ]] && break; sleep 0.1; done
peer=http://127.0.0.1:$(cat "$work/port")
control() { curl -sf -X POST -H 'Content-Type: application/json' "$peer/_peer/$1" -d "${2:-}" >/dev/null; }

# A service principal whose token endpoint and ARM are the peer's.
export AZURE_TENANT_ID=tenant-1 AZURE_CLIENT_ID=client-1 AZURE_CLIENT_SECRET=not-a-real-secret
export AZURE_AUTHORITY_HOST=$peer AJ_AZURE_ARM_ENDPOINT=$peer
unset AZURE_FEDERATED_TOKEN_FILE

control config '{
  "subscriptions": [{"subscriptionId": "s1", "state": "Enabled"}, {"subscriptionId": "s2", "state": "Enabled"}],
  "vcs": [
    {"subscriptionId": "s1", "resourceGroup": "rg1", "name": "vc-a", "resource": {"location": "westus2",
     "properties": {"managed": {
       "defaultGroupPolicyOverallQuotas": {"limits": [{"id": "ND_A100_v4", "slaTier": null, "limit": 128, "used": 64}]},
       "quotas": {"westus2": {"limits": [
         {"id": "ND_A100_v4", "slaTier": "Premium", "limit": 64, "used": 32},
         {"id": "ND_A100_v4", "slaTier": "Standard", "limit": 32, "used": 0},
         {"id": "Dv3", "slaTier": null, "limit": 0, "used": 0}]}}}}}},
    {"subscriptionId": "s1", "resourceGroup": "rg2", "name": "vc-b", "resource": {"location": "eastus",
     "properties": {"managed": {"quotas": {"eastus": {"limits": [
         {"id": "ND_H100_v5", "slaTier": "Standard", "limit": 16, "used": 8}]}}}}}}],
  "images": {"s2": [
    {"name": "i1", "properties": {"names": ["acpt-torch2.7.1", "acpt-torch2.7.1-py3.10-cuda12.6:latest"],
                                   "aliases": ["acpt-torch2.7", "torch-latest"]}},
    {"name": "i2", "names": ["rocm6.2-py3.10:latest"], "aliases": []}]}}'

# --- aj quota list ---
cat >"$work/want" <<'EOF'
VIRTUAL CLUSTER   LOCATION   SERIES       ACCELERATOR   PREMIUM   STANDARD   BASIC   USER
vc-a              westus2    ND_A100_v4   A100 80GB     32/64     0/32       -       64/128
vc-b              eastus     ND_H100_v5   H100 80GB     -         8/16       -       -
EOF
check "quota list: used/limit per tier and the user cap, series without quota left out" "$work/want" \
  "$aj" quota list
cat >"$work/want" <<'EOF'
VIRTUAL CLUSTER   LOCATION   SERIES       ACCELERATOR   PREMIUM   STANDARD   BASIC   USER
s1/rg1/vc-a       westus2    Dv3          CPU           -         -          0/0     -
s1/rg1/vc-a       westus2    ND_A100_v4   A100 80GB     32/64     0/32       -       64/128
s1/rg2/vc-b       eastus     ND_H100_v5   H100 80GB     -         8/16       -       -
EOF
check "quota list --full: every series, full coordinates" "$work/want" "$aj" quota list --full
cat >"$work/want" <<'EOF'
[{"name": "vc-a", "series": ["ND_A100_v4"], "premium": [64, 32], "user": [128, 64]}, {"name": "vc-b", "series": ["ND_H100_v5"], "premium": null, "user": null}]
EOF
check "quota list -o json" "$work/want" bash -c "'$aj' quota list -o json | python3 -c '
import json, sys
out = []
for vc in json.load(sys.stdin):
    q = vc[\"quotas\"]
    p = q[0][\"tiers\"].get(\"Premium\")
    u = q[0].get(\"user\")
    out.append({\"name\": vc[\"name\"], \"series\": [x[\"series\"] for x in q],
                \"premium\": p and [p[\"limit\"], p[\"used\"]], \"user\": u and [u[\"limit\"], u[\"used\"]]})
print(json.dumps(out))'"

# --- aj sku list ---
cat >"$work/want" <<'EOF'
VIRTUAL CLUSTER   SKU                INSTANCE TYPE                  UNITS   PREMIUM FREE   STANDARD FREE   BASIC FREE
vc-a              80G1-A100-NvLink   Singularity.ND12am_A100_v4     1       32             32              -
vc-a              80G2-A100-NvLink   Singularity.ND24am_A100_v4     2       32             32              -
vc-a              80G4-A100-NvLink   Singularity.ND48am_A100_v4     4       32             32              -
vc-a              80G8-A100-NvLink   Singularity.ND96amrs_A100_v4   8       32             32              -
vc-b              80G1-H100-NvLink   Singularity.ND12_H100_v5       1       -              8               -
vc-b              80G2-H100-NvLink   Singularity.ND24_H100_v5       2       -              8               -
vc-b              80G4-H100-NvLink   Singularity.ND48_H100_v5       4       -              8               -
vc-b              80G8-H100-NvLink   Singularity.ND96r_H100_v5      8       -              8               -
EOF
check "sku list: instance types with their shorthand and free units" "$work/want" "$aj" sku list
cat >"$work/want" <<'EOF'
vc-a 80G8-A100-NvLink ND96amrs_A100_v4 8 {"Premium": 32, "Standard": 32}
EOF
check "sku list -o json" "$work/want" bash -c "'$aj' sku list -o json | python3 -c '
import json, sys
for r in json.load(sys.stdin):
    if r[\"instanceType\"] == \"ND96amrs_A100_v4\":
        print(r[\"virtualCluster\"], r[\"sku\"], r[\"instanceType\"], r[\"unitsPerInstance\"], json.dumps(r[\"free\"]))'"

# --- aj image list ---
# the first subscription (s1) has no images; s2's are listed
printf '%-48s   %s\n' IMAGE ALIASES amlt-sing/acpt-torch2.7.1-py3.10-cuda12.6:latest "acpt-torch2.7, torch-latest" \
  amlt-sing/rocm6.2-py3.10:latest - >"$work/want"
check "image list: names with a tag, from the first subscription that has images" "$work/want" "$aj" image list
printf '%-48s   %s\n' IMAGE ALIASES amlt-sing/acpt-torch2.7.1-py3.10-cuda12.6:latest "acpt-torch2.7, torch-latest" \
  >"$work/want"
check "image list FILTER matches an alias, case-insensitively" "$work/want" "$aj" image list TORCH-LATEST
cat >"$work/want" <<'EOF'
[{"aliases": [], "name": "rocm6.2-py3.10:latest"}]
EOF
check "image list -o json FILTER" "$work/want" bash -c "'$aj' image list -o json rocm | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin), sort_keys=True))'"

# --- errors ---
check_fail "an unknown option is a usage error" 2 "aj quota list: unknown option '--all'" "$aj" quota list --all
check_fail "sku list takes no argument" 2 "aj sku list: unexpected argument 'x'" "$aj" sku list x
control faults '[{"path": "/virtualclusters/vc-b", "status": 403, "body": {"error": {"code": "AuthorizationFailed", "message": "The client has no read access to vc-b."}}}]'
check_fail "a refused quota read names the service's reason" 1 "AuthorizationFailed: The client has no read access to vc-b." \
  "$aj" quota list
control config '{"client_secret": "the-right-one"}'
check_fail "a rejected credential says so" 1 "AADSTS7000215" "$aj" sku list
control config '{"client_secret": null}'

# --- secrets ---
expect_ok "no token or secret in any output" bash -c "! grep -q 'eyJ0\|not-a-real-secret' '$work/all'"

finish
