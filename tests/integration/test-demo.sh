#!/usr/bin/env bash
# The README's main command, scripts/demo.sh, from start to stop with KUBECONFIG unset, so on a
# local control plane of its own: the AjJob it submits becomes a Volcano Job, the steps it prints
# for finishing the job work as printed, and `stop` leaves nothing running.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/aj-it-demo.XXXXXX")
export AJ_DEMO_DIR=$work/demo AJ_LOCAL_CLUSTER_DIR=$work/local
unset KUBECONFIG
# No node runs pods here: a demo that waited for one would fail after this, not after 300 s.
export AJ_CODE_HELPER_TIMEOUT=20
source "$root/tests/lib/expect.sh"
trap 'bash "$root/scripts/demo.sh" stop >/dev/null 2>&1
  ((t_fail)) && tail -n 40 "$work/demo.out"
  rm -rf "$work" "$t_out"' EXIT

bash "$root/scripts/demo.sh" >"$work/demo.out" 2>&1
expect_eq "demo.sh exits 0" "0" echo "$?"
name=$(sed -n 's|^ajjob\.aj\.dev/\([a-z0-9-]*\) created$|\1|p' "$work/demo.out")
expect_ok "...having created an AjJob" test -n "$name"
expect_ok "...which aj-controller submitted" grep -qE "^Phase: +Submitted$" "$work/demo.out"
expect_ok "...as the Volcano Job it shows" grep -qxF "  queue: default" "$work/demo.out"
controller=$(cat "$work/demo/controller.pid" 2>/dev/null)
expect_ok "aj-controller keeps running in the background" kill -0 "${controller:-0}"

# What it tells the user to do next, run as printed: act as Volcano, then follow the job.
steps=$(sed -n '/^== Try it$/,/^== Stop everything$/p' "$work/demo.out" | grep -E '^(export |"|aj status )')
expect_eq "it prints the three steps" "3" bash -c "printf '%s\n' \"\$1\" | wc -l" _ "$steps"
expect_ok "...which finish the job: aj status --wait ends with Succeeded" \
  bash -c "eval \"\$1\" | grep -qE '^Phase: +Succeeded$'" _ "$steps"

expect_ok "demo.sh stop" bash "$root/scripts/demo.sh" stop
expect_ok "...stops aj-controller" bash -c "! kill -0 '${controller:-0}' 2>/dev/null"
expect_ok "...and the local control plane" test ! -e "$work/local/env"
finish
