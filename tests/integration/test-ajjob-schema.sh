#!/usr/bin/env bash
# AjJob schema: the examples are accepted, malformed AjJobs are rejected with the schema's message.
source "$(dirname "$0")/lib.sh"
ns=$(new_namespace ajjob-schema)

check_valid_dir "$ns" "$it_dir/data/ajjob/valid" "AjJob"
check_invalid_dir "$ns" "$it_dir/data/ajjob/invalid" "AjJob"

# Defaults and pruning: what the server stores for the minimal example.
expect_eq "minimal AjJob is stored as written (no defaults added)" \
  '{"command":["/bin/true"],"name":"template/empty","template":{}}' \
  k create -n "$ns" --dry-run=server -f "$it_dir/data/ajjob/valid/minimal.yaml" -o 'jsonpath={.spec}'
expect_eq "opaque config keeps unknown keys" "heterogeneous 4" \
  k create -n "$ns" --dry-run=server -f "$it_dir/data/ajjob/valid/volcano-heterogeneous.yaml" \
  -o 'jsonpath={.spec.template.config.jobs[0].sku} {.spec.template.config._extra.volcano.tasks.h100-worker.replicas}'
finish
