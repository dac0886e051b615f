#!/usr/bin/env bash
# Fixture: install the AjJob/AjTemplate CRDs and the Volcano CRDs, and check how they are served.
source "$(dirname "$0")/lib.sh"

ours=("$repo_root/crd/ajjob.yaml" "$repo_root/crd/ajtemplate.yaml")
volcano=("$it_dir"/crds/volcano/*.yaml)

expect_ok "AjJob and AjTemplate CRDs installed and Established" install_crds "${ours[@]}"
expect_ok "Volcano CRDs installed and Established" install_crds "${volcano[@]}"
expect_ok "reinstalling the CRDs is a no-op" install_crds "${ours[@]}"

expect_eq "ajjobs served as aj.dev/v1alpha1 with short name ajj" "ajjobs ajj aj.dev/v1alpha1 true AjJob" \
  bash -c "'$AJ_KUBECTL' api-resources --api-group=aj.dev --no-headers | awk '\$1==\"ajjobs\"{print \$1, \$2, \$3, \$4, \$5}'"
expect_eq "ajtemplates served with short name ajt" "ajtemplates ajt aj.dev/v1alpha1 true AjTemplate" \
  bash -c "'$AJ_KUBECTL' api-resources --api-group=aj.dev --no-headers | awk '\$1==\"ajtemplates\"{print \$1, \$2, \$3, \$4, \$5}'"
expect_eq "both kinds are in category aj" "aj aj" \
  k get crd ajjobs.aj.dev ajtemplates.aj.dev -o 'jsonpath={.items[0].spec.names.categories[0]} {.items[1].spec.names.categories[0]}'
expect_eq "AjJob has a status subresource" "{}" k get crd ajjobs.aj.dev -o 'jsonpath={.spec.versions[0].subresources.status}'
expect_eq "AjJob printer columns" "Backend Phase Tasks Nodes Age Placed Message" \
  k get crd ajjobs.aj.dev -o 'jsonpath={.spec.versions[0].additionalPrinterColumns[*].name}'
expect_eq "Volcano Job CRD served (short names vcjob, vj)" "jobs vcjob,vj" \
  bash -c "'$AJ_KUBECTL' api-resources --api-group=batch.volcano.sh --no-headers | awk '\$1==\"jobs\"{print \$1, \$2}'"
expect_ok "kubectl get aj lists the category in a namespace" k get aj -n default
finish
