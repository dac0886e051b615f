#!/usr/bin/env bash
# AjJob after submission: spec immutability (CEL), status subresource, printer columns, conflicts, watch.
source "$(dirname "$0")/lib.sh"
ns=$(new_namespace ajjob-life)
job=$it_dir/data/ajjob/valid/volcano-homogeneous.yaml
name=train-homogeneous

expect_ok "create AjJob" k create -n "$ns" -f "$job"
expect_eq "generation starts at 1" "1" k get ajj -n "$ns" "$name" -o 'jsonpath={.metadata.generation}'

expect_fail "changing spec.command is rejected" "spec is immutable once submitted" \
  k patch ajj -n "$ns" "$name" --type merge -p '{"spec":{"command":["python","other.py"]}}'
expect_fail "changing spec.nodes is rejected" "spec is immutable once submitted" \
  k patch ajj -n "$ns" "$name" --type merge -p '{"spec":{"nodes":4}}'
expect_fail "changing opaque template config is rejected" "spec is immutable once submitted" \
  k patch ajj -n "$ns" "$name" --type merge -p '{"spec":{"template":{"config":{"target":{"queue":"other"}}}}}'
expect_fail "re-applying a changed manifest is rejected" "spec is immutable once submitted" \
  bash -c "sed 's/--epochs/--steps/' '$job' | '$AJ_KUBECTL' apply -n '$ns' -f -"
expect_ok "an identical spec update is allowed" k apply -n "$ns" -f "$job"
expect_ok "labels may change after submission" k label ajj -n "$ns" "$name" team=research
expect_ok "finalizers may be added after submission" \
  k patch ajj -n "$ns" "$name" --type merge -p '{"metadata":{"finalizers":["aj.dev/cancel"]}}'
expect_eq "spec unchanged, generation still 1" "1 10" \
  k get ajj -n "$ns" "$name" -o 'jsonpath={.metadata.generation} {.spec.command[3]}'

# Status goes through the status subresource only.
status='{"status":{"phase":"Running","backend":"volcano","observedGeneration":1,"message":"2/2 pods running",
  "volcano":{"jobName":"train-homogeneous-r0"},"tasksSummary":"2/2 running",
  "tasks":[{"name":"train","replicas":2,"pending":0,"running":2,"succeeded":0,"failed":0,"restarts":1}],
  "conditions":[{"type":"Submitted","status":"True","reason":"JobCreated","message":"created Volcano Job",
                 "lastTransitionTime":"2026-01-01T00:00:00Z","observedGeneration":1}]}}'
expect_ok "status written through /status" k patch ajj -n "$ns" "$name" --subresource=status --type merge -p "$status"
expect_eq "status stored" "Running volcano train-homogeneous-r0 True" \
  k get ajj -n "$ns" "$name" -o 'jsonpath={.status.phase} {.status.backend} {.status.volcano.jobName} {.status.conditions[?(@.type=="Submitted")].status}'
expect_eq "status write does not bump generation" "1" k get ajj -n "$ns" "$name" -o 'jsonpath={.metadata.generation}'
expect_eq "status in a main-resource update is ignored" "Running" \
  bash -c "'$AJ_KUBECTL' patch ajj -n '$ns' '$name' --type merge -p '{\"status\":{\"phase\":\"Failed\"}}' >/dev/null &&
           '$AJ_KUBECTL' get ajj -n '$ns' '$name' -o 'jsonpath={.status.phase}'"
expect_fail "unknown phase rejected" 'Unsupported value: "Exploded"' \
  k patch ajj -n "$ns" "$name" --subresource=status --type merge -p '{"status":{"phase":"Exploded"}}'
expect_fail "condition without reason rejected" "status.conditions[1].reason: Required value" \
  k patch ajj -n "$ns" "$name" --subresource=status --type json \
  -p '[{"op":"add","path":"/status/conditions/-","value":{"type":"Running","status":"True","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}}]'
expect_fail "condition status outside True/False/Unknown rejected" 'Unsupported value: "Yes"' \
  k patch ajj -n "$ns" "$name" --subresource=status --type json \
  -p '[{"op":"add","path":"/status/conditions/-","value":{"type":"Running","status":"Yes","reason":"R","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}}]'
expect_fail "duplicate condition type rejected (list-map keyed by type)" "Duplicate value" \
  k patch ajj -n "$ns" "$name" --subresource=status --type json \
  -p '[{"op":"add","path":"/status/conditions/-","value":{"type":"Submitted","status":"False","reason":"R","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}}]'
expect_eq "status.tasks stored per task" "train 2 2 1" \
  k get ajj -n "$ns" "$name" -o 'jsonpath={.status.tasks[0].name} {.status.tasks[0].replicas} {.status.tasks[0].running} {.status.tasks[0].restarts}'
expect_fail "a negative task count rejected" "status.tasks[0].failed: Invalid value: -1" \
  k patch ajj -n "$ns" "$name" --subresource=status --type json -p '[{"op":"replace","path":"/status/tasks/0/failed","value":-1}]'
expect_fail "duplicate task name rejected (list-map keyed by name)" "Duplicate value" \
  k patch ajj -n "$ns" "$name" --subresource=status --type json -p '[{"op":"add","path":"/status/tasks/-","value":{"name":"train","replicas":1}}]'
expect_ok "Azure status fields accepted" k patch ajj -n "$ns" "$name" --subresource=status --type merge \
  -p '{"status":{"azure":{"jobName":"aj-1","portalUrl":"https://ml.azure.com/runs/aj-1","virtualCluster":"vc1","tier":"Premium","instanceType":"ND96"}}}'

# Printer columns.
expect_eq "default columns" "NAME BACKEND PHASE TASKS NODES AGE" \
  bash -c "'$AJ_KUBECTL' get ajj -n '$ns' | head -1 | tr -s ' '  | sed 's/ \$//'"
expect_eq "values in columns" "train-homogeneous volcano Running 2/2 running 2" \
  bash -c "'$AJ_KUBECTL' get ajj -n '$ns' --no-headers | awk '{print \$1, \$2, \$3, \$4, \$5, \$6}'"
expect_eq "wide output adds the message" "2/2 pods running" \
  bash -c "'$AJ_KUBECTL' get ajj -n '$ns' -o wide --no-headers | sed 's/.*  //'"

# Optimistic concurrency: an update based on a stale resourceVersion is refused.
stale=$(k get ajj -n "$ns" "$name" -o json)
k label ajj -n "$ns" "$name" bump=1 >/dev/null
expect_fail "stale resourceVersion gets a conflict" "the object has been modified" \
  bash -c "printf '%s' \"\$1\" | sed 's/\"team\": \"research\"/\"team\": \"other\"/' | '$AJ_KUBECTL' replace -f -" _ "$stale"

# Watch: a change made while watching is delivered.
watch_out=$(mktemp)
k get ajj -n "$ns" "$name" --watch-only -o 'jsonpath={.status.phase}{"\n"}' >"$watch_out" 2>&1 &
watch_pid=$!
sleep 1
k patch ajj -n "$ns" "$name" --subresource=status --type merge -p '{"status":{"phase":"Succeeded"}}' >/dev/null
for _ in $(seq 50); do grep -q Succeeded "$watch_out" && break; sleep 0.1; done
kill "$watch_pid" 2>/dev/null; wait "$watch_pid" 2>/dev/null
expect_eq "watch delivers the status change" "Succeeded" grep -m1 Succeeded "$watch_out"
rm -f "$watch_out"

expect_ok "finalizer removed" k patch ajj -n "$ns" "$name" --type json -p '[{"op":"remove","path":"/metadata/finalizers"}]'
expect_ok "delete AjJob" k delete ajj -n "$ns" "$name" --wait=true --timeout=30s
finish
