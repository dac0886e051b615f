#!/usr/bin/env bash
# Placement on the cluster fixture (real Volcano, real Kueue, kwok's nodes), through aj-controller
# with deploy/rbac.yaml's permissions: `aj run` of a placement leaf writes one AjJob, and the
# controller places it on the first candidate that can start it now, recording every candidate's
# reason in status.placement, a Placed Event and the attempt label on the object:
#   - a candidate whose GPU product is on no node is skipped with that reason;
#   - a Kueue candidate whose ClusterQueue cannot hold the job sends it to Volcano;
#   - between two that can start it, the one with a known expected wait (learnt from a job
#     placed before) goes first;
#   - when no candidate can start it, it waits unplaced with every reason, and is placed once a
#     queue's capability grows;
#   - fail-over: a candidate whose job does not start within max_wait is cancelled, and once
#     its object is gone the job is placed among the rest; with none left it fails;
#   - Azure candidates (the loopback Azure peer as ARM): an aml candidate on a full compute is
#     passed over with the compute's node counts, one with free nodes goes first; a sing
#     candidate is judged by the VCs' quotas (placed with the VC in its reason, or waiting with
#     each VC's shortfall); with Azure unreachable the Azure rows are Unknown with why and the
#     job goes to a cluster candidate; an aml attempt that does not start within max_wait is
#     cancelled and, once Azure says Canceled, the job placed on Volcano;
#   - the controller SIGKILLed while many placement AjJobs arrive: every one placed once;
#   - `aj place` run just before (or while it waits) ranks and picks as the controller did:
#     its -o json is the AjJob's status.placement ranking, and it creates nothing; with the
#     user's credential it reads Azure: an aml candidate with free nodes CanStartNow with the
#     compute's counts, a sing one with the VC's quota, one naming no workspace Unknown saying
#     how to name one, and with ARM unreachable the Azure rows Unknown with why.
# A watcher checks, every half second, that no AjJob ever has more than one backend object.
source "$(dirname "$0")/lib.sh"
cluster_test place

cp -r "$repo_root/examples/.azure_jobs" "$work/home"
export AJ_HOME=$work/home
tpl() { printf '%s\n' "$2" >"$work/home/template/$1.yaml"; }
tpl p-b200 "base: volcano
config:
  target: {namespace: $ns, queue: $ns-any, node_selector: {nvidia.com/gpu.product: B200}}"
tpl p-vq "base: volcano
config:
  target: {namespace: $ns}"
tpl p-kq "base: kube
config:
  target: {namespace: $ns, queue: team-a}"
tpl p-tight "base: volcano
config:
  target: {namespace: $ns, queue: $ns-tight}"
tpl place-infeasible "base: []
config:
  placement: {candidates: [p-b200, p-vq]}"
tpl place-kueue "base: []
config:
  placement: {candidates: [p-kq, p-vq]}"
tpl place-wait "base: []
config:
  placement: {candidates: [p-tight]}"
# Kueue's queue nomatch: its ClusterQueue has room, but selects no namespace of this test, so
# Kueue never admits the job (the views do not read namespace selectors): it does not start.
tpl p-stuck "base: kube
config:
  target: {namespace: $ns, queue: nomatch}"
tpl place-failover "base: []
config:
  placement: {candidates: [p-stuck, p-vq], max_wait: 30s}"
tpl place-giveup "base: []
config:
  placement: {candidates: [p-stuck], max_wait: 30s}"
# Azure: computes gpu-cluster (6 of 8 nodes free) and gpu-full (none), VCs vc-big and vc-small;
# each case beside a Volcano candidate of its own (no wait history ranks it first).
# (the examples' account names a workspace and subscription of their own: the peer's here)
sub=00000000-1111-2222-3333-444444444444
tpl p-aml "base: aml
config:
  target: {namespace: $ns, name: gpu-cluster, workspace_name: ws-main}"
tpl p-aml-full "base: aml
config:
  target: {namespace: $ns, name: gpu-full, workspace_name: ws-main}"
tpl p-sing "base: sing
config:
  target: {namespace: $ns, subscription_id: $sub, resource_group: sing-rg, workspace_name: ws-main}"
for i in 1 2 3 4; do tpl "p-az-vq$i" "base: volcano
config:
  target: {namespace: $ns}"; done
tpl place-aml-full "base: []
config:
  placement: {candidates: [p-aml-full, p-az-vq1]}"
tpl place-aml "base: []
config:
  placement: {candidates: [p-aml, p-az-vq2]}"
tpl place-sing "base: []
config:
  placement: {candidates: [p-sing, p-b200]}"
tpl place-aml-failover "base: []
config:
  placement: {candidates: [p-aml, p-az-vq4], max_wait: 30s}"
tpl place-azure-down "base: []
config:
  placement: {candidates: [p-aml, p-sing, p-az-vq3]}"
# for aj place: an aml candidate naming no subscription or resource group (the account's emptied)
tpl p-aml-nows "base: aml
config:
  target: {namespace: $ns, name: gpu-cluster, subscription_id: '', resource_group: '', workspace_name: ws-main}"
tpl place-nows "base: []
config:
  placement: {candidates: [p-aml-nows, p-sing, p-az-vq3]}"

# Kueue's LocalQueue team-a here, in front of the cluster's ClusterQueue team-a (64 GPUs in two
# flavors of 32); a Volcano queue of 8 GPUs, and one without limits (a candidate creating the
# same objects as another would be kept once).
k apply -f - >/dev/null <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: team-a, namespace: $ns}
spec: {clusterQueue: team-a}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $ns-tight}
spec: {weight: 1, reclaimable: false, capability: {nvidia.com/gpu: 8}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $ns-any}
spec: {weight: 1, reclaimable: false}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: $ns-nomatch}
spec:
  namespaceSelector: {matchLabels: {aj.dev/never: "true"}}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: a100
      resources:
      - {name: cpu, nominalQuota: 512}
      - {name: memory, nominalQuota: 8Ti}
      - {name: nvidia.com/gpu, nominalQuota: 32}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: nomatch, namespace: $ns}
spec: {clusterQueue: $ns-nomatch}
YAML
trap 'k delete queues.scheduling.volcano.sh "$ns-tight" "$ns-any" --wait=false >/dev/null 2>&1;
  k delete clusterqueues.kueue.x-k8s.io "$ns-nomatch" --wait=false >/dev/null 2>&1;
  [[ -n ${peer_pid:-} ]] && kill "$peer_pid" 2>/dev/null; cluster_cleanup' EXIT

# The Azure peer as ARM and IMDS; the controller forwards aml and sing with its managed identity.
start_azure_peer "$work"
vc() { # vc NAME LIMIT USED: a VC with Premium NDv4 (40 GB A100) quota, in GPUs
  printf '{"subscriptionId": "%s", "resourceGroup": "sing-rg", "name": "%s", "resource": {"location": "westus2",
    "properties": {"managed": {"quotas": {"westus2": {"limits": [
    {"id": "NDv4", "slaTier": "Premium", "limit": %d, "used": %d}]}}}}}}' "$sub" "$1" "$2" "$3"
}
peer_post config '{"status_sequence": ["NotStarted", "Queued", "Running"],
  "subscriptions": [{"subscriptionId": "'$sub'", "state": "Enabled"}],
  "vcs": ['"$(vc vc-small 32 31), $(vc vc-big 64 16)"'],
  "computes": {"gpu-cluster": {"max": 8, "current": 2, "running": 2},
               "gpu-full": {"max": 4, "current": 4, "running": 3, "unusable": 1}}}'
cat >"$work/aj-controller-azure" <<SH
#!/bin/sh
exec env -u AZURE_CLIENT_ID -u AZURE_TENANT_ID -u AZURE_CLIENT_SECRET -u AZURE_FEDERATED_TOKEN_FILE \
  AZURE_POD_IDENTITY_AUTHORITY_HOST="$peer" PATH=/nonexistent "$AJ_CONTROLLER_BIN" "\$@" \
  --azure-workspace "$sub/ml-rg/ws-main" --azure-arm-endpoint "$peer" --azure-poll 1 \
  --azure-allow "$ns=workspace:*/ml-rg/ws-main,vc:$sub/sing-rg/*"
SH
chmod +x "$work/aj-controller-azure"
AJ_CONTROLLER_BIN=$work/aj-controller-azure

# place NAME TEMPLATE NODES: the AjJob aj run writes for the placement leaf, without code (kwok
# runs no container), applied in $ns.
place() {
  mkdir -p "$work/src"
  (cd "$work/src" && "$AJ_BIN" run -t "$2" --namespace "$ns" --name "$1" -n "$3" --dry-run -o json \
     -- python train.py) | python3 -c '
import json, sys
job = json.load(sys.stdin)
job["spec"].pop("code", None)
print(json.dumps(job))' | k apply -f - >/dev/null
}
# aj_place TEMPLATE NODES [ARGS...]: what aj place prints for the job place() would write (the
# examples' templates name another context: this cluster's is given)
aj_place() {
  (cd "$work/src" && "$AJ_BIN" place -t "$1" --context "$(k config current-context)" \
     --namespace "$ns" -n "$2" "${@:3}" -- python train.py)
}
# same_ranking FILE AJJOB: aj place's -o json in FILE is the AjJob's status.placement ranking
# (every candidate's fields in rank order, the pick, max_wait). An expected wait only where the
# other has one: a finished job's status no longer says when it started Running (the controller
# learnt that while it ran, aj place reads its end), so the two values may differ.
same_ranking() {
  k -n "$ns" get ajjob "$2" -o json | python3 -c '
import json, sys
mine = json.load(open(sys.argv[1]))
st = json.load(sys.stdin)["status"]["placement"]
for c in mine["candidates"] + st.get("candidates", []):
    if "expectedWaitSeconds" in c:
        c["expectedWaitSeconds"] = "known"
# the controller charges its snapshot with the placements made from it, aj place reads afresh:
# a charged reason is compared by the object it names
for a, b in zip(mine["candidates"], st.get("candidates", [])):
    if " since the last read" in b.get("reason", ""):
        a["reason"], b["reason"] = a.get("reason", "").split(":")[0], b["reason"].split(":")[0]
for key in ("chosen", "maxWaitSeconds", "candidates"):
    if mine.get(key) != st.get(key):
        print(key + ": aj place says", json.dumps(mine.get(key)), "the controller", json.dumps(st.get(key)))
        sys.exit(1)
print(" > ".join(c["name"] + " " + c["state"] for c in mine["candidates"]), "; chosen:", mine.get("chosen"))
' "$1"
}
ajjobs_count() { k -n "$ns" get ajjob -o name | wc -l; }
chosen() { jpath "$1" '{.status.placement.chosen}'; }
chosen_is() { [[ $(chosen "$1") == "$2" ]]; }
reason_of() { # reason_of AJJOB CANDIDATE
  jpath "$1" "{.status.placement.candidates[?(@.name==\"$2\")].reason}"
}
objects() { # objects NAME: the backend objects named NAME (Volcano Jobs and batch/v1 Jobs)
  echo $(k -n "$ns" get jobs.batch.volcano.sh,jobs.batch -o name 2>/dev/null | grep -E "/$1\$")
}
attempt_label() { k -n "$ns" get "$1" -o jsonpath='{.metadata.labels.aj\.dev/attempt}'; }

# The watcher: every half second, every AjJob's backend objects; a name with two is a violation.
# Kueue's Workload of a batch/v1 Job counts as a copy too, until it is gone. The Workloads are
# listed before the Jobs: one whose Job is gone by then is a copy of its own (its Job, deleted
# in the foreground, goes only after it, so the Job listed first could not be told apart).
(
  while :; do
    w=$(k -n "$ns" get workloads.kueue.x-k8s.io -o jsonpath='{range .items[*]}{.metadata.ownerReferences[0].name}{"\n"}{end}' 2>/dev/null)
    j=$(k -n "$ns" get jobs.batch.volcano.sh,jobs.batch -o jsonpath='{range .items[*]}{.apiVersion} {.metadata.name}{"\n"}{end}' 2>/dev/null)
    batch=$(awk '$1 == "batch/v1" { print $2 }' <<<"$j")
    { awk 'NF == 2 { print $2 }' <<<"$j"
      grep -v '^$' <<<"$w" | while read -r n; do grep -qx "$n" <<<"$batch" || echo "$n"; done
    } | sort | uniq -d | sed 's/^/two copies: /' >>"$work/violations"
    echo >>"$work/observations"
    sleep 0.5
  done
) &
echo $! >"$work/copies.watch"
: >"$work/violations"

start_controller main

# --- Azure candidates, judged from the compute's nodes and the VCs' quotas ---
place paf place-aml-full 1
expect_ok "AjJob paf: the aml candidate's compute is full, placed on template/p-az-vq1" \
  wait_for 60 chosen_is paf template/p-az-vq1
expect_eq "...the aml row says why, from the compute's node counts" \
  "Waits compute gpu-full: 0 of 4 nodes free (3 running, 1 unusable), the job needs 1" \
  jpath paf '{.status.placement.candidates[?(@.name=="template/p-aml-full")].state} {.status.placement.candidates[?(@.name=="template/p-aml-full")].reason}'
expect_ok "...its Volcano Job exists" wait_for 30 volcano_exists paf
# aj place reads the Azure part with the user's credential (a service principal the peer
# serves), in the workspace AJ_AZURE_WORKSPACE names (the controller's --azure-workspace here)
aj_place_az() {
  AZURE_TENANT_ID=tenant-1 AZURE_CLIENT_ID=client-1 AZURE_CLIENT_SECRET=not-a-real-secret \
    AZURE_AUTHORITY_HOST=$peer AJ_AZURE_ARM_ENDPOINT=${arm:-$peer} aj_place "$@"
}
AJ_AZURE_WORKSPACE=$sub/ml-rg/ws-main aj_place_az place-aml 2 -o json >"$work/pa.place.json"
AJ_AZURE_WORKSPACE=$sub/ml-rg/ws-main aj_place_az place-aml 2 >"$work/pa.place" 2>&1
cat "$work/pa.place"
expect_ok "aj place -t place-aml -n 2: the aml candidate CanStartNow with the compute's free nodes" \
  grep -qE "^1 +template/p-aml +aml +[^ ]*/ws-main/gpu-cluster +CanStartNow +([0-9]+s|-) +compute gpu-cluster: 6 of 8 nodes free\$" "$work/pa.place"
expect_ok "...would submit to it" grep -qx 'would submit to template/p-aml' "$work/pa.place"
place pa place-aml 2
expect_ok "AjJob pa: 2 of 6 free nodes, the aml candidate first in the user's order is chosen" \
  wait_for 60 chosen_is pa template/p-aml
expect_eq "...with the compute's free nodes as its reason" "compute gpu-cluster: 6 of 8 nodes free" \
  reason_of pa template/p-aml
expect_eq "...status.backend is aml" "aml" jpath pa '{.status.backend}'
expect_ok "aj place before pa ranked and picked as the controller then did" same_ranking "$work/pa.place.json" pa
expect_ok "...and the Azure ML job runs (the peer's compute)" wait_for 60 phase_is pa Running
expect_eq "...on the workspace's compute" "1" requests PUT "/workspaces/ws-main/jobs/k8s-$ns-pa-"
expect_eq "...the computes listed, never one GET per compute" "0" requests GET "/computes/"
AJ_AZURE_WORKSPACE=$sub/ml-rg/ws-main aj_place_az place-sing 2 -o json >"$work/ps.place.json"
AJ_AZURE_WORKSPACE=$sub/ml-rg/ws-main aj_place_az place-sing 2 >"$work/ps.place" 2>&1
cat "$work/ps.place"
expect_ok "aj place -t place-sing -n 2: the sing candidate CanStartNow on vc-big's quota" \
  grep -qE "^1 +template/p-sing +sing +.* +CanStartNow +([0-9]+s|-) +virtual cluster $sub/sing-rg/vc-big: Premium quota for 2 x ND12_v4 \\(2 units\\), 46 left\$" "$work/ps.place"
# no AJ_AZURE_WORKSPACE: p-sing names its own workspace, p-aml-nows none
aj_place_az place-nows 1 >"$work/pnw.place" 2>&1
cat "$work/pnw.place"
expect_ok "aj place, no workspace named: the aml row Unknown, saying how to name one" \
  grep -qE '^[0-9] +template/p-aml-nows +aml +.* +Unknown +([0-9]+s|-) +Azure ML computes unknown: no workspace is named: set target.subscription_id, resource_group and workspace_name in the template, or AJ_AZURE_WORKSPACE=SUBSCRIPTION/RESOURCE_GROUP/WORKSPACE$' "$work/pnw.place"
expect_ok "...the sing candidate, in the workspace its target names, CanStartNow on a VC's quota" \
  grep -qE "^1 +template/p-sing +sing +.* +CanStartNow +([0-9]+s|-) +virtual cluster $sub/sing-rg/vc-" "$work/pnw.place"
# Azure unreachable (ARM on a closed port): the Azure rows Unknown with why, the cluster's printed
arm=http://127.0.0.1:1 AJ_AZURE_WORKSPACE=$sub/ml-rg/ws-main aj_place_az place-azure-down 1 >"$work/pad.place" 2>&1
echo $? >"$work/pad.place.rc"
cat "$work/pad.place"
expect_eq "aj place, Azure unreachable: exit 0" "0" cat "$work/pad.place.rc"
expect_ok "...the aml row Unknown: Azure is unreachable" \
  grep -qE "^[0-9] +template/p-aml +aml +[^ ]*/ws-main/gpu-cluster +Unknown +([0-9]+s|-) +Azure ML computes unknown: Azure is unreachable: " "$work/pad.place"
expect_ok "...so is the sing row" \
  grep -qE '^[0-9] +template/p-sing +sing +.* +Unknown +([0-9]+s|-) +virtual clusters unknown: Azure is unreachable: ' "$work/pad.place"
expect_ok "...the Volcano candidate ranked first, and picked" bash -c \
  "grep -qE '^1 +template/p-az-vq3 +volcano +$ns/default +CanStartNow ' '$work/pad.place' && grep -qx 'would submit to template/p-az-vq3' '$work/pad.place'"
place ps place-sing 2
expect_ok "AjJob ps: the sing candidate fits vc-big's quota and is chosen" wait_for 60 chosen_is ps template/p-sing
expect_ok "...its reason names the VC and what is left" bash -c \
  "r=\$('$AJ_KUBECTL' -n '$ns' get ajjob ps -o jsonpath='{.status.placement.candidates[?(@.name==\"template/p-sing\")].reason}'); echo \"\$r\"; [[ \$r == 'virtual cluster $sub/sing-rg/vc-big: Premium quota for 2 x ND12_v4 (2 units), 46 left' ]]"
expect_ok "...and it runs on vc-big" wait_for 60 bash -c \
  "[[ \$('$AJ_KUBECTL' -n '$ns' get ajjob ps -o jsonpath='{.status.phase} {.status.azure.virtualCluster}') == 'Running vc-big' ]]"
expect_ok "aj place before ps ranked and picked as the controller then did" same_ranking "$work/ps.place.json" ps
place psw place-sing 64
sing_waits() { [[ $(reason_of psw template/p-sing) == "no virtual cluster has Premium quota for 64 x \"Singularity.ND12_v4\" (or a lower tier): $sub/sing-rg/vc-big: NDv4 Premium: 48 free, 64 needed"* ]]; }
expect_ok "AjJob psw (64 GPUs): waits unplaced with each VC's shortfall" wait_for 60 sing_waits
expect_eq "...nothing chosen, nothing submitted to Azure" "0" requests PUT "/jobs/k8s-$ns-psw-"
# Azure fail-over: jobs now stay queued; past max_wait the Azure job is cancelled, and once Azure
# says Canceled the job is placed again among the rest.
peer_post config '{"status_sequence": ["NotStarted", "Queued"]}'
place pfo place-aml-failover 1
expect_ok "AjJob pfo: placed on template/p-aml, free nodes and first in order" \
  wait_for 60 chosen_is pfo template/p-aml
expect_ok "...its Azure ML job is queued" wait_for 30 phase_is pfo Submitted
expect_ok "after max_wait (30 s) it moves to template/p-az-vq4" wait_for 120 chosen_is pfo template/p-az-vq4
expect_eq "...the Azure attempt given up with why, the second submitted" \
  "template/p-aml GaveUp it did not start within max_wait (30 s) | template/p-az-vq4 Submitted" \
  jpath pfo '{.status.placement.attempts[0].candidate} {.status.placement.attempts[0].outcome} {.status.placement.attempts[0].reason} | {.status.placement.attempts[1].candidate} {.status.placement.attempts[1].outcome}'
expect_eq "...its Azure ML job cancelled once" "1" requests POST "/jobs/k8s-$ns-pfo-[^/]*/cancel\$"
expect_ok "...the azure finalizer gone with the attempt" bash -c \
  "[[ \$('$AJ_KUBECTL' -n '$ns' get ajjob pfo -o jsonpath='{.metadata.finalizers}') != *aj.dev/azure-job* ]]"
expect_ok "...its Volcano Job exists, labelled attempt 2" wait_for 30 bash -c \
  "[[ \$('$AJ_KUBECTL' -n '$ns' get jobs.batch.volcano.sh pfo -o jsonpath='{.metadata.labels.aj\\.dev/attempt}') == 2 ]]"
k -n "$ns" delete ajjob pa ps psw >/dev/null
expect_ok "the Azure AjJobs deleted: their jobs cancelled, their finalizers gone" wait_for 60 bash -c \
  "[[ -z \$('$AJ_KUBECTL' -n '$ns' get ajjob pa ps psw -o name 2>/dev/null) ]]"
# Azure unreachable: the peer stopped; the next Azure read (30 s after the last) fails.
kill "$peer_pid"
wait "$peer_pid" 2>/dev/null
sleep 31
place pad place-azure-down 1
expect_ok "AjJob pad, Azure unreachable: placed on template/p-az-vq3" wait_for 90 chosen_is pad template/p-az-vq3
expect_ok "...the aml row is Unknown: Azure is unreachable" bash -c \
  "r=\$('$AJ_KUBECTL' -n '$ns' get ajjob pad -o jsonpath='{.status.placement.candidates[?(@.name==\"template/p-aml\")].state} {.status.placement.candidates[?(@.name==\"template/p-aml\")].reason}'); echo \"\$r\"; [[ \$r == 'Unknown Azure ML computes unknown: Azure is unreachable: '* ]]"
expect_ok "...so is the sing row" bash -c \
  "r=\$('$AJ_KUBECTL' -n '$ns' get ajjob pad -o jsonpath='{.status.placement.candidates[?(@.name==\"template/p-sing\")].state} {.status.placement.candidates[?(@.name==\"template/p-sing\")].reason}'); echo \"\$r\"; [[ \$r == 'Unknown virtual clusters unknown: Azure is unreachable: '* ]]"
expect_eq "...both ranked after the one that can start it" "template/p-az-vq3" \
  jpath pad '{.status.placement.candidates[0].name}'

# --- fail-over: the first candidate does not start within max_wait (first, while no history
# of waits ranks one that can start before another) ---
place pf place-failover 1
expect_ok "AjJob pf: placed on template/p-stuck first" wait_for 60 chosen_is pf template/p-stuck
expect_ok "...its batch/v1 Job exists, suspended by Kueue" wait_for 30 bash -c \
  "[[ \$('$AJ_KUBECTL' -n '$ns' get jobs.batch pf -o jsonpath='{.spec.suspend}') == true ]]"
expect_ok "after max_wait (30 s) it moves to template/p-vq" wait_for 120 chosen_is pf template/p-vq
expect_eq "...the first attempt given up with why, the second submitted" \
  "template/p-stuck GaveUp it did not start within max_wait (30 s) | template/p-vq Submitted" \
  jpath pf '{.status.placement.attempts[0].candidate} {.status.placement.attempts[0].outcome} {.status.placement.attempts[0].reason} | {.status.placement.attempts[1].candidate} {.status.placement.attempts[1].outcome}'
expect_eq "...the first candidate is excluded from the second ranking" "Excluded" \
  jpath pf '{.status.placement.candidates[?(@.name=="template/p-stuck")].state}'
expect_ok "...its Volcano Job exists, labelled attempt 2" wait_for 30 bash -c \
  "[[ \$('$AJ_KUBECTL' -n '$ns' get jobs.batch.volcano.sh pf -o jsonpath='{.metadata.labels.aj\\.dev/attempt}') == 2 ]]"
expect_eq "...and the batch/v1 Job is gone" "job.batch.volcano.sh/pf" objects pf
expect_ok "...and it runs to Succeeded" wait_for 120 phase_is pf Succeeded
expect_ok "aj list -o wide: PLACED names the candidate it runs on" bash -c \
  "'$AJ_BIN' list --namespace '$ns' -o wide | grep -qE '^pf +volcano +Succeeded +1 +[0-9a-z]+ +template/p-vq +'"
place pg place-giveup 1
expect_ok "AjJob pg, whose only candidate never starts: Failed after max_wait" wait_for 150 phase_is pg Failed
expect_eq "...with every attempt's reason" \
  "no candidate started the job within max_wait: template/p-stuck: it did not start within max_wait (30 s)" \
  jpath pg '{.status.message}'
expect_eq "...and nothing of it left" "" objects pg

# --- an infeasible first candidate is skipped with its reason ---
mkdir -p "$work/src"
before=$(ajjobs_count)
aj_place place-infeasible 1 -o json >"$work/pi.place.json" 2>"$work/pi.place.err"
echo $? >"$work/pi.place.rc"
expect_eq "aj place -t place-infeasible -o json: exit 0" "0" cat "$work/pi.place.rc"
expect_eq "...nothing on stderr" "" cat "$work/pi.place.err"
aj_place place-infeasible 1 >"$work/pi.place" 2>&1
cat "$work/pi.place"
expect_ok "aj place -t place-infeasible: a table like kubectl get" \
  grep -qE '^RANK +CANDIDATE +BACKEND +WHERE +STATE +WAIT +REASON$' "$work/pi.place"
expect_ok "...template/p-vq ranked first, CanStartNow" \
  grep -qE '^1 +template/p-vq +volcano +'"$ns"'/default +CanStartNow +([0-9]+s|-) +queue default' "$work/pi.place"
expect_ok "...template/p-b200 second, Waits, with the GPU product on no node" \
  grep -qE '^2 +template/p-b200 +volcano +'"$ns/$ns-any"' +Waits +- +no schedulable node has nvidia.com/gpu.product=B200$' "$work/pi.place"
expect_ok "...then what the controller would do" grep -qx 'would submit to template/p-vq' "$work/pi.place"
expect_eq "...and it created nothing" "$before" ajjobs_count
place pi place-infeasible 1
expect_ok "AjJob pi: placed on template/p-vq" wait_for 60 chosen_is pi template/p-vq
expect_eq "...the GPU product on no node is the first candidate's reason" \
  "no schedulable node has nvidia.com/gpu.product=B200" reason_of pi template/p-b200
expect_eq "...it ranks second, after the one that can start it" "template/p-vq template/p-b200 true false" \
  jpath pi '{.status.placement.candidates[*].name} {.status.placement.candidates[*].canStartNow}'
expect_eq "...status.backend is the chosen candidate's" "volcano" jpath pi '{.status.backend}'
expect_ok "...its Volcano Job exists" wait_for 30 volcano_exists pi
expect_eq "...labelled as attempt 1" "1" attempt_label jobs.batch.volcano.sh/pi
expect_eq "...one attempt recorded" "template/p-vq Submitted" \
  jpath pi '{.status.placement.attempts[*].candidate} {.status.placement.attempts[*].outcome}'
expect_ok "...a Placed Event names it with its reason" bash -c \
  "'$AJ_KUBECTL' -n '$ns' get events.events.k8s.io -o jsonpath='{range .items[?(@.reason==\"Placed\")]}{.regarding.name}: {.note}{\"\\n\"}{end}' | grep -q '^pi: template/p-vq (volcano, $ns/default), rank 1 of 2: queue default'"
expect_ok "...and it runs to Succeeded" wait_for 120 phase_is pi Succeeded
"$AJ_BIN" status pi --namespace "$ns" >"$work/pi.status" 2>&1
expect_ok "aj status pi: the placement table, the chosen candidate marked, ranked first" \
  grep -qE '^  \* +1 +template/p-vq +volcano +'"$ns"'/default +CanStartNow +([0-9]+s|-) +queue default' "$work/pi.status"
expect_ok "...the other one Waits with its reason" \
  grep -qE '^  - +2 +template/p-b200 +volcano +'"$ns/$ns-any"' +Waits +- +no schedulable node has nvidia.com/gpu.product=B200$' "$work/pi.status"
expect_ok "...and its one attempt, which follows its job (its end once it ended)" \
  grep -qE '^  1 +template/p-vq +[0-9TZ:-]+ +(- +(Submitted|Running)|[0-9TZ:-]+ +Succeeded) +-$' "$work/pi.status"

expect_ok "aj place before pi ranked and picked as the controller then did" same_ranking "$work/pi.place.json" pi

# --- a full Kueue ClusterQueue sends the job to Volcano ---
aj_place place-kueue 5 -o json >"$work/pk.place.json"
aj_place place-kueue 5 >"$work/pk.place" 2>&1
cat "$work/pk.place"
expect_ok "aj place -t place-kueue -n 5: template/p-kq Waits on its ClusterQueue's quota" \
  grep -qE '^2 +template/p-kq +kube +'"$ns"'/team-a +Waits +- +ClusterQueue team-a: .*the job asks 40$' "$work/pk.place"
expect_ok "...would submit to template/p-vq" grep -qx 'would submit to template/p-vq' "$work/pk.place"
place pk place-kueue 5
expect_ok "AjJob pk (5 x 8 GPUs, over a flavor's 32): placed on template/p-vq" wait_for 60 chosen_is pk template/p-vq
expect_ok "aj place before pk ranked and picked as the controller then did" same_ranking "$work/pk.place.json" pk
expect_ok "...the ClusterQueue's reason names the quota" bash -c \
  "r=\$('$AJ_KUBECTL' -n '$ns' get ajjob pk -o jsonpath='{.status.placement.candidates[?(@.name==\"template/p-kq\")].reason}'); echo \"\$r\"; [[ \$r == 'ClusterQueue team-a: '*'the job asks 40' ]]"
expect_ok "...its Volcano Job exists" wait_for 30 volcano_exists pk
expect_eq "...and no batch/v1 Job" "job.batch.volcano.sh/pk" objects pk
place pk1 place-kueue 1
expect_ok "AjJob pk1 (one pod, both can start it): placed on template/p-vq" wait_for 60 chosen_is pk1 template/p-vq
expect_ok "...whose expected wait for 8 GPUs, learnt from the jobs before, ranks it before template/p-kq" bash -c \
  "w=\$('$AJ_KUBECTL' -n '$ns' get ajjob pk1 -o jsonpath='{.status.placement.candidates[0].name} {.status.placement.candidates[0].expectedWaitSeconds}'); echo \"\$w\"; [[ \$w =~ ^template/p-vq\ [0-9]+\$ ]]"
expect_eq "...template/p-kq, with no history for its band, has none" "" \
  jpath pk1 '{.status.placement.candidates[?(@.name=="template/p-kq")].expectedWaitSeconds}'
expect_eq "...though it could start it too" "true" \
  jpath pk1 '{.status.placement.candidates[?(@.name=="template/p-kq")].canStartNow}'

# --- no candidate can start it: it waits unplaced, and is placed once there is room ---
place pw place-wait 2
waits_with_reason() { [[ $(reason_of pw template/p-tight) == "queue $ns-tight: capability nvidia.com/gpu 8, allocated 0, the job asks 16" ]]; }
expect_ok "AjJob pw (16 GPUs, queue of 8): waits with the queue's reason" wait_for 60 waits_with_reason
expect_eq "...nothing chosen" "" chosen pw
aj_place place-wait 2 -o json >"$work/pw.place.json"
aj_place place-wait 2 >"$work/pw.place" 2>&1
cat "$work/pw.place"
expect_ok "aj place -t place-wait -n 2 while pw waits: the same ranking, nothing picked" \
  same_ranking "$work/pw.place.json" pw
expect_ok "...the job would wait unplaced" \
  grep -qx 'would wait unplaced: no candidate can start now' "$work/pw.place"
expect_eq "...no backend object" "" objects pw
sleep 12
expect_eq "...still none after another look" "" objects pw
k patch queues.scheduling.volcano.sh "$ns-tight" --type merge -p '{"spec": {"capability": {"nvidia.com/gpu": 32}}}' >/dev/null
expect_ok "the queue grows to 32 GPUs: pw is placed" wait_for 60 chosen_is pw template/p-tight
expect_ok "...its Volcano Job exists" wait_for 30 volcano_exists pw

# --- the controller SIGKILLed while placement AjJobs arrive: every one placed once ---
submitting=()
for i in $(seq 1 20); do
  if ((i % 2)); then place "pm$i" place-kueue 1; else place "pm$i" place-infeasible 1; fi &
  submitting+=($!)
done
wait_placed_some() { [[ -n $(k -n "$ns" get ajjob -o jsonpath='{.items[?(@.status.placement.chosen)].metadata.name}' | grep -o 'pm[0-9]*' | head -1) ]]; }
wait_for 60 wait_placed_some >/dev/null
kill -KILL "$(cat "$work/main.pid")"
wait "${submitting[@]}"
controllers=()
start_controller again
all_placed() {
  local i
  for i in $(seq 1 20); do [[ -n $(chosen "pm$i") && -n $(objects "pm$i") ]] || return 1; done
}
expect_ok "after the SIGKILL and a restart, every one of 20 AjJobs is placed and has its object" wait_for 120 all_placed
one_each() {
  local i o
  for i in $(seq 1 20); do
    o=$(objects "pm$i")
    [[ $o != *" "* ]] || { echo "pm$i: $o"; return 1; }
    [[ $(attempt_label "$o") == 1 ]] || { echo "pm$i: no attempt label"; return 1; }
  done
}
expect_ok "...each with exactly one backend object, attempt 1" one_each
kind_matches() { # the object is the chosen candidate's kind; the even ones (B200 first) on p-vq
  local i c o
  for i in $(seq 1 20); do
    c=$(chosen "pm$i") o=$(objects "pm$i")
    case $c in
      template/p-vq) [[ $o == job.batch.volcano.sh/* ]] ;;
      template/p-kq) ((i % 2)) && [[ $o == job.batch/* ]] ;;
      *) false ;;
    esac || { echo "pm$i: $c $o"; return 1; }
  done
}
expect_ok "...of the chosen candidate's kind" kind_matches
stop_controllers
kill "$(cat "$work/copies.watch")" 2>/dev/null
expect_ok "the watcher looked at least 100 times (about every second)" bash -c \
  "n=\$(wc -l <'$work/observations'); echo \"\$n looks\"; ((n >= 100))"
expect_eq "at every observation, no AjJob had two backend objects" "" cat "$work/violations"
finish
