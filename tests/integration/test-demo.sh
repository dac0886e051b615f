#!/usr/bin/env bash
# The README's main command, scripts/demo.sh, from start to stop with KUBECONFIG unset, so on a
# local cluster of its own (real Volcano, kwok nodes): the example AjJob goes Pending/Submitted ->
# Running -> Succeeded with pods that Volcano's own controller created, the heterogeneous example's
# tasks land on nodes of their GPU product, the step it prints works as printed, and `stop` leaves
# nothing running.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/aj-it-demo.XXXXXX")
export AJ_DEMO_DIR=$work/demo AJ_LOCAL_CLUSTER_DIR=$work/local
unset KUBECONFIG
source "$root/tests/lib/expect.sh"
trap 'bash "$root/scripts/demo.sh" stop >/dev/null 2>&1
  ((t_fail)) && tail -n 60 "$work/demo.out"
  rm -rf "$work" "$t_out"' EXIT

bash "$root/scripts/demo.sh" >"$work/demo.out" 2>&1
expect_eq "demo.sh exits 0" "0" echo "$?"
mapfile -t names < <(sed -n 's|^ajjob\.aj\.dev/\([a-z0-9-]*\) created$|\1|p' "$work/demo.out")
expect_eq "it created three AjJobs" "3" echo "${#names[@]}"
expect_ok "it says which nodes are simulated" grep -q "kwok's simulated ones, and the real ones" "$work/demo.out"
expect_ok "the Volcano components started" grep -qE "^cluster-up.sh: vc-scheduler +pid" "$work/demo.out"

# The phases the demo printed for one job, in order, without repeats: "Submitted Running Succeeded".
phases() { # job
  awk -v n="$1" '/^== aj run/ { on = 0 } $0 ~ "ajjob.aj.dev/" n " created" { on = 1; next }
    on && /^  [0-9:]+  [A-Z]/ { print $2 }' "$work/demo.out" | xargs
}
for n in "${names[@]}"; do
  expect_ok "$n went through Running to Succeeded" bash -c "[[ '$(phases "$n")' =~ ^(Pending\ )?(Submitted\ )?Running\ Succeeded$ ]]"
done
expect_ok "aj status shows the first one Succeeded" grep -qE "^Phase: +Succeeded$" "$work/demo.out"

# Pod rows: POD TASK NODE PHASE
pods() { grep -E "^$1-[a-z0-9-]+-[0-9]+ +" "$work/demo.out"; }
expect_eq "the example's 2 pods (master + worker) were created by Volcano and succeeded" \
  "2" bash -c "printf '%s\n' \"\$1\" | awk '\$4 == \"Succeeded\" && \$3 ~ /^kwok-/' | wc -l" _ "$(pods "${names[0]}")"
h=$(pods "${names[1]}")
expect_eq "heterogeneous: master on a CPU node" "1" bash -c "awk '\$2 == \"master\" && \$3 ~ /^kwok-cpu-/' <<<\"\$1\" | wc -l" _ "$h"
expect_eq "...2 a100-worker pods on A100 nodes" "2" bash -c "awk '\$2 == \"a100-worker\" && \$3 ~ /^kwok-a100-/' <<<\"\$1\" | wc -l" _ "$h"
expect_eq "...4 h100-worker pods on H100 nodes" "4" bash -c "awk '\$2 == \"h100-worker\" && \$3 ~ /^kwok-h100-/' <<<\"\$1\" | wc -l" _ "$h"
expect_eq "...all 7 succeeded" "7" bash -c "awk '\$4 == \"Succeeded\"' <<<\"\$1\" | wc -l" _ "$h"

c=$(pods "${names[2]}")
expect_eq "the CPU example's 2 pods ran on the real nodes and succeeded" "2" \
  bash -c "awk '\$4 == \"Succeeded\" && \$3 ~ /^real-/' <<<\"\$1\" | wc -l" _ "$c"
expect_ok "aj logs printed what its rank 0 printed, from the code shipped through the shared volume" \
  grep -qE '^\[master-0\] rank 0 of 2 on .*args \[.--epochs., .3.\]$' "$work/demo.out"
expect_ok "...and rank 1" grep -qx '\[worker-0\] rank 1 epoch 3 loss 0.250' "$work/demo.out"
controller=$(cat "$work/demo/controller.pid" 2>/dev/null)
expect_ok "aj-controller keeps running in the background" kill -0 "${controller:-0}"

# What it tells the user to try next, run as printed, then followed to the end.
steps=$(sed -n '/^== Try it$/,/^== Stop everything$/p' "$work/demo.out" | grep -E '^(export |aj run )')
expect_eq "it prints the environment and an aj run" "2" bash -c "printf '%s\n' \"\$1\" | wc -l" _ "$steps"
expect_ok "...which submit a job that Succeeds" bash -c "eval \"\$1\" >'$work/try.out' &&
  n=\$(sed -n 's|^ajjob\.aj\.dev/\([a-z0-9-]*\) created\$|\1|p' '$work/try.out') &&
  aj status \"\$n\" --namespace training --wait | grep -qE '^ajjob.aj.dev/[a-z0-9-]+ Succeeded: '" _ "$steps"

expect_ok "demo.sh stop" bash "$root/scripts/demo.sh" stop
expect_ok "...stops aj-controller" bash -c "! kill -0 '${controller:-0}' 2>/dev/null"
expect_ok "...and the local cluster" test ! -e "$work/local/env"
# processes whose command line names the local cluster's directory (the test's own do not)
leftovers() {
  local f
  for f in /proc/[0-9]*/cmdline; do
    [[ $(tr '\0' ' ' <"$f" 2>/dev/null) == *"$work/local"* ]] && echo "${f%/cmdline}"
  done
  return 0
}
expect_eq "...leaving none of its processes" "" leftovers
finish
