#!/usr/bin/env bash
# The AjJob cases of the adversarial corpus (tests/data/bad/*/ajjob.json)
# against the real API server, with aj-controller running under the
# least-privilege RBAC of deploy/rbac.yaml and watching only this script's
# namespace. Every case is applied first, then polled together:
#   - "rejected TEXT": the API server's schema refuses the object with TEXT;
#   - otherwise the AjJob ends Failed, status.message holds every "message"
#     fragment, and no Volcano Job of that name exists.
source "$(dirname "$0")/../integration/lib.sh"
controller_test corpus

expect_lines() { grep "^$2 " "$1/expect" | cut -d' ' -f2-; }
# some cases nest deeper than Python's default recursion limit
name_of() {
  python3 -c 'import json, sys; sys.setrecursionlimit(100000)
print(json.load(open(sys.argv[1]))["metadata"]["name"])' "$1"
}

# --- apply everything ---
failing=()
for d in "$repo_root"/tests/data/bad/*/; do
  [[ -f $d/ajjob.json ]] || continue
  case=$(basename "$d")
  rejected=$(expect_lines "$d" rejected)
  if [[ -n $rejected ]]; then
    expect_fail "$case: the API server refuses it" "$rejected" k -n "$ns" create -f "$d/ajjob.json"
  else
    expect_ok "$case: accepted by the API server" k -n "$ns" create -f "$d/ajjob.json"
    failing+=("$d")
  fi
done

# --- poll until every accepted AjJob has failed (or time runs out) ---
names=()
for d in "${failing[@]}"; do names+=("$(name_of "$d/ajjob.json")"); done
all_failed() {
  local phases
  phases=$(k -n "$ns" get ajjobs -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}') || return 1
  [[ $(grep -c '^Failed$' <<<"$phases") -ge ${#names[@]} ]]
}
for ((i = 0; i < 300; i++)); do all_failed && break; sleep 0.2; done

# --- verdicts ---
volcano=$(k -n "$ns" get jobs.batch.volcano.sh -o name)
for i in "${!failing[@]}"; do
  d=${failing[$i]} name=${names[$i]} case=$(basename "${failing[$i]}")
  got=$(k -n "$ns" get ajjob "$name" -o jsonpath='{.status.phase}{"\n"}{.status.message}')
  phase=${got%%$'\n'*} message=${got#*$'\n'}
  if [[ $phase == Failed ]]; then ok "$case: Failed"; else echo "(phase '$phase')" >"$t_out"; fail "$case: Failed"; fi
  while IFS= read -r frag; do
    if grep -qF -- "$frag" <<<"$message"; then ok "$case: message holds $frag"
    else printf '(status.message: %s)\n' "$message" >"$t_out"; fail "$case: message holds $frag"
    fi
  done < <(expect_lines "$d" message)
  if grep -qx "job.batch.volcano.sh/$name" <<<"$volcano"; then : >"$t_out"; fail "$case: no Volcano Job"
  else ok "$case: no Volcano Job"; fi
done
expect_ok "the controller is still running" kill -0 "$pid"
expect_ok "no token in the controller's log" bash -c "! grep -qF -- '$token' '$work/controller.log'"

finish
