#!/usr/bin/env bash
# The chart against the real API server: helm template output for three value
# sets and the kustomization in deploy/ pass a strict server-side dry run and
# hold the expected objects; helm install, upgrade and uninstall work, and the
# installed ServiceAccount may do what the controller needs and no more.
source "$(dirname "$0")/lib.sh"
helm=${AJ_HELM:-$("$repo_root/tests/helm/build-helm.sh" --no-build 2>/dev/null | tail -n 1)}
[[ -x $helm ]] || { echo "FAIL - no helm (run tests/helm/build-helm.sh)"; exit 1; }
chart=$repo_root/charts/aj-controller
check=$repo_root/tests/helm/check_objects.py
work=$(mktemp -d "${TMPDIR:-/tmp}/aj-it-helm.XXXXXX")
trap 'rm -rf "$work" "$t_out"' EXIT
kube_version=$(k version -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])')
export HELM_CACHE_HOME=$work/helm-cache HELM_CONFIG_HOME=$work/helm-config HELM_DATA_HOME=$work/helm-data

expect_ok "the ServiceMonitor stand-in CRD is installed" install_crds "$repo_root/tests/helm/data/servicemonitor-crd.yaml"

# dry_run NAME NS OUT [helm template args...]: render, then a strict server-side dry run
dry_run() {
  local rel=$1 ns=$2 out=$3; shift 3
  "$helm" template "$rel" "$chart" -n "$ns" --kube-version "$kube_version" "$@" >"$work/$rel.yaml" &&
    k apply --dry-run=server --validate=strict -o json -f "$work/$rel.yaml" >"$out"
}
# checks PROFILE OUT key=value...: the assertions of check_objects.py, one case each
checks() {
  local line failures=$t_fail
  python3 "$check" "$@" >"$work/checks.out" 2>&1
  local rc=$?
  while IFS= read -r line; do
    case $line in
      "ok   - "*) ok "$1: ${line#ok   - }" ;;
      "FAIL - "*) : >"$t_out"; fail "$1: ${line#FAIL - }" ;;
    esac
  done <"$work/checks.out"
  if ((rc && t_fail == failures)); then
    cp "$work/checks.out" "$t_out"; fail "$1: check_objects.py failed"
  fi
}

# --- default values ---
ns=$(new_namespace helm)
rel=aj-$RANDOM
expect_ok "default values: accepted by the API server" dry_run "$rel" "$ns" "$work/default.json"
checks default "$work/default.json" namespace="$ns" replicas=2 sa="$rel-aj-controller"

# --- one namespace, one replica, no Service ---
ns2=$(new_namespace helm)
team=$(new_namespace team)
rel=aj-$RANDOM
expect_ok "ci/namespaced-values.yaml: accepted by the API server" \
  dry_run "$rel" "$ns2" "$work/namespaced.json" -f "$chart/ci/namespaced-values.yaml" --set watchNamespace="$team"
checks namespaced "$work/namespaced.json" namespace="$ns2" replicas=1 sa=aj-team-a watch="$team" service=false

# --- AKS: workload identity, ServiceMonitor, PDB, three replicas ---
ns3=$(new_namespace helm)
rel=aj-$RANDOM
expect_ok "ci/aks-values.yaml: accepted by the API server" \
  dry_run "$rel" "$ns3" "$work/aks.json" -f "$chart/ci/aks-values.yaml"
checks aks "$work/aks.json" namespace="$ns3" replicas=3 sa="$rel-aj-controller" \
  client_id=00000000-1111-2222-3333-444444444444 tenant_id=55555555-6666-7777-8888-999999999999

# --- deploy/: the plain manifests ---
k get namespace aj-system >/dev/null 2>&1 || k create namespace aj-system >/dev/null
expect_ok "deploy/ builds with kubectl kustomize" bash -c "'$AJ_KUBECTL' kustomize '$repo_root/deploy' >'$work/deploy.yaml'"
expect_ok "deploy/ is accepted by the API server" bash -c \
  "'$AJ_KUBECTL' apply --server-side --force-conflicts --dry-run=server -o json -f '$work/deploy.yaml' >'$work/deploy.json'"
checks deploy "$work/deploy.json" namespace=aj-system replicas=2 sa=aj-controller
expect_eq "deploy/ carries the Namespace and both CRDs" "aj-system ajjobs.aj.dev ajtemplates.aj.dev" \
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(sorted(o["metadata"]["name"] for o in d["items"] if o["kind"] in ("Namespace","CustomResourceDefinition"))))' "$work/deploy.json"

# --- helm install into the control plane ---
ns=$(new_namespace helm)
rel=aj-$RANDOM
full=$rel-aj-controller
expect_ok "helm install" "$helm" install "$rel" "$chart" -n "$ns" --timeout 60s
expect_eq "the release is deployed" "deployed" bash -c \
  "'$helm' status '$rel' -n '$ns' -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"info\"][\"status\"])'"
for obj in deployment/$full serviceaccount/$full service/$full-metrics role/$full-leader-election rolebinding/$full-leader-election lease/aj-controller; do
  expect_ok "installed: $obj" k -n "$ns" get "$obj"
done
for obj in clusterrole/$full clusterrolebinding/$full crd/ajjobs.aj.dev crd/ajtemplates.aj.dev; do
  expect_ok "installed: $obj" k get "$obj"
done
sa=system:serviceaccount:$ns:$full
other=$(new_namespace other)
can() { k auth can-i --as="$sa" "$@"; }
expect_eq "its ServiceAccount may create Volcano Jobs anywhere" "yes" can create jobs.batch.volcano.sh -n "$other"
expect_eq "...and Indexed Jobs (the kube backend)" "yes" can create jobs.batch -n "$other"
expect_eq "...and their headless Services" "yes" can create services -n "$other"
expect_eq "...patch AjJob status" "yes" can patch ajjobs.aj.dev --subresource=status -n "$other"
expect_eq "...delete finished AjJobs (ttlSecondsAfterFinished)" "yes" can delete ajjobs.aj.dev -n "$other"
expect_eq "...update Leases in its own namespace" "yes" can update leases.coordination.k8s.io -n "$ns"
expect_eq "...but not elsewhere" "no" bash -c "'$AJ_KUBECTL' auth can-i --as='$sa' update leases.coordination.k8s.io -n '$other' || true"
expect_eq "...nor create one (the release's Lease is Helm's to create and delete)" "no" bash -c \
  "'$AJ_KUBECTL' auth can-i --as='$sa' create leases.coordination.k8s.io -n '$ns' || true"
expect_eq "...nor write an AjJob's spec" "no" bash -c "'$AJ_KUBECTL' auth can-i --as='$sa' update ajjobs.aj.dev -n '$other' || true"
expect_eq "...nor touch pods" "no" bash -c "'$AJ_KUBECTL' auth can-i --as='$sa' create pods -n '$other' || true"
expect_eq "...only list them (a job's failed pod)" "yes" can list pods -n "$other"
expect_eq "...and watch them (aj's pods: a failure recorded before the pod is deleted)" "yes" \
  can watch pods -n "$other"
# kubectl auth can-i asks about a resource the server does not serve without its group (Kueue is
# not installed here): a SubjectAccessReview names it. may VERB GROUP RESOURCE NS: true or false
may() {
  k create -o jsonpath='{.status.allowed}' -f - <<YAML
apiVersion: authorization.k8s.io/v1
kind: SubjectAccessReview
spec:
  user: $sa
  resourceAttributes: {verb: "$1", group: "$2", resource: "$3", namespace: "$4"}
YAML
}
may_read_workloads() {
  local v got=()
  for v in get list watch; do got+=("$(may "$v" kueue.x-k8s.io workloads "$other")"); done
  echo "${got[*]}"
}
expect_eq "...read Kueue's Workloads (why a queued Job waits), Kueue installed or not" "true true true" may_read_workloads
# placement's views (controller/placer.c): listed in all namespaces, the start-up check asks for them
may_list_views() {
  local gr got=()
  for gr in /nodes /pods scheduling.volcano.sh/queues kueue.x-k8s.io/clusterqueues \
            kueue.x-k8s.io/localqueues kueue.x-k8s.io/resourceflavors; do
    got+=("$(may list "${gr%%/*}" "${gr#*/}" "")")
  done
  echo "${got[*]}"
}
expect_eq "...list in every namespace what placement ranks candidates by" "true true true true true true" may_list_views
expect_eq "...but not write them" "false" may update kueue.x-k8s.io workloads "$other"
expect_eq "...and not read their logs" "no" bash -c "'$AJ_KUBECTL' auth can-i --as='$sa' get pods/log -n '$other' || true"
expect_eq "...nor read secrets" "no" bash -c "'$AJ_KUBECTL' auth can-i --as='$sa' get secrets -n '$ns' || true"

expect_ok "helm upgrade to one replica" "$helm" upgrade "$rel" "$chart" -n "$ns" --set replicaCount=1 --timeout 60s
expect_eq "the Deployment has one replica" "1" k -n "$ns" get deployment "$full" -o jsonpath='{.spec.replicas}'
expect_fail "the leader-election Role is gone" "NotFound" k -n "$ns" get role "$full-leader-election"
expect_fail "...and the Lease with it" "NotFound" k -n "$ns" get lease aj-controller
expect_fail "an upgrade with a bad value is refused, naming the key" "at '/replicaCount'" \
  "$helm" upgrade "$rel" "$chart" -n "$ns" --set replicaCount=-1
expect_ok "helm uninstall" "$helm" uninstall "$rel" -n "$ns" --timeout 60s
expect_fail "the ClusterRole is removed" "NotFound" k get clusterrole "$full"
expect_ok "the CRDs stay (Helm never deletes crds/)" k get crd ajjobs.aj.dev
finish
