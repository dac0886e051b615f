#!/usr/bin/env bash
# AjTemplate schema and the name convention (canonical name with "/" -> ".").
source "$(dirname "$0")/lib.sh"
ns=$(new_namespace ajtemplate)
d=$it_dir/data/ajtemplate

expect_ok "templates accepted (dry run)" dry_apply "$ns" "$d/valid.yaml"
expect_ok "templates created" k apply -n "$ns" -f "$d/valid.yaml"
expect_eq "listed by short name" "storage.default template.empty-base template.gpu" \
  k get ajt -n "$ns" -o 'jsonpath={.items[*].metadata.name}'
expect_eq "base list kept in order" "account.default storage.default environment.aml" \
  k get ajt -n "$ns" template.gpu -o 'jsonpath={.spec.base[*]}'
expect_eq "empty base list kept" "[]" k get ajt -n "$ns" template.empty-base -o 'jsonpath={.spec.base}'
expect_eq "component without base has none" "" k get ajt -n "$ns" storage.default -o 'jsonpath={.spec.base}'
expect_eq "config kept verbatim" "gpu-cluster" k get ajt -n "$ns" template.gpu -o 'jsonpath={.spec.config.target.name}'
expect_fail "a '/' in the name is not a valid object name" "metadata.name: Invalid value: \"template/gpu\"" \
  bash -c "sed 's/name: template.gpu/name: template\/gpu/' '$d/valid.yaml' | '$AJ_KUBECTL' create -n '$ns' --dry-run=server -f -"
for f in "$d"/invalid-*.yaml; do
  msg=$(expected_message "$f")
  expect_fail "AjTemplate rejected: $(basename "$f") ($msg)" "$msg" dry_apply "$ns" "$f"
done
finish
