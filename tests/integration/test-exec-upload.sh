#!/usr/bin/env bash
# `aj code upload`: the code of a directory reaches a volcano job's shared volume through a helper
# pod. The exec part runs against tests/peers/exec_peer.py (there is no kubelet here): it plays the
# API server for pods and runs the exec'd commands on this machine, so its "volume" is a directory.
# Uploads succeed, are skipped when present, and leave nothing behind when the connection drops
# mid-stream or a byte is corrupted; the helper pod is deleted every time. Against the real API
# server the helper pod is created, never starts (no kubelet), times out and is deleted.
source "$(dirname "$0")/lib.sh"
: "${AJ_BIN:?AJ_BIN must name the aj executable}"

work=$(mktemp -d "${TMPDIR:-/tmp}/aj-it-exec.XXXXXX")
peer_pid=
stop_peer() {
  if [[ -n $peer_pid ]]; then kill "$peer_pid" 2>/dev/null; wait "$peer_pid" 2>/dev/null; fi
  peer_pid=
}
trap 'stop_peer; rm -rf "$work" "$t_out"' EXIT

pvc=$work/pvc
store=$pvc/.aj-code
export AJ_HOME=$work/home
mkdir -p "$AJ_HOME/template" "$work/code/src" "$pvc"
cat >"$AJ_HOME/template/job.yaml" <<YAML
config:
  target: {service: volcano, gpus_per_node: 0, cpus_per_node: 1, memory: 1Gi}
  environment: {image: "busybox:1.36"}
  code: {ignore: ["*.log"]}
  jobs:
    - name: train
      sku: C1
      instance_count: 1
      submit_args:
        env:
          AMLT_PERSISTENT_VOLUME_NAME: team-pvc
          AMLT_PERSISTENT_VOLUME_MOUNT_DIR: $pvc
YAML
printf 'print("train")\n' >"$work/code/train.py"
printf 'x = 1\n' >"$work/code/src/model.py"
printf 'noise\n' >"$work/code/debug.log"
printf '#!/bin/sh\necho hi\n' >"$work/code/run.sh"
chmod 755 "$work/code/run.sh"

# The peer serves TLS with its own certificate for 127.0.0.1 (aj refuses plain http).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=127.0.0.1 \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$work/peer.key" -out "$work/peer.crt" 2>/dev/null \
  || { echo "FAIL - openssl could not make the peer's certificate"; exit 1; }

# start_peer [peer options...]: a fresh peer and a kubeconfig for it
start_peer() {
  stop_peer
  rm -f "$work/port" "$work/peer.log"
  python3 "$repo_root/tests/peers/exec_peer.py" --port-file "$work/port" --log "$work/peer.log" \
    --token peer-secret --dir "$work" --cert "$work/peer.crt" --key "$work/peer.key" "$@" &
  peer_pid=$!
  for _ in $(seq 100); do [[ -s $work/port ]] && break; sleep 0.1; done
  cat >"$work/kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: peer, cluster: {server: "https://127.0.0.1:$(cat "$work/port")", certificate-authority: "$work/peer.crt"}}]
users: [{name: u, user: {token: peer-secret}}]
contexts: [{name: peer, context: {cluster: peer, user: u, namespace: team-a}}]
current-context: peer
YAML
}
upload() { (cd "$work/code" && KUBECONFIG=$work/kubeconfig "$AJ_BIN" code upload -t job "$@"); }
# the peer's log as "METHOD path" lines, exec commands reduced to their script's first word
exec_requests() {
  python3 -c 'import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if "method" not in e: continue
    cmd = e["query"].get("command")
    what = "%s %s" % (e["method"], e["path"].rsplit("/", 1)[-1] if "/pods/" in e["path"] else "pods")
    if cmd: what += " " + cmd[2].split()[0]
    print(what)' "$work/peer.log" | tr '\n' ';'
}

# --- a first upload ---
start_peer
want=$(cd "$work/code" && "$AJ_BIN" code stats -t job | awk '/sha256/ {print $NF}')
expect_ok "aj code stats names the archive digest" test "${#want}" -eq 64
expect_eq "upload prints the digest of the archive" "$want" upload
expect_eq "helper pod created, waited for, checked, received into, deleted" \
  "POST pods;GET;GET exec test;GET exec set;DELETE;" \
  bash -c "$(declare -f exec_requests); work='$work'; exec_requests | sed 's/ aj-code-[a-z0-9-]*//g'"
expect_ok "every request carried the token" bash -c "! grep -q '\"authorized\": false' '$work/peer.log'"
expect_eq "helper pod: job image, claim at the mount, no privileges" \
  "busybox:1.36 team-pvc $pvc False ALL sleep" python3 -c 'import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("method") == "POST":
        p = e["pod"]["spec"]; c = p["containers"][0]
        print(c["image"], p["volumes"][0]["persistentVolumeClaim"]["claimName"], c["volumeMounts"][0]["mountPath"],
              c["securityContext"]["allowPrivilegeEscalation"], c["securityContext"]["capabilities"]["drop"][0], c["command"][0])' \
  "$work/peer.log"
expect_eq "the volume holds exactly that upload" "$want" ls -A "$store"
expect_ok "the files arrived, ignored ones left out" bash -c \
  "diff -r --exclude=debug.log '$work/code' '$store/$want' && [[ ! -e '$store/$want/debug.log' ]] && [[ -x '$store/$want/run.sh' ]]"

# --- the same tree again: nothing is sent ---
start_peer
expect_eq "a second upload prints the same digest" "$want" upload
cp "$t_out" "$work/err"
expect_ok "...saying it is already there" grep -q "is already in the volume" "$work/err"
expect_eq "...checking, never receiving; the pod still deleted" "POST pods;GET;GET exec test;DELETE;" \
  bash -c "$(declare -f exec_requests); work='$work'; exec_requests | sed 's/ aj-code-[a-z0-9-]*//g'"

# --- a bigger tree whose upload is cut mid-stream ---
head -c 3000000 /dev/urandom >"$work/code/weights.bin"
start_peer --drop-after 100000
expect_fail "a dropped connection fails the upload" "the connection closed before the command finished" upload
expect_ok "the helper pod is deleted after the failure" bash -c "grep -q '\"method\": \"DELETE\"' '$work/peer.log'"
for _ in $(seq 50); do grep -q '"event": "exited"' "$work/peer.log" 2>/dev/null && grep -c '"event": "exited"' "$work/peer.log" | grep -q 2 && break; sleep 0.2; done
expect_eq "nothing half-written is left in the volume" "$want" ls -A "$store"

# --- a byte changed in transit ---
start_peer --corrupt-at 5000
expect_fail "a corrupted upload is refused on the far side" "digest mismatch" upload
cp "$t_out" "$work/err"
expect_ok "...and says nothing was kept" grep -q "nothing kept" "$work/err"
expect_ok "the helper pod is deleted" bash -c "grep -q '\"method\": \"DELETE\"' '$work/peer.log'"
expect_eq "still only the first upload in the volume" "$want" ls -A "$store"

# --- the whole tree once the connection holds ---
start_peer
new=$(upload 2>"$t_out")
cp "$t_out" "$work/retry.err"
expect_ok "a clean retry uploads the bigger tree" test "${#new}" -eq 64 -a "$new" != "$want"
expect_eq "both uploads, no temporaries" "$(printf '%s\n' "$want" "$new" | sort | tr '\n' ' ')" \
  bash -c "ls -A '$store' | sort | tr '\n' ' '"
expect_ok "the weights arrived intact" cmp "$work/code/weights.bin" "$store/$new/weights.bin"
expect_ok "...with no progress line, stderr not being a terminal" bash -c \
  "grep -q uploaded '$work/retry.err' && ! grep -q 'MiB/s' '$work/retry.err'"

# --- progress on a terminal (script(1) gives aj one) ---
head -c 40000000 /dev/urandom >"$work/code/big.bin"
on_tty() { script -qec "cd '$work/code' && KUBECONFIG='$work/kubeconfig' '$AJ_BIN' code upload -t job $*" "$work/tty.log" >/dev/null; }
expect_ok "on a terminal the upload succeeds" on_tty
# each phase shows once it has run for 0.2 s: archiving 40 MB, or sending it
expect_ok "...showing files or MiB and the rate on one line rewritten in place" \
  grep -qaE $'\raj: (archiving the code [0-9]+ files, [0-9.]+ MiB|sending the code [0-9.]+ of [0-9.]+ MiB), [0-9.]+ MiB/s' \
  "$work/tty.log"
expect_ok "...which it erases before saying what it sent" grep -qaF $'\r\033[K' "$work/tty.log"
expect_ok "--quiet: no progress line" on_tty --quiet
expect_ok "...only the messages" bash -c "! grep -qa 'MiB/s' '$work/tty.log' && grep -qa 'is already in the volume' '$work/tty.log'"
rm "$work/code/big.bin"
stop_peer

# --- the AjJob and the Volcano Job name the upload ---
ns=$(new_namespace exec)
(cd "$work/code" && "$AJ_BIN" run -t job --name up-1 --namespace "$ns" --dry-run --digest -o json -- python train.py) \
  >"$work/ajjob.json" 2>"$work/run.err"
expect_eq "aj run --dry-run --digest carries the digest" "$new" python3 -c \
  'import json, sys; print(json.load(open(sys.argv[1]))["spec"]["code"]["digest"])' "$work/ajjob.json"
expect_ok "the AjJob with spec.code is accepted" dry_apply "$ns" "$work/ajjob.json"
(cd "$work/code" && "$AJ_BIN" render -t job --name up-1 --namespace "$ns" --digest -- python train.py) >"$work/job.yaml"
expect_ok "the Volcano Job that copies it is accepted" dry_apply "$ns" "$work/job.yaml"
expect_ok "its pods copy .aj-code/<digest> into /aj/code" grep -qF "cp -a '$store/$new/.' /aj/code/" "$work/job.yaml"
bad=$(sed "s/$new/NOTADIGEST/" "$work/ajjob.json")
expect_fail "a malformed digest is refused by the schema" "spec.code.digest" \
  bash -c "echo '$bad' | '$AJ_KUBECTL' apply -n '$ns' --dry-run=server -f -"

# --- the helper pod on the real API server: created, never runs, deleted ---
expect_fail "without a kubelet the helper pod times out" "did not start within 3 s (Pending)" \
  env AJ_CODE_HELPER_TIMEOUT=3 bash -c "cd '$work/code' && '$AJ_BIN' code upload -t job --namespace '$ns'"
expect_eq "...and is deleted" "" k get pods -n "$ns" -o name
(cd "$work/code" && AJ_CODE_HELPER_TIMEOUT=120 exec "$AJ_BIN" code upload -t job --namespace "$ns") \
  2>"$work/term.err" &
upload_pid=$!
expect_ok "while aj waits for the helper pod, it exists" wait_for 30 \
  bash -c "[[ -n \$('$AJ_KUBECTL' get pods -n '$ns' -o name) ]]"
expect_ok "...and aj says what it waits for" wait_for 30 \
  grep -q "aj: waiting for helper pod $ns/aj-code-.* to run: .* (5 s of 120)" "$work/term.err"
kill -TERM "$upload_pid"
wait "$upload_pid"
expect_eq "SIGTERM ends aj by that signal" "143" echo "$?"
expect_ok "...after it deleted the helper pod" grep -q "aj: interrupted; helper pod $ns/aj-code-.* deleted" "$work/term.err"
expect_eq "...which is gone" "" k get pods -n "$ns" -o name
expect_fail "aj run uploads before it creates the AjJob: the pod never starts, so no AjJob" \
  "did not start within 3 s" env AJ_CODE_HELPER_TIMEOUT=3 bash -c \
  "cd '$work/code' && '$AJ_BIN' run -t job --name up-2 --namespace '$ns' -- python train.py"
expect_eq "...and no AjJob or helper pod is left" "" bash -c \
  "'$AJ_KUBECTL' get ajjobs,pods -n '$ns' -o name"
sed '/AMLT_PERSISTENT_VOLUME/d; /env:/d; /submit_args:/d' "$AJ_HOME/template/job.yaml" >"$AJ_HOME/template/plain.yaml"
expect_ok "without the two variables aj run submits" bash -c \
  "cd '$work/code' && '$AJ_BIN' run -t plain --name up-3 --namespace '$ns' -- python train.py 2>'$work/err'"
expect_ok "...saying no code is transferred and why" grep -qF \
  "aj: no code is transferred: the first job's submit_args.env sets neither AMLT_PERSISTENT_VOLUME_NAME nor AMLT_PERSISTENT_VOLUME_MOUNT_DIR" "$work/err"
expect_eq "...with no spec.code in the AjJob" "" k get ajjob -n "$ns" up-3 -o 'jsonpath={.spec.code}'
grep -v AMLT_PERSISTENT_VOLUME_MOUNT_DIR "$AJ_HOME/template/job.yaml" >"$AJ_HOME/template/half.yaml"
expect_ok "with only one of them aj run submits" bash -c \
  "cd '$work/code' && '$AJ_BIN' run -t half --name up-4 --namespace '$ns' -- python train.py 2>'$work/err'"
expect_ok "...saying no code is transferred and why" grep -qF \
  "aj: no code is transferred: submit_args.env sets AMLT_PERSISTENT_VOLUME_NAME but not AMLT_PERSISTENT_VOLUME_MOUNT_DIR" "$work/err"
expect_ok "aj code upload says so without either" bash -c \
  "cd '$work/code' && '$AJ_BIN' code upload -t plain --namespace '$ns' 2>&1 | grep -q 'no code is transferred: the first job'"
expect_fail "a missing template is reported before anything is created" "template/nope" \
  bash -c "cd '$work/code' && '$AJ_BIN' code upload -t nope --namespace '$ns'"
finish
