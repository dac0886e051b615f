#!/usr/bin/env bash
# The chart without a cluster: helm lint --strict for every value set, the
# generated deploy/ and crds/ are current, and bad values are rejected by the
# schema (or the templates' own checks) with the key named.
source "$(dirname "$0")/lib.sh"
helm=$(helm_bin) || { echo "FAIL - no helm (run tests/helm/build-helm.sh)"; exit 1; }
kube_version=$(tr -d '[:space:]' <"$repo_root/tests/controlplane/VERSION")

expect_ok "helm lint --strict (default values)" "$helm" lint --strict "$chart"
for f in "$chart"/ci/*-values.yaml; do
  expect_ok "helm lint --strict -f ci/$(basename "$f")" "$helm" lint --strict "$chart" -f "$f"
done

expect_ok "deploy/ and the chart's crds/ are what scripts/gen-deploy.sh generates" \
  env AJ_HELM="$helm" "$repo_root/scripts/gen-deploy.sh" --check
for f in "$repo_root"/crd/*.yaml; do
  expect_ok "charts/aj-controller/crds/$(basename "$f") is identical to crd/$(basename "$f")" \
    cmp "$f" "$chart/crds/$(basename "$f")"
done

for f in "$helm_dir"/bad-values/*.yaml; do
  msg=$(sed -n '1s/^# expect: //p' "$f")
  if [[ -z $msg ]]; then echo "(no '# expect:' line in $f)" >"$t_out"; fail "bad values $(basename "$f")"; continue; fi
  expect_fail "bad values rejected: $(basename "$f") ($msg)" "$msg" \
    "$helm" template aj "$chart" --kube-version "$kube_version" -f "$f"
done
expect_fail "a cluster older than the chart's kubeVersion is refused" "chart requires kubeVersion: >=1.29.0-0" \
  "$helm" template aj "$chart" --kube-version v1.28.9

# Leader election follows the replica count (the server-side tests check the objects).
render() { "$helm" template aj-controller "$chart" -n aj-system --kube-version "$kube_version" "$@"; }
expect_ok "two replicas (the default) elect a leader" bash -c \
  "$(declare -f render); helm='$helm' chart='$chart' kube_version='$kube_version'; render | grep -qx -- '            - --leader-elect'"
expect_ok "one replica does not" bash -c \
  "$(declare -f render); helm='$helm' chart='$chart' kube_version='$kube_version'; ! render --set replicaCount=1 | grep -e leader-elect -e leader-election"
expect_ok "one replica with leaderElection.enabled does" bash -c \
  "$(declare -f render); helm='$helm' chart='$chart' kube_version='$kube_version'; render --set replicaCount=1 --set leaderElection.enabled=true | grep -qx -- '            - --leader-elect'"

# The Grafana dashboard: off by default; on, one ConfigMap the sidecar selects, holding valid JSON.
expect_ok "no dashboard ConfigMap by default" bash -c \
  "$(declare -f render); helm='$helm' chart='$chart' kube_version='$kube_version'; ! render | grep -q 'aj-controller.json'"
dash_check() { # the rendered ConfigMap: label grafana_dashboard=1, data a dashboard with panels
  python3 -c '
import json, sys, yaml
docs = [d for d in yaml.safe_load_all(sys.stdin) if d and d["kind"] == "ConfigMap"]
assert len(docs) == 1, docs
cm = docs[0]
assert cm["metadata"]["labels"]["grafana_dashboard"] == "1", cm["metadata"]["labels"]
assert cm["metadata"]["namespace"] == sys.argv[1], cm["metadata"]
d = json.loads(cm["data"]["aj-controller.json"])
assert d["uid"] == "aj-controller" and len(d["panels"]) >= 4, d.get("uid")
' "$1"
}
expect_ok "metrics.dashboard.enabled renders a grafana_dashboard=1 ConfigMap of the dashboard JSON" bash -c \
  "$(declare -f render dash_check); helm='$helm' chart='$chart' kube_version='$kube_version'; render --set metrics.dashboard.enabled=true | dash_check aj-system"
expect_ok "...in metrics.dashboard.namespace when set" bash -c \
  "$(declare -f render dash_check); helm='$helm' chart='$chart' kube_version='$kube_version'; render --set metrics.dashboard.enabled=true --set metrics.dashboard.namespace=monitoring | dash_check monitoring"

finish
