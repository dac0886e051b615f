#!/usr/bin/env bash
# What the aj CLI prints is what the API server accepts: for every leaf template in examples/,
# the AjJob from `aj run --dry-run` and, for Volcano templates, the objects from `aj render`
# pass a server-side dry run with unknown fields rejected.
source "$(dirname "$0")/lib.sh"
: "${AJ_BIN:?AJ_BIN must name the aj executable}"
export AJ_HOME=$repo_root/examples/.azure_jobs
ns=$(new_namespace cli)
out=$(mktemp -d "${TMPDIR:-/tmp}/aj-it-cli.XXXXXX")
trap 'rm -rf "$out" "$t_out"' EXIT

# Leaf templates: the ones with a service (components show "-").
mapfile -t leaves < <("$AJ_BIN" template list | awk 'NR > 1 && $3 != "-" {print $1}')
expect_ok "examples have leaf templates (${#leaves[@]})" test "${#leaves[@]}" -gt 0

for t in "${leaves[@]}"; do
  args=(-t "$t" --name "cli-$t" --namespace "$ns")
  if "$AJ_BIN" run "${args[@]}" --dry-run --digest -- python train.py --lr 3e-4 >"$out/$t.ajjob.yaml" 2>"$t_out"; then
    expect_ok "AjJob of template $t accepted" dry_apply "$ns" "$out/$t.ajjob.yaml"
  else
    fail "aj run --dry-run -t $t"
  fi
  "$AJ_BIN" render "${args[@]}" --digest -- python train.py >"$out/$t.render.yaml" 2>"$t_out" || { fail "aj render -t $t"; continue; }
  if grep -q 'apiVersion: batch.volcano.sh/' "$out/$t.render.yaml"; then  # not an Azure request body
    expect_ok "Volcano objects of template $t accepted" dry_apply "$ns" "$out/$t.render.yaml"
  fi
done

# `aj run --dry-run | kubectl apply -f -`: the AjJob carries the real digest, so it is accepted.
"$AJ_BIN" run -t volcano --name cli-apply --namespace "$ns" --dry-run -- python train.py >"$out/apply.yaml" 2>"$t_out"
expect_ok "run --dry-run without --digest prints an AjJob the server accepts" dry_apply "$ns" "$out/apply.yaml"
# The placeholder aj render shows, put into an AjJob, is refused by the schema.
sed 's/^\(    digest: \).*/\1"<not computed: use --digest>"/' "$out/apply.yaml" >"$out/nodigest.yaml"
expect_ok "...(the placeholder put in its place)" grep -qF '<not computed: use --digest>' "$out/nodigest.yaml"
expect_fail "an AjJob with the placeholder digest is refused" "spec.code.digest" dry_apply "$ns" "$out/nodigest.yaml"

# A submitted job then stays as submitted.
if [[ -s $out/volcano.ajjob.yaml ]]; then
  expect_ok "AjJob of template volcano created" k create -f "$out/volcano.ajjob.yaml"
  expect_fail "...and its spec cannot change" "spec is immutable once submitted" \
    k patch ajj -n "$ns" cli-volcano --type merge -p '{"spec":{"nodes":3}}'
fi
finish
