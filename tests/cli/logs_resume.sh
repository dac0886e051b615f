#!/usr/bin/env bash
# aj logs -f against tests/peers/logs_peer.py: a stream that drops mid-line is asked again from
# the newest timestamp shown (sinceTime), nothing is shown twice, the cut line comes whole, and
# -f ends once the AjJob has ended; then a 100-pod job, one stream per pod: every pod's lines once,
# in bounded memory. Expected output written by hand from the peer's lines.
#
#   logs_resume.sh AJ_BINARY SOURCE_DIR [SANITIZED]   (SANITIZED 1: no memory bound, ASan's own is large)
set -uo pipefail
AJ=$1
SRC=$2
SANITIZED=${3:-0}
tmp=$(mktemp -d)
peer_pid=
trap '[[ -n $peer_pid ]] && kill "$peer_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; sed 's/^/  | /' "$tmp/out" "$tmp/err" "$tmp/peer.log" 2>/dev/null | head -40; exit 1; }

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=127.0.0.1 \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$tmp/peer.key" -out "$tmp/peer.crt" 2>/dev/null ||
  fail "openssl could not make a certificate"
# start_peer ARGS...: a fresh peer (the one before stopped) and a kubeconfig for it
start_peer() {
  [[ -n $peer_pid ]] && kill "$peer_pid" 2>/dev/null && wait "$peer_pid" 2>/dev/null
  rm -f "$tmp/port" "$tmp/peer.log"
  python3 "$SRC/tests/peers/logs_peer.py" --port-file "$tmp/port" --log "$tmp/peer.log" --dir "$tmp" \
    --token t0ken --cert "$tmp/peer.crt" --key "$tmp/peer.key" "$@" &
  peer_pid=$!
  for _ in $(seq 100); do [[ -s $tmp/port ]] && break; sleep 0.1; done
  [[ -s $tmp/port ]] || fail "the peer did not start"
  cat >"$tmp/kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: p, cluster: {server: "https://127.0.0.1:$(cat "$tmp/port")", certificate-authority: "$tmp/peer.crt"}}]
users: [{name: u, user: {token: t0ken}}]
contexts: [{name: c, context: {cluster: p, user: u, namespace: ns}}]
current-context: c
YAML
}
start_peer
timeout 60 "$AJ" logs j -f --kubeconfig "$tmp/kubeconfig" >"$tmp/out" 2>"$tmp/err"
rc=$?
[[ $rc == 0 ]] || fail "exit status $rc, want 0"
want='[master-0] one
[master-0] two
[master-0] three, once whole
[master-0] four'
[[ $(cat "$tmp/out") == "$want" ]] || fail "output differs from the peer's lines, each once"
grep -q "aj: the log stream of pod j-master-0 dropped" "$tmp/err" || fail "the drop was not said"
python3 - "$tmp/peer.log" <<'PY' || fail "the streams' queries"
import json, sys
logs = [e["query"] for e in map(json.loads, open(sys.argv[1])) if e["path"].endswith("/log")]
assert len(logs) == 2, logs  # the job ended: no third stream
assert logs[0]["follow"] == ["true"] and logs[0]["timestamps"] == ["true"] and "sinceTime" not in logs[0], logs[0]
assert logs[1]["sinceTime"] == ["2024-05-01T12:00:02.200000000Z"], logs[1]
PY

# aj status: the pods; the tasks and Azure fields of an aml job, which aj logs does not read.
"$AJ" status j --kubeconfig "$tmp/kubeconfig" >"$tmp/out" 2>"$tmp/err" || fail "aj status j"
grep -qE '^  master +0 +j-master-0 +n1 +Running +0 +- ' "$tmp/out" || fail "status: the pod row"
"$AJ" status az --kubeconfig "$tmp/kubeconfig" >"$tmp/out" 2>"$tmp/err" || fail "aj status az"
want='Tasks:
  TASK   REPLICAS   PENDING   RUNNING   SUCCEEDED   FAILED   RESTARTS
  main   2          0         2         0           0        1
Azure:
  compute              gpu-cluster
  instanceType         Standard_ND96asr_v4
  portalUrl            https://ml.azure.com/runs/az-1'
[[ $(sed -n '/^Tasks:/,$p' "$tmp/out") == "$want" ]] || fail "status: tasks and Azure fields"
# aj logs of an aml job reads Azure ML (cli.logs_aml), not pods: this one names no Azure job yet.
"$AJ" logs az --kubeconfig "$tmp/kubeconfig" >"$tmp/out" 2>"$tmp/err" || fail "aj logs of an aml job without its Azure job"
grep -qF "ajjob.aj.dev/az has no Azure ML job yet (phase Running): no logs yet" "$tmp/err" ||
  fail "aj logs of an aml job: the message"

# 100 pods: the master as above and 99 workers, one stream each at once.
start_peer --workers 99
python3 - "$AJ" "$tmp/kubeconfig" >"$tmp/many" 2>"$tmp/err" <<'PY' || { cat "$tmp/err"; fail "aj logs -f of 100 pods"; }
import os, subprocess, sys, tempfile
aj, kc = sys.argv[1:]
with tempfile.TemporaryFile() as f:
    p = subprocess.Popen([aj, "logs", "j", "-f", "--kubeconfig", kc], stdout=f)
    _, status, ru = os.wait4(p.pid, 0)
    f.seek(0)
    lines = f.read().decode().splitlines()
assert status == 0, status
want = ["[master-0] one", "[master-0] two", "[master-0] three, once whole", "[master-0] four"]
want += ["[worker-%d] worker %d line %d" % (r, r, k) for r in range(99) for k in range(3)]
assert sorted(lines) == sorted(want), (len(lines), len(want))
# each pod's lines in their order
for r in range(99):
    mine = [l for l in lines if l.startswith("[worker-%d] " % r)]
    assert mine == want[4 + 3 * r:7 + 3 * r], mine
print("rss-mib", ru.ru_maxrss // 1024)
PY
rss=$(sed -n 's/^rss-mib //p' "$tmp/many")
echo "aj logs -f of 100 pods: peak resident memory $rss MiB"
((SANITIZED || rss < 64)) || fail "100 streams took $rss MiB"
echo "ok: logs_resume"
