#!/usr/bin/env bash
# aj logs, aj status, aj run --follow on the cluster fixture: the real API server reads each pod's
# log from kwok (its ClusterLogs, tests/controlplane/cluster/logs.sh: one file per role) as it
# would from a kubelet. Every expected line below is written by hand from logs.sh.
source "$(dirname "$0")/lib.sh"
cluster_test logs
start_controller main
expect_ok "the controller becomes ready" wait_for 30 grep -q '"msg":"aj-controller started"' "$work/main.log"
logs=$(dirname "$AJ_CP_ENV")/kwok-logs
ctx=$(k config current-context)
hold='{"target": {"labels": {"aj.dev/kwok-hold": "true"}}}'
running() { [[ $(pods_of "$1" '{.items[*].status.phase}') == "$2" ]]; }
aj() { "$AJ_BIN" "$@" --namespace "$ns"; }

submit_ajjob lg volcano 2 "$hold"
expect_ok "the held job's two pods run" wait_for 60 running lg "Running Running"

master='[master-0] master: starting rank 0
[master-0] master: step 1 loss 2.31
[master-0] master: warning: slow step
[master-0] master: done'
worker='[worker-0] worker: starting
[worker-0] worker: step 1
[worker-0] worker: done'
expect_eq "every rank, prefixed, in task and rank order" "$master
$worker" aj logs lg
expect_eq "--task worker" "$worker" aj logs lg --task worker
expect_eq "--task master --rank 0" "$master" aj logs lg --task master --rank 0
expect_eq "--rank 1: no pod has it" "" aj logs lg --rank 1
expect_eq "--tail 1: each pod's last line" "[master-0] master: done
[worker-0] worker: done" aj logs lg --tail 1
expect_eq "--timestamps: the times kwok's file holds" "[worker-0] 2024-05-01T12:00:00.5Z worker: starting" \
  bash -c "'$AJ_BIN' logs lg --namespace '$ns' --task worker --timestamps --tail 3 | head -n 1 | sed 's/\.500000000Z/.5Z/'"
expect_eq "--since 1h: the lines are from 2024" "" aj logs lg --since 1h
expect_eq "-p: the previous container's log" "[master-0] master: previous run
[master-0] master: previous run crashed" aj logs lg -p --task master
expect_fail "-p cannot be followed" "--previous shows containers that have ended" aj logs lg -p -f
expect_fail "--since wants a duration" "--since: expected a duration such as 90s" aj logs lg --since 5x
expect_fail "a missing AjJob" "ajjob.aj.dev/nope not found in namespace $ns" aj logs nope
expect_fail "...one in another namespace is named" \
  "ajjob.aj.dev/lg not found in namespace default, but one exists in namespace" \
  "$AJ_BIN" logs lg --namespace default
expect_fail "...this one" "$ns" "$AJ_BIN" logs lg --namespace default

# --- aj status: the pods, one row each ---
aj status lg >"$work/status.txt" 2>&1
expect_ok "status lists the pods with task, rank, node and phase" \
  grep -qE "^  master +0 +lg-master-0 +kwok-[a-z0-9-]+ +Running +0 +- +[0-9]+s$" "$work/status.txt"
expect_ok "...the worker too" grep -qE "^  worker +0 +lg-worker-0 +kwok-" "$work/status.txt"
expect_eq "status -o json carries the pods" "lg-master-0 master 0 Running" bash -c \
  "'$AJ_BIN' status lg --namespace '$ns' -o json | python3 -c 'import json,sys; d=json.load(sys.stdin); p=d[\"pods\"][0]; print(p[\"name\"], p[\"task\"], p[\"rank\"], p[\"phase\"])'"

# --- a line of 16 MiB without a newline, and binary bytes: cut into 64 KiB lines, bytes kept ---
cp "$logs/worker.log" "$work/worker.log.orig"
trap 'cp "$work/worker.log.orig" "$logs/worker.log"; cluster_cleanup' EXIT
python3 - "$logs/worker.log" <<'PY'
import sys
with open(sys.argv[1], "ab") as f:
    f.write(b"2024-05-01T12:00:05.000000000Z stdout F " + b"x" * (16 << 20) + b"\n")
    f.write(b"2024-05-01T12:00:06.000000000Z stdout F " + bytes(b for b in range(256) if b != 10) + b"\n")
PY
python3 - "$AJ_BIN" "$ns" lg >"$work/big.txt" 2>&1 <<'PY'
import os, subprocess, sys, tempfile
aj, ns, job = sys.argv[1:]
def run(*args):  # stdout and the peak resident memory (KiB) of one aj logs
    with tempfile.TemporaryFile() as f:
        p = subprocess.Popen([aj, "logs", job, "--namespace", ns, *args], stdout=f)
        _, _, ru = os.wait4(p.pid, 0)
        f.seek(0)
        return f.read(), ru.ru_maxrss
_, small = run("--task", "master")
out, big = run("--task", "worker", "--tail", "2")
lines = out.split(b"\n")[:-1]
binary = bytes(b for b in range(256) if b != 10)
xs = [l for l in lines if l.startswith(b"[worker-0] x")]
print("pieces", len(xs), "longest", max(len(l) for l in lines))
print("payload", sum(len(l) - len(b"[worker-0] ") for l in xs) == 16 << 20)
print("binary", lines[-1] == b"[worker-0] " + binary)
print("extra-mib", max(0, big - small) // 1024)
PY
cat "$work/big.txt"
# the first piece holds the line's timestamp, cut off: 65536 - 31 bytes of it are text
expect_ok "the 16 MiB line comes as 257 lines of at most 64 KiB" grep -qx "pieces 257 longest 65547" "$work/big.txt"
expect_ok "...holding every byte" grep -qx "payload True" "$work/big.txt"
expect_ok "binary bytes pass through" grep -qx "binary True" "$work/big.txt"
expect_ok "aj needs no more memory for it than for a few short lines (< 4 MiB more)" \
  bash -c "(( \$(sed -n 's/^extra-mib //p' '$work/big.txt') < 4 ))"
cp "$work/worker.log.orig" "$logs/worker.log"
trap cluster_cleanup EXIT

# --- -f: lines appended later come once; a deleted pod is said and its replacement followed ---
cp "$logs/master.log" "$work/master.log.orig"
trap 'cp "$work/master.log.orig" "$logs/master.log"; cluster_cleanup' EXIT
"$AJ_BIN" logs lg --namespace "$ns" -f >"$work/f.out" 2>"$work/f.err" &
fpid=$!
expect_ok "-f shows what is there" wait_for 20 grep -qF "[worker-0] worker: done" "$work/f.out"
printf '%s stdout F master: step 2 loss 1.90\n' "$(date -u +%Y-%m-%dT%H:%M:%S.000000000Z)" >>"$logs/master.log"
expect_ok "...and a line appended later" wait_for 20 grep -qF "[master-0] master: step 2 loss 1.90" "$work/f.out"
sleep 3   # a few more polls: nothing is shown twice
expect_eq "...once" "1" grep -c "step 2 loss" "$work/f.out"
k -n "$ns" delete pod lg-worker-0 --wait=false >/dev/null
expect_ok "...says a deleted pod is gone" wait_for 30 grep -qF "aj: pod lg-worker-0 was deleted" "$work/f.err"
expect_ok "...and follows the pods Volcano makes again" wait_for 60 \
  bash -c "[[ \$(grep -c '^\[worker-0\] worker: done$' '$work/f.out') -ge 2 ]]"
aj cancel lg >/dev/null
expect_ok "-f ends by itself once the AjJob has ended" wait_for 60 bash -c "! kill -0 $fpid"
kill "$fpid" 2>/dev/null   # (only when it did not)
wait "$fpid"
expect_eq "...with exit status 0" "0" echo "$?"

# --- Ctrl-C during -f ---
submit_ajjob lgint volcano 1 "$hold"
expect_ok "a held one-pod job runs" wait_for 60 running lgint "Running"
"$AJ_BIN" logs lgint --namespace "$ns" -f >"$work/int.out" 2>&1 &
ipid=$!
expect_ok "-f shows its lines" wait_for 20 grep -qF "[master-0] master: done" "$work/int.out"
kill -INT "$ipid"
sleep 2
kill "$ipid" 2>/dev/null   # (only when Ctrl-C did not end it)
wait "$ipid"
expect_eq "Ctrl-C ends -f with exit status 130" "130" echo "$?"

# --- aj run --follow: the job's logs, then its result as exit status ---
home=$work/home
cp -r "$repo_root/examples/.azure_jobs" "$home"
sed -i -e 's|AMLT_PERSISTENT_VOLUME_NAME: training-shared|AMLT_PERSISTENT_VOLUME_NAME: ""|' \
  -e 's|AMLT_PERSISTENT_VOLUME_MOUNT_DIR: /mnt/shared|AMLT_PERSISTENT_VOLUME_MOUNT_DIR: ""|' \
  -e "s|namespace: training|namespace: $ns|" "$home/template/volcano.yaml"
cat >"$home/template/volcano-fail.yaml" <<'YAML'
base: volcano
config:
  target:
    labels: {aj.dev/kwok-fail-task: worker, aj.dev/kwok-exit-code: "3"}
  _extra:
    volcano: {max_retry: 0}
YAML
(cd "$work" && AJ_HOME=$home "$AJ_BIN" run -t volcano -n 2 --context "$ctx" --namespace "$ns" --name runf \
  --follow -- python -c 'print(1)' >"$work/runf.out" 2>"$work/runf.err")
expect_eq "run --follow exits 0 when the job succeeded" "0" echo "$?"
expect_ok "...after every rank's lines" bash -c "grep -qxF '[master-0] master: done' '$work/runf.out' &&
  grep -qxF '[worker-0] worker: done' '$work/runf.out'"
expect_ok "...and says how it ended" grep -qxF "aj: ajjob.aj.dev/runf Succeeded" "$work/runf.err"
(cd "$work" && AJ_HOME=$home "$AJ_BIN" run -t volcano-fail -n 2 --context "$ctx" --namespace "$ns" --name runfail \
  --follow -- python -c 'print(1)' >"$work/runfail.out" 2>"$work/runfail.err")
expect_eq "run --follow exits 1 when the job failed" "1" echo "$?"
expect_ok "...saying so" grep -qxF "aj: ajjob.aj.dev/runfail Failed" "$work/runfail.err"
# The template's namespace ($ns), not the context's (default): run follows the AjJob it created.
expect_eq "the context's namespace is another one (default)" "default" k config view --minify -o 'jsonpath={..namespace}'
(cd "$work" && AJ_HOME=$home "$AJ_BIN" run -t volcano -n 2 --context "$ctx" --name runtns \
  --follow -- python -c 'print(1)' >"$work/runtns.out" 2>"$work/runtns.err")
expect_eq "run --follow without --namespace follows the job in the template's namespace" "0" echo "$?"
expect_ok "...showing its ranks' lines" grep -qxF '[worker-0] worker: done' "$work/runtns.out"
expect_ok "...and its end" grep -qxF "aj: ajjob.aj.dev/runtns Succeeded" "$work/runtns.err"
expect_ok "...never looking in the context's namespace" bash -c "! grep -F 'not found' '$work/runtns.err'"
(cd "$work" && AJ_HOME=$home "$AJ_BIN" run -t volcano-fail -n 2 --context "$ctx" --name runtnsf \
  --follow -- python -c 'print(1)' >/dev/null 2>"$work/runtnsf.err")
expect_eq "...and exits 1 when that job failed" "1" echo "$?"
expect_ok "...saying so" grep -qxF "aj: ajjob.aj.dev/runtnsf Failed" "$work/runtnsf.err"
(cd "$work" && AJ_HOME=$home "$AJ_BIN" run -t volcano-fail -n 2 --context "$ctx" --name runtnsw \
  --wait -- python -c 'print(1)' >"$work/runtnsw.out" 2>&1)
expect_eq "run --wait without --namespace waits for the job in the template's namespace: exit 1 when it failed" \
  "1" echo "$?"
expect_ok "...after its phases" grep -q "^ajjob.aj.dev/runtnsw Failed" "$work/runtnsw.out"
# Following a job that is deleted meanwhile ends non-zero, saying so.
submit_ajjob lgdel volcano 1 "$hold"
expect_ok "a held job to delete runs" wait_for 60 running lgdel "Running"
"$AJ_BIN" logs lgdel --namespace "$ns" -f >/dev/null 2>"$work/del.err" &
dpid=$!
sleep 2
k -n "$ns" delete ajjob lgdel --wait=false >/dev/null
expect_ok "-f of a job deleted meanwhile ends" wait_for 60 bash -c "! kill -0 $dpid"
kill "$dpid" 2>/dev/null   # (only when it did not)
wait "$dpid"
expect_eq "...with exit status 1" "1" echo "$?"
expect_ok "...saying it is gone" grep -qF "ajjob.aj.dev/lgdel not found in namespace $ns" "$work/del.err"
k -n "$ns" delete ajjob runtns runtnsf runtnsw >/dev/null   # the checks below count what else is there
aj status runfail >"$work/failst.txt" 2>&1
expect_ok "status of the failed job: the worker's exit code" grep -qE "^  worker +0 +runfail-worker-0 +kwok-[^ ]+ +Failed +0 +3 " "$work/failst.txt"
expect_ok "...and its Events" grep -q "^Events:" "$work/failst.txt"

# --- a job that cannot be scheduled ---
submit_ajjob lghuge volcano 40
expect_ok "too big: Unschedulable" wait_for 60 cond_is lghuge Unschedulable True
expect_ok "aj logs says it has no pods yet" bash -c \
  "'$AJ_BIN' logs lghuge --namespace '$ns' 2>&1 | grep -qF 'aj: no pods of ajjob.aj.dev/lghuge (phase Submitted)'"
aj status lghuge >"$work/huge.txt" 2>&1
expect_ok "aj status shows the Unschedulable condition" grep -qE "^  Unschedulable +True " "$work/huge.txt"
expect_ok "...and the PodGroup's Event" grep -qE " PodGroup/lghuge-[0-9a-f-]+ " "$work/huge.txt"
# --- aj list: --phase, --selector, --watch; aj delete ---
expect_ok "list --phase Failed: the failed job only" bash -c \
  "[[ \$('$AJ_BIN' list --namespace '$ns' --phase Failed | awk 'NR > 1 { print \$1 }' | xargs) == runfail ]]"
expect_ok "list -l: the API server's label selector" bash -c \
  "'$AJ_BIN' list --namespace '$ns' -l 'nope=1' 2>&1 | grep -qx 'No resources found in $ns namespace.'"
"$AJ_BIN" list --namespace "$ns" -w >"$work/w.out" 2>&1 &
wpid=$!
expect_ok "list -w prints the rows" wait_for 20 grep -qE "^runf +volcano +Succeeded +2 " "$work/w.out"
aj delete runf >"$work/del1.out" 2>&1
expect_eq "delete of an ended job: no cancel, deleted" "ajjob.aj.dev/runf deleted" cat "$work/del1.out"
expect_ok "list -w prints it Deleted" wait_for 20 grep -qE "^runf +volcano +Deleted +2 " "$work/w.out"
aj delete lgint >"$work/del2.out" 2>&1
expect_eq "delete of a running job: cancelled first, then deleted" "ajjob.aj.dev/lgint cancel requested
ajjob.aj.dev/lgint Cancelled: cancelled by request (aj.dev/cancel)
ajjob.aj.dev/lgint deleted" grep -v -e "Cancelling" -e "^aj: still waiting: " "$work/del2.out"
# (the wait's notices: a busy API server may refuse or expire the watch, which aj says and resumes)
expect_ok "...its Volcano Job is gone" bash -c "! '$AJ_KUBECTL' -n '$ns' get jobs.batch.volcano.sh lgint"
expect_ok "list -w saw it Cancelled" grep -qE "^lgint +volcano +Cancelled " "$work/w.out"
expect_eq "list -w printed the header once" "1" grep -c "^NAME " "$work/w.out"
kill -INT "$wpid"
sleep 2
kill "$wpid" 2>/dev/null
wait "$wpid"
expect_eq "Ctrl-C ends list -w with 130" "130" echo "$?"
aj delete --all --phase Failed >"$work/del3.out" 2>&1
expect_eq "delete --all --phase Failed" "ajjob.aj.dev/runfail deleted" cat "$work/del3.out"
expect_eq "...the others stay" "lg lghuge" bash -c \
  "'$AJ_BIN' list --namespace '$ns' | awk 'NR > 1 { print \$1 }' | xargs"
expect_fail "delete of a missing one" "ajjob.aj.dev/nope not found in namespace $ns" aj delete nope
finish
