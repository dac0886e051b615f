#!/usr/bin/env bash
# The cluster half of the CLI against the real API server and the real
# controller: aj run (create, AlreadyExists, API errors, unreachable server),
# list, status, cancel, --wait, and which context and namespace aj run picks.
# The script acts as Volcano by writing the Volcano Jobs' status. Its
# controller watches only this script's namespace; a second namespace holds
# AjJobs whose status the script writes by hand, to check what aj prints.
source "$(dirname "$0")/lib.sh"
: "${AJ_BIN:?AJ_BIN must name the aj executable}"
: "${AJ_CONTROLLER_BIN:?AJ_CONTROLLER_BIN must name the aj-controller executable}"

ns=$(new_namespace cli)
disp=$(new_namespace clidisp)
work=$(mktemp -d "${TMPDIR:-/tmp}/aj-it-cli.XXXXXX")
ctl_pid=
cleanup() {
  [[ -n $ctl_pid ]] && { kill -TERM "$ctl_pid" 2>/dev/null; wait "$ctl_pid" 2>/dev/null; }
  if ((t_fail)) && [[ -f $work/controller.log ]]; then
    echo "--- controller log"; tail -n 25 "$work/controller.log"
  fi
  rm -rf "$work" "$t_out"
}
trap cleanup EXIT

# --- a template home written for this namespace ---
export AJ_HOME=$work/home
mkdir -p "$AJ_HOME/template"
cat >"$AJ_HOME/template/common.yaml" <<'YAML'
config:
  target:
    service: volcano
    queue: default
    gpus_per_node: 1
    cpus_per_node: 4
    memory: 16Gi
  environment:
    image: registry.example.com/ml/train:1.0
YAML
cat >"$AJ_HOME/template/job.yaml" <<'YAML'
base: [common]
config:
  jobs:
    - name: train
      sku: "{nodes}xG{processes}"
      instance_count: 2
YAML

aj() { "$AJ_BIN" "$@"; }
# json_get EXPR: evaluate a Python expression over the JSON on stdin (bound to d)
json_get() { python3 -c 'import json, sys; d = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

"$AJ_CONTROLLER_BIN" --kubeconfig "$KUBECONFIG" --namespace "$ns" --health-addr 127.0.0.1 \
  --health-port 0 >"$work/controller.log" 2>&1 &
ctl_pid=$!

# --- usage ---
expect_fail "status needs a name" "missing AjJob NAME" aj status
expect_fail "status has no wide output" "expected yaml or json, got 'wide'" aj status x -o wide
expect_fail "list: -A and --namespace exclude each other" "exclude each other" aj list -A --namespace "$ns"
expect_fail "list: a bad namespace is a usage error" "--namespace: 'Bad_NS' is not a valid namespace" aj list --namespace Bad_NS

# --- run: creates exactly the AjJob --dry-run prints ---
expect_eq "run prints the created AjJob's name" "ajjob.aj.dev/r1 created" \
  aj run -t job --namespace "$ns" --name r1 -- python train.py --lr '3e-4'
expect_ok "the server holds what --dry-run prints" bash -c '
  want=$("$0" run -t job --namespace "$1" --name r1 --dry-run -o json -- python train.py --lr 3e-4)
  got=$("$2" -n "$1" get ajjob r1 -o json)
  python3 -c "import json, sys
w, g = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert w[\"spec\"] == g[\"spec\"], (w[\"spec\"], g[\"spec\"])
assert w[\"metadata\"][\"name\"] == g[\"metadata\"][\"name\"] == \"r1\"" "$want" "$got"' \
  "$AJ_BIN" "$ns" "$AJ_KUBECTL"
expect_fail "a second run with the same --name fails" \
  "aj: ajjob.aj.dev/r1 already exists in namespace $ns" \
  aj run -t job --namespace "$ns" --name r1 python train.py
expect_fail "an API error shows the server's Status message" \
  'NotFound (HTTP 404): namespaces "no-such-ns-'"$ns"'" not found' \
  aj run -t job --namespace "no-such-ns-$ns" --name r2 python train.py
expect_eq "-o json prints the created object" "r3 $ns" bash -c \
  "'$AJ_BIN' run -t job --namespace '$ns' --name r3 -o json python train.py | python3 -c 'import json, sys; m = json.load(sys.stdin)[\"metadata\"]; print(m[\"name\"], m[\"namespace\"])'"

# --- status and list, once the controller has submitted it ---
expect_ok "the controller submits r1" wait_for 30 phase_is r1 Submitted
aj status r1 --namespace "$ns" >"$work/status.txt" 2>&1
expect_ok "status shows the phase" grep -qE '^Phase: +Submitted$' "$work/status.txt"
expect_ok "status shows the backend" grep -qE '^Backend: +volcano$' "$work/status.txt"
expect_ok "status shows the Volcano Job" grep -qE '^Backend job: +r1$' "$work/status.txt"
expect_ok "status shows the command, quoted where needed" grep -qE "^Command: +python train.py --lr 3e-4\$" "$work/status.txt"
expect_ok "status lists the conditions" grep -qE '^  Submitted +True +VolcanoJob[A-Za-z]+ +[0-9]+s ' "$work/status.txt"
expect_eq "status -o json prints the object without managedFields" "Submitted False" bash -c \
  "'$AJ_BIN' status r1 --namespace '$ns' -o json | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d[\"status\"][\"phase\"], \"managedFields\" in d[\"metadata\"])'"
expect_fail "status of a missing AjJob" "aj: ajjob.aj.dev/nope not found in namespace $ns" \
  aj status nope --namespace "$ns"

aj list --namespace "$ns" >"$work/list.txt" 2>&1
expect_eq "list header, aligned" "NAME   BACKEND   PHASE       NODES   AGE" head -n1 "$work/list.txt"
expect_ok "list row for r1" grep -qE '^r1 +volcano +Submitted +2 +[0-9]+s$' "$work/list.txt"
expect_eq "list -o wide adds PLACED and MESSAGE" "NAME BACKEND PHASE NODES AGE PLACED MESSAGE" bash -c \
  "'$AJ_BIN' list --namespace '$ns' -o wide | head -n1 | tr -s ' '"
expect_ok "list -o wide shows the message" bash -c \
  "'$AJ_BIN' list --namespace '$ns' -o wide | grep -qE '^r1 +volcano +Submitted +2 +[0-9]+s +- +Volcano Job r1 (submitted|is Pending)\$'"
expect_ok "list -A puts the namespace first" bash -c \
  "'$AJ_BIN' list -A | grep -qE '^$ns +r1 +volcano +Submitted '"
expect_eq "list -o json prints the items" "r1 r3" bash -c \
  "'$AJ_BIN' list --namespace '$ns' -o json | python3 -c 'import json, sys; print(\" \".join(sorted(i[\"metadata\"][\"name\"] for i in json.load(sys.stdin)[\"items\"])))'"
empty=$(new_namespace cliempty)
expect_eq "list of an empty namespace says so on stderr" "No resources found in $empty namespace." \
  bash -c "'$AJ_BIN' list --namespace '$empty' 2>&1 >/dev/null"

# --- what list and status print for a status written by hand (no controller there) ---
now=$(date +%s)
ago() { date -u -d "@$((now - $1))" +%Y-%m-%dT%H:%M:%SZ; }
expect_ok "an AjJob for the display checks" aj run -t job --namespace "$disp" --name d1 python train.py
cond() { # type status reason seconds-ago message
  printf '{"type":"%s","status":"%s","reason":"%s","lastTransitionTime":"%s","message":"%s"}' \
    "$1" "$2" "$3" "$(ago "$4")" "$5"
}
conds="$(cond Submitted True Created 12310 'Volcano Job v-d1 submitted'),$(cond Running True Started 277300 ''),$(cond Succeeded False Started 882000 ''),$(cond Failed False Started 34646400 ''),$(cond Old True Seen 1520 ''),$(cond Recent True Seen 272 ''),$(cond Ancient True Seen 69120000 '')"
expect_ok "write a status by hand" k -n "$disp" patch ajjob d1 --subresource=status --type=merge -p \
  "{\"status\":{\"phase\":\"Running\",\"backend\":\"volcano\",\"message\":\"first line\\nsecond line\",\"volcano\":{\"jobName\":\"v-d1\"},\"conditions\":[$conds]}}"
aj status d1 --namespace "$disp" >"$work/d1.txt" 2>&1
# Ages as kubectl prints them: 12310 s = 3h25m10s; 277300 s = 3d5h1m40s; 882000 s = 10d5h;
# 34646400 s = 401 d; 1520 s = 25m20s; 272 s = 4m32s; 69120000 s = 800 d.
expect_ok "3h25m10s is 3h25m" grep -qE '^  Submitted +True +Created +3h25m +Volcano Job v-d1 submitted$' "$work/d1.txt"
expect_ok "3d5h1m is 3d5h" grep -qE '^  Running +True +Started +3d5h +-$' "$work/d1.txt"
expect_ok "10d5h is 10d" grep -qE '^  Succeeded +False +Started +10d +-$' "$work/d1.txt"
expect_ok "401 days stay days" grep -qE '^  Failed +False +Started +401d +-$' "$work/d1.txt"
expect_ok "800 days are 2y70d" grep -qE '^  Ancient +True +Seen +2y70d +-$' "$work/d1.txt"
expect_ok "25m20s is 25m" grep -qE '^  Old +True +Seen +25m +-$' "$work/d1.txt"
expect_ok "4m32s keeps its seconds" grep -qE '^  Recent +True +Seen +4m3[2-9]s +-$' "$work/d1.txt"
expect_ok "the Volcano Job comes from status.volcano.jobName" grep -qE '^Backend job: +v-d1$' "$work/d1.txt"
expect_ok "a message of several lines stays on one" grep -qE '^Message: +first line; second line$' "$work/d1.txt"
expect_ok "list -o wide: the message on one line" bash -c \
  "'$AJ_BIN' list --namespace '$disp' -o wide | grep -qE '^d1 +volcano +Running +2 +[0-9]+s +- +first line; second line\$'"
expect_eq "a job without status is Pending, unknown backend '-'" "d2 - Pending 2" bash -c \
  "'$AJ_BIN' run -t job --namespace '$disp' --name d2 python t.py >/dev/null && '$AJ_BIN' list --namespace '$disp' | awk '\$1 == \"d2\" {print \$1, \$2, \$3, \$4}'"

# --- cancel ---
expect_eq "cancel prints the request" "ajjob.aj.dev/r1 cancel requested" aj cancel r1 --namespace "$ns"
expect_eq "the annotation is set" "true" k -n "$ns" get ajjob r1 -o jsonpath='{.metadata.annotations.aj\.dev/cancel}'
# (no garbage collector on this control plane: the script finishes the Foreground deletion)
deleting() { [[ -n $(k -n "$ns" get jobs.batch.volcano.sh "$1" -o jsonpath='{.metadata.deletionTimestamp}') ]]; }
expect_ok "the controller deletes its Volcano Job" wait_for 30 deleting r1
expect_ok "...and says Cancelling meanwhile" phase_is r1 Cancelling
finish_foreground_delete r1
expect_ok "the controller cancels it" wait_for 30 phase_is r1 Cancelled
expect_ok "its Volcano Job is gone" wait_for 30 bash -c "! '$AJ_KUBECTL' -n '$ns' get jobs.batch.volcano.sh r1"
expect_eq "cancelling an ended job changes nothing" "ajjob.aj.dev/r1 already Cancelled; nothing to cancel" \
  aj cancel r1 --namespace "$ns"
expect_fail "cancel of a missing AjJob" "ajjob.aj.dev/nope not found in namespace $ns" aj cancel nope --namespace "$ns"

# --- run --wait: one line per phase, exit status from the end ---
# wait_run NAME: start `aj run --wait` in the background (the binary itself, so that its pid is
# the one signalled); its output goes to $work/NAME.out
wait_run() {
  "$AJ_BIN" run -t job --namespace "$ns" --name "$1" --wait python train.py >"$work/$1.out" 2>"$work/$1.err" &
  echo $! >"$work/$1.pid"
}
wait_run ok1
expect_ok "ok1: the Volcano Job appears" wait_for 30 volcano_exists ok1
set_volcano_phase ok1 Running
expect_ok "ok1: Running is printed" wait_for 30 grep -q '^ajjob.aj.dev/ok1 Running: Volcano Job ok1 is Running$' "$work/ok1.out"
set_volcano_phase ok1 Completed
wait "$(cat "$work/ok1.pid")"; rc=$?
expect_eq "run --wait exits 0 when the job succeeds" "0" echo "$rc"
# Pending shows only when the watch sees the AjJob before the controller's first status write.
expect_ok "...having printed each phase once, in order" bash -c \
  "awk '{sub(/:\$/, \"\", \$2); printf \"%s \", \$2}' '$work/ok1.out' | grep -qxE 'created (Pending )?Submitted Running Succeeded '"
expect_eq "...and said on stderr, once, that no code went with it" \
  "aj: no code is transferred: the first job's submit_args.env sets neither AMLT_PERSISTENT_VOLUME_NAME nor AMLT_PERSISTENT_VOLUME_MOUNT_DIR" \
  cat "$work/ok1.err"

wait_run bad1
expect_ok "bad1: the Volcano Job appears" wait_for 30 volcano_exists bad1
set_volcano_phase bad1 Failed
wait "$(cat "$work/bad1.pid")"; rc=$?
expect_eq "run --wait exits 1 when the job fails" "1" echo "$rc"
expect_ok "...and prints the Failed phase" grep -q '^ajjob.aj.dev/bad1 Failed: Volcano Job bad1 is Failed (no failed pod is left to name)$' "$work/bad1.out"

# status --wait on a running job; the cancel ends it with status 1.
expect_ok "st1 created" aj run -t job --namespace "$ns" --name st1 python train.py
expect_ok "st1 submitted" wait_for 30 phase_is st1 Submitted
"$AJ_BIN" status st1 --namespace "$ns" --wait >"$work/st1.out" 2>&1 &
st_pid=$!
sleep 1
aj cancel st1 --namespace "$ns" >/dev/null
wait_for 30 deleting st1 >/dev/null
finish_foreground_delete st1
wait "$st_pid"; rc=$?
expect_eq "status --wait exits 1 when the job is cancelled" "1" echo "$rc"
expect_ok "...after printing Cancelled" grep -q '^ajjob.aj.dev/st1 Cancelled: cancelled by request' "$work/st1.out"
expect_eq "status --wait on an ended job returns at once" "1" bash -c \
  "'$AJ_BIN' status st1 --namespace '$ns' --wait >/dev/null; echo \$?"

# Ctrl-C stops waiting, not the job.
wait_run int1
expect_ok "int1: submitted" wait_for 30 phase_is int1 Submitted
expect_ok "int1: the wait has printed Submitted" wait_for 30 grep -q '^ajjob.aj.dev/int1 Submitted' "$work/int1.out"
kill -INT "$(cat "$work/int1.pid")"
wait "$(cat "$work/int1.pid")"; rc=$?
expect_eq "SIGINT ends the wait with 130" "130" echo "$rc"
expect_ok "...saying how to follow it again" grep -qF "aj status int1 --namespace $ns --wait" "$work/int1.err"
expect_eq "...and the job goes on" "Submitted " k -n "$ns" get ajjob int1 \
  -o jsonpath='{.status.phase} {.metadata.annotations.aj\.dev/cancel}'

# --- which context and namespace aj run uses ---
ns_a=$(new_namespace clia)
ns_b=$(new_namespace clib)
ns_t=$(new_namespace clit)
kc=$work/kubeconfig
kcfg() { KUBECONFIG=$kc "$AJ_KUBECTL" config "$@" >/dev/null; }
kcfg set-cluster cp --server="$AJ_KUBE_SERVER" --certificate-authority="$AJ_KUBE_CA" --embed-certs
kcfg set-credentials admin --token="$AJ_KUBE_TOKEN"
kcfg set-context alpha --cluster=cp --user=admin --namespace="$ns_a"
kcfg set-context beta --cluster=cp --user=admin --namespace="$ns_b"
kcfg use-context alpha
cat >"$AJ_HOME/template/beta.yaml" <<'YAML'
base: [job]
config:
  target:
    context: beta
YAML
cat >"$AJ_HOME/template/beta-ns.yaml" <<YAML
base: [beta]
config:
  target:
    namespace: $ns_t
YAML
cat >"$AJ_HOME/template/lost.yaml" <<'YAML'
base: [job]
config:
  target:
    context: nowhere
YAML
# Names unique to this run: the namespaces of earlier runs stay behind.
id=${ns##*-}
where() { k get ajjobs -A --field-selector "metadata.name=$1-$id" -o jsonpath='{.items[*].metadata.namespace}'; }
created_in() { # created_in NAME aj-run-args...: run, then print the AjJob's namespace
  local name=$1; shift
  aj run --kubeconfig "$kc" --name "$name-$id" "$@" python train.py >/dev/null && where "$name"
}
expect_eq "no context anywhere: the current context and its namespace" "$ns_a" created_in p1 -t job
expect_eq "target.context picks the context (and its namespace)" "$ns_b" created_in p2 -t beta
expect_eq "--context beats target.context" "$ns_a" created_in p3 -t beta --context alpha
expect_eq "target.namespace beats the context's namespace" "$ns_t" created_in p4 -t beta-ns
expect_eq "--namespace beats target.namespace" "$ns_a" created_in p5 -t beta-ns --namespace "$ns_a"
expect_eq "KUBECONFIG is used without --kubeconfig" "$ns_b" bash -c \
  "KUBECONFIG='$kc' '$AJ_BIN' run -t job --context beta --name p6-$id python t.py >/dev/null && '$AJ_KUBECTL' get ajjobs -A --field-selector metadata.name=p6-$id -o jsonpath='{.items[*].metadata.namespace}'"
expect_fail "an unknown target.context names the template line" \
  "template/lost.yaml:4:14: config.target.context: the template selects context \"nowhere\"" \
  aj run --kubeconfig "$kc" -t lost python train.py
expect_fail "an unknown --context" 'context "nowhere" (from --context) not found' \
  aj run --kubeconfig "$kc" -t job --context nowhere python train.py

# each_command WHAT KUBECONFIG RC LINE COMMAND...: each aj COMMAND (one string) run with that
# kubeconfig exits RC and prints LINE once on stderr, and never the token. RC 1: nothing else on
# stderr (the one line is the failure's cause).
each_command() {
  local what=$1 kc=$2 want=$3 line=$4 cmd rc words
  shift 4
  for cmd in "$@"; do
    read -r -a words <<<"$cmd"
    aj "${words[0]}" --kubeconfig "$kc" "${words[@]:1}" >"$work/cmd.out" 2>"$work/cmd.err"
    rc=$?
    expect_eq "$what: aj ${words[0]} exits $want" "$want" echo "$rc"
    expect_ok "...with this line once on stderr: $line" bash -c \
      "[[ \$(grep -cF -- \"\$0\" '$work/cmd.err') == 1 ]] && { (($want == 0)) || [[ \$(wc -l <'$work/cmd.err') == 1 ]]; }" "$line"
    expect_ok "...and no token in its output" bash -c "! grep -qF -- \"\$0\" '$work/cmd.out' '$work/cmd.err'" \
      "$AJ_KUBE_TOKEN"
  done
}

# --- insecure-skip-tls-verify: honoured by aj (one warning line), as kubectl does; refused by the controller ---
ikc=$work/insecure.kubeconfig
ikcfg() { KUBECONFIG=$ikc "$AJ_KUBECTL" config "$@" >/dev/null; }
ikcfg set-cluster cp --server="$AJ_KUBE_SERVER" --insecure-skip-tls-verify=true
ikcfg set-credentials admin --token="$AJ_KUBE_TOKEN"
ikcfg set-context x --cluster=cp --user=admin --namespace="$ns"
ikcfg use-context x
expect_ok "the kubeconfig asks for no verification and holds no CA" bash -c \
  "grep -q 'insecure-skip-tls-verify: true' '$ikc' && ! grep -q certificate-authority '$ikc'"
expect_ok "kubectl uses it" "$AJ_KUBECTL" --kubeconfig "$ikc" get ajjob r1
each_command "insecure-skip-tls-verify" "$ikc" 0 \
  "aj: warning: the certificate of $AJ_KUBE_SERVER is not verified (insecure-skip-tls-verify in $ikc)" \
  "list" "status r1" "run -t job --name ins1 python train.py"
expect_eq "the AjJob aj run created unverified is there" "ins1" k -n "$ns" get ajjob ins1 -o jsonpath='{.metadata.name}'
# list -w streams over a WebSocket watch (libwebsockets, not libcurl): the same setting reaches it.
timeout 5 "$AJ_BIN" list -w --kubeconfig "$ikc" >"$work/ins.out" 2>"$work/ins.err"
expect_ok "insecure-skip-tls-verify: aj list -w watches (one warning line, the AjJob listed)" bash -c \
  "[[ \$(wc -l <'$work/ins.err') == 1 ]] && grep -q '^ins1 ' '$work/ins.out'"
expect_fail "the controller refuses it, naming the key" \
  "clusters[0].cluster.insecure-skip-tls-verify: refused: the controller never turns TLS verification off" \
  timeout 20 "$AJ_CONTROLLER_BIN" --kubeconfig "$ikc" --namespace "$ns" --health-port 0
# (by hand: kubectl config set-cluster --certificate-authority turns the flag off)
sed -i "s#^    insecure-skip-tls-verify: true#&\n    certificate-authority: $AJ_KUBE_CA#" "$ikc"
expect_fail "with a CA as well, aj refuses the contradiction" \
  "insecure-skip-tls-verify: set either insecure-skip-tls-verify or a certificate-authority, not both" \
  aj list --kubeconfig "$ikc"
expect_fail "...as kubectl does" "specifying a root certificates file with the insecure flag is not allowed" \
  "$AJ_KUBECTL" --kubeconfig "$ikc" get ajjob r1

# --- an unreachable server: one line naming it ---
sed "s#server: .*#server: https://127.0.0.1:1#" "$kc" >"$work/down.kubeconfig"
each_command "unreachable server" "$work/down.kubeconfig" 1 \
  "cannot reach the API server at https://127.0.0.1:1" \
  "run -t job python train.py" "list" "status r1" "cancel r1"

finish
