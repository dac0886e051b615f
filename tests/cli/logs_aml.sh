#!/usr/bin/env bash
# aj logs for AjJobs on Azure ML: tests/peers/ajjob_peer.py serves the AjJobs, tests/peers/azure_peer.py
# the token endpoint, ARM (the workspace and its discoveryUrl), the run history's details with
# logFiles and the files behind their SAS URLs. Covers a job whose files are not there yet, files
# that grow between reads (read from their offsets with Range), -f until the job ends, --rank,
# options that only pods have, a refused read, Ctrl-C, and no SAS or token in any output.
# Expected output written by hand from the steps set up below.
#
#   logs_aml.sh AJ_BINARY SOURCE_DIR
set -uo pipefail
AJ=$1
SRC=$2
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; sed 's/^/  | /' "$tmp/out" "$tmp/err" 2>/dev/null | head -40; exit 1; }

WS=/subscriptions/sub-1/resourceGroups/rg-1/providers/Microsoft.MachineLearningServices/workspaces/ws-1
P0=user_logs/std_log_process_0.txt
P1=user_logs/std_log_process_1.txt

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=127.0.0.1 \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$tmp/peer.key" -out "$tmp/peer.crt" 2>/dev/null ||
  fail "openssl could not make a certificate"
job() { # name phase [jobName]
  local az=''
  [[ -n ${3:-} ]] && az=", \"azure\": {\"jobName\": \"$3\", \"workspace\": \"$WS\"}"
  echo "\"$1\": {\"metadata\": {\"name\": \"$1\", \"namespace\": \"ns\"},
    \"status\": {\"backend\": \"aml\", \"phase\": \"$2\"$az}}"
}
cat >"$tmp/ajjobs.json" <<JSON
{$(job a Running run-a), $(job b Submitted run-b), $(job c Running run-c), $(job d Submitted),
 $(job e Running run-e)}
JSON
python3 "$SRC/tests/peers/ajjob_peer.py" --port-file "$tmp/kport" --log "$tmp/kube.log" --dir "$tmp" \
  --token t0ken --cert "$tmp/peer.crt" --key "$tmp/peer.key" &
pids+=($!)
python3 "$SRC/tests/peers/azure_peer.py" --port-file "$tmp/aport" >"$tmp/azure.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [[ -s $tmp/kport && -s $tmp/aport ]] && break; sleep 0.1; done
[[ -s $tmp/kport && -s $tmp/aport ]] || fail "the peers did not start"
peer=http://127.0.0.1:$(cat "$tmp/aport")
control() { curl -sf -X POST -H 'Content-Type: application/json' "$peer/_peer/$1" -d "${2:-}" >/dev/null ||
  fail "peer control $1"; }
cat >"$tmp/kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: p, cluster: {server: "https://127.0.0.1:$(cat "$tmp/kport")", certificate-authority: "$tmp/peer.crt"}}]
users: [{name: u, user: {token: t0ken}}]
contexts: [{name: c, context: {cluster: p, user: u, namespace: ns}}]
current-context: c
YAML
export KUBECONFIG=$tmp/kubeconfig
export AZURE_TENANT_ID=tenant-1 AZURE_CLIENT_ID=client-1 AZURE_CLIENT_SECRET=not-a-real-secret
export AZURE_AUTHORITY_HOST=$peer AJ_AZURE_ARM_ENDPOINT=$peer
unset AZURE_FEDERATED_TOKEN_FILE AJ_AZURE_CA_FILE

# run-a: no files, then rank 0's file while rank 1's blob is absent, then both grow, then it ends.
control runs "{\"run-a\": [
  {\"status\": \"Queued\", \"files\": {}},
  {\"status\": \"Running\", \"files\": {\"$P0\": \"zero 1\n\", \"$P1\": null,
                                        \"system_logs/lifecycler/lifecycler.log\": \"hidden\n\"}},
  {\"status\": \"Running\", \"files\": {\"$P0\": \"zero 1\nzero 2\nhalf\", \"$P1\": \"one 1\n\"}},
  {\"status\": \"Completed\", \"files\": {\"$P0\": \"zero 1\nzero 2\nhalf line\n\", \"$P1\": \"one 1\none 2\"}}],
 \"run-c\": [{\"status\": \"Running\", \"files\": {\"$P0\": \"c0\n\"}}],
 \"run-e\": [{\"status\": \"Running\", \"files\": {\"$P0\": \"e0\n\"}}]}"
run() { timeout 60 "$AJ" "$@" >"$tmp/out" 2>"$tmp/err"; }
secrets() { ! grep -qE 'sig=|c2FzLXNlY3JldC1zaWc|eyJ0\.|not-a-real-secret' "$tmp/out" "$tmp/err" ||
  fail "a SAS or a token was printed: $1"; }

# --- without -f: one look, the job's first step ---
run logs a
rc=$?
[[ $rc == 0 ]] || fail "logs a: exit status $rc, want 0"
[[ ! -s $tmp/out ]] || fail "logs a: output before any file exists"
grep -qx "aj: Azure ML job run-a is Queued: no log files yet" "$tmp/err" || fail "logs a: the missing files were not said"
secrets "logs a"

# --- -f: every step, files read from their offsets, then the job ends ---
run logs a -f
rc=$?
[[ $rc == 0 ]] || fail "logs a -f: exit status $rc, want 0"
want='[0] zero 1
[0] zero 2
[1] one 1
[0] half line
[1] one 2'
[[ $(cat "$tmp/out") == "$want" ]] || fail "logs a -f: output differs from the files' lines, each once"
grep -q "aj: log file $P1 of Azure ML job run-a is not there yet" "$tmp/err" || fail "the absent blob was not said"
secrets "logs a -f"
curl -sf "$peer/_peer/requests" >"$tmp/requests" || fail "the peer's requests"
python3 - "$tmp/requests" "$P0" <<'PY' || fail "the requests aj made"
import json, sys
reqs, p0 = json.load(open(sys.argv[1])), sys.argv[2]
logs = [r for r in reqs if r["path"].startswith("/logs/")]
assert logs and all("authorization" not in r["headers"] for r in logs), "a token went with a SAS URL"
ranges = [r["headers"].get("range") for r in logs if r["path"] == "/logs/run-a/" + p0]
# -f (the look without it took the Queued step): bytes 0.. while 7 exist, then 7.. and 18..
assert ranges == ["bytes=0-1048575", "bytes=7-1048582", "bytes=18-1048593"], ranges
details = [r for r in reqs if r["path"].endswith("/runs/run-a/details")]
assert details and all(r["headers"]["authorization"].startswith("Bearer ") for r in details)
assert any(r["path"] == "/discovery" for r in reqs), "no discovery"
PY

# --- --rank keeps one process's file ---
control runs "{\"run-a\": [{\"status\": \"Completed\", \"files\": {\"$P0\": \"z\n\", \"$P1\": \"o\n\"}}]}"
run logs a --rank 1
[[ $(cat "$tmp/out") == "[1] o" ]] || fail "--rank 1 shows rank 1 alone"

# --- a run the history does not know yet, an AjJob not forwarded yet ---
run logs b
rc=$?
[[ $rc == 0 ]] || fail "logs b: exit status $rc"
grep -q "aj: Azure ML job run-b has no run history yet: no logs yet (aj logs -f waits for them)" "$tmp/err" ||
  fail "logs b: the unknown run was not said"
run logs d
grep -q "ajjob.aj.dev/d has no Azure ML job yet (phase Submitted): no logs yet" "$tmp/err" ||
  fail "logs d: the unforwarded job was not said"

# --- -f before the controller has forwarded the job: said once, awaited, then followed to its end ---
control runs "{\"run-f\": [{\"status\": \"Running\", \"files\": {\"$P0\": \"f0\n\"}},
  {\"status\": \"Completed\", \"files\": {\"$P0\": \"f0\nf1\n\"}}]}"
forward() { # name phase [jobName]: rewrite AjJob f as the controller would, in one rename
  echo "{$(job "$@")}" >"$tmp/ajjobs.new" && mv "$tmp/ajjobs.new" "$tmp/ajjobs.json"
}
cp "$tmp/ajjobs.json" "$tmp/ajjobs.orig"
forward f Submitted
timeout 60 "$AJ" logs f -f >"$tmp/out" 2>"$tmp/err" &
apid=$!
for _ in $(seq 100); do grep -q "waiting for the Azure ML job" "$tmp/err" 2>/dev/null && break; sleep 0.1; done
sleep 2.5 # at least one more look at the AjJob while it waits
kill -0 "$apid" 2>/dev/null || fail "logs f -f: ended before the job was forwarded"
forward f Running run-f
wait "$apid"
rc=$?
[[ $rc == 0 ]] || fail "logs f -f: exit status $rc, want 0 (the job succeeded)"
[[ $(cat "$tmp/out") == $'[0] f0\n[0] f1' ]] || fail "logs f -f: the job's lines once it exists"
[[ $(grep -c "waiting for the Azure ML job of ajjob.aj.dev/f (phase Submitted)" "$tmp/err") == 1 ]] ||
  fail "logs f -f: what it waits for was not said exactly once"
# it ended because the job did: its last look saw Completed (the peer's last step)
curl -sf "$peer/_peer/requests" | grep -q '/runs/run-f/details' || fail "logs f -f: run-f was never looked at"
secrets "logs f -f"

# --- Ctrl-C while waiting for the job to be forwarded: 130 ---
forward f Submitted
timeout 60 "$AJ" logs f -f >"$tmp/out" 2>"$tmp/err" &
apid=$!
for _ in $(seq 100); do grep -q "waiting for the Azure ML job" "$tmp/err" 2>/dev/null && break; sleep 0.1; done
kill -INT "$apid"
wait "$apid"
rc=$?
[[ $rc == 130 ]] || fail "Ctrl-C while waiting: exit status $rc, want 130"
mv "$tmp/ajjobs.orig" "$tmp/ajjobs.json"

# --- options only pods have ---
run logs a --tail 5
rc=$?
[[ $rc == 2 ]] || fail "--tail on an Azure job: exit status $rc, want 2"
grep -q -- "--tail is for the pods of cluster backends; ajjob.aj.dev/a runs on aml" "$tmp/err" ||
  fail "--tail was not refused clearly"

# --- a refused read names the file and the status, never the SAS ---
control faults '[{"path": "^/logs/run-e/", "status": 403, "times": 1,
  "body": {"error": "sig=c2FzLXNlY3JldC1zaWc%3D"}}]'
run logs e
rc=$?
[[ $rc == 1 ]] || fail "refused read: exit status $rc, want 1"
grep -q "aj: cannot read log file $P0 of Azure ML job run-e: HTTP 403" "$tmp/err" || fail "the refusal was not said"
secrets "refused read"

# --- Ctrl-C while following a running job: 130, at once ---
timeout 60 "$AJ" logs c -f >"$tmp/out" 2>"$tmp/err" &
apid=$!
for _ in $(seq 100); do grep -q c0 "$tmp/out" 2>/dev/null && break; sleep 0.1; done
kill -INT "$apid"
wait "$apid"
rc=$?
[[ $rc == 130 ]] || fail "Ctrl-C: exit status $rc, want 130"
[[ $(cat "$tmp/out") == "[0] c0" ]] || fail "Ctrl-C: the lines before it"
secrets "Ctrl-C"
echo "ok: logs_aml"
