#!/usr/bin/env bash
# Volcano Jobs of the shapes aj generates are accepted by the Volcano CRD schema; a test can act as
# Volcano by writing the Job's status subresource.
source "$(dirname "$0")/lib.sh"
ns=$(new_namespace volcano)
d=$it_dir/data/volcano

check_valid_dir "$ns" "$d/valid" "Volcano"
check_invalid_dir "$ns" "$d/invalid" "Volcano"

expect_ok "heterogeneous Job created" k create -n "$ns" -f "$d/valid/heterogeneous.yaml"
expect_eq "task names and replicas stored" "master a100-worker h100-worker / 1 2 4" \
  k get vcjob -n "$ns" train-hetero-r0 -o 'jsonpath={.spec.tasks[*].name} / {.spec.tasks[*].replicas}'
expect_eq "scratch emptyDir sizeLimit kept" "200Gi" \
  k get vcjob -n "$ns" train-hetero-r0 -o 'jsonpath={.spec.tasks[1].template.spec.volumes[?(@.name=="scratch")].emptyDir.sizeLimit}'
expect_ok "status written as Volcano would" k patch vcjob -n "$ns" train-hetero-r0 --subresource=status --type merge \
  -p '{"status":{"state":{"phase":"Running"},"minAvailable":7,"running":7}}'
expect_eq "status phase stored" "Running 7" \
  k get vcjob -n "$ns" train-hetero-r0 -o 'jsonpath={.status.state.phase} {.status.running}'
expect_ok "ownerReference to an AjJob accepted" k patch vcjob -n "$ns" train-hetero-r0 --type merge -p \
  '{"metadata":{"ownerReferences":[{"apiVersion":"aj.dev/v1alpha1","kind":"AjJob","name":"train-hetero","uid":"00000000-0000-0000-0000-000000000001","controller":true,"blockOwnerDeletion":true}]}}'
finish
