#!/usr/bin/env bash
# The install path for real: the image built from the Dockerfile (scripts/build-image.sh, buildah,
# no engine, no registry) and loaded into every real node's containerd, then `helm install` of the
# chart: aj-controller runs as a pod on a real node, in-cluster (the `kubernetes` Service, its
# ServiceAccount token and CA), with the chart's probes and leader election. An AjJob from aj run
# completes through it; /metrics passes promtool; two replicas hand over when the leader freezes
# (then is killed) and nothing runs twice; helm upgrade to a rebuilt image with a changed CRD
# (docs/operations.md's steps) keeps every AjJob and its status; helm uninstall leaves no pod, Role
# or Lease. Its ServiceAccount can do exactly the chart's table; it runs as uid 10001. Then the same
# install with `kubectl apply --server-side -k` of deploy/. Bad values: Helm's own error, nothing
# left installed.
# Every expected value is written here, never read back from what is tested.
source "$(dirname "$0")/lib.sh"
: "${AJ_BIN:?AJ_BIN must name the aj executable}"
: "${AJ_LOCAL_IMAGE:?the env file names no AJ_LOCAL_IMAGE: the cluster has no real node}"
helm=${AJ_HELM:-$("$repo_root/tests/helm/build-helm.sh" --no-build 2>/dev/null | tail -n 1)}
[[ -x $helm ]] || { echo "FAIL - no helm (run tests/helm/build-helm.sh)"; exit 1; }
chart=$repo_root/charts/aj-controller
export STORAGE_DRIVER=vfs BUILDAH_ISOLATION=chroot
ns=$(new_namespace ic)            # the AjJobs
sys=$(new_namespace icsys)        # the release
work=$(mktemp -d "${TMPDIR:-/tmp}/aj-it-incluster.XXXXXX")
export HELM_CACHE_HOME=$work/helm-cache HELM_CONFIG_HOME=$work/helm-config HELM_DATA_HOME=$work/helm-data
rel=ajic tag=incluster-$$ tag2=incluster-$$-b
full=$rel-aj-controller
crd_changed=0
# The deploy/ overlay's objects without the CRDs (what removing the controller alone deletes).
but_crds() {
  "$AJ_KUBECTL" kustomize "$work/overlay" | python3 -c '
import sys, yaml
docs = [d for d in yaml.safe_load_all(sys.stdin) if d and d["kind"] != "CustomResourceDefinition"]
yaml.safe_dump_all(docs, sys.stdout)'
}
cleanup() {
  "$helm" uninstall "$rel" -n "$sys" --wait --timeout 60s >/dev/null 2>&1
  [[ -f $work/overlay/kustomization.yaml ]] && but_crds | k delete -f - --wait=false >/dev/null 2>&1
  ((crd_changed)) && k apply --server-side --force-conflicts -f "$chart/crds/" >/dev/null 2>&1
  buildah rmi "aj:$tag" "aj:$tag2" >/dev/null 2>&1
  ((t_fail)) && for p in $(k -n "$sys" get pods -o name 2>/dev/null); do
    echo "--- $p"; k -n "$sys" logs "$p" --all-containers --tail 15 2>&1
  done
  rm -rf "$work" "$t_out"
}
trap cleanup EXIT

# --- the image, loaded into every real node's containerd (pods land on any of them) ---
loads=()
for d in "$AJ_CP_DIR"/node/[0-9]*; do loads+=(--load "$d/root/run/containerd/containerd.sock"); done
snap=$(sed -n 's/^ *snapshotter = "\(.*\)"/\1/p' "$AJ_CP_DIR/node/0/containerd.toml")
echo "# building the image from the Dockerfile (minutes on a cold cache)"
expect_ok "the image is built with buildah and loaded into $((${#loads[@]} / 2)) real nodes' containerd" \
  "$repo_root/scripts/build-image.sh" --base local --tag "aj:$tag" "${loads[@]}" --snapshotter "$snap"

cat >"$work/values.yaml" <<YAML
image: {repository: aj, tag: "$tag", pullPolicy: Never}
replicaCount: 1
leaderElection: {enabled: true}
watchNamespace: $ns
nodeSelector: {aj.dev/node: real}
tolerations: [{key: aj.dev/node, operator: Equal, value: real, effect: NoSchedule}]
YAML
pods() { k -n "$sys" get pods -l "app.kubernetes.io/instance=$rel" -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'; }
holder() { k -n "$sys" get lease aj-controller -o jsonpath='{.spec.holderIdentity}'; }
a_pod_leads() { # NS: a running pod of NS holds the Lease aj-controller there
  local h
  h=$(k -n "$1" get lease aj-controller -o jsonpath='{.spec.holderIdentity}')
  [[ -n $h ]] && k -n "$1" get pods -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | grep -qx "$h"
}
ready_pods() { # N: exactly N pods of the release, all Ready
  local want=$1 got
  got=$(k -n "$sys" get pods -l "app.kubernetes.io/instance=$rel" \
    -o jsonpath='{range .items[*]}{.metadata.deletionTimestamp}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}')
  [[ $(grep -cx True <<<"$got") == "$want" && $(grep -c . <<<"$got") == "$want" ]]
}

# --- bad values: Helm's own error, nothing installed ---
expect_fail "a negative replica count is Helm's schema error" "at '/replicaCount': minimum" \
  "$helm" install "$rel" "$chart" -n "$sys" -f "$work/values.yaml" --set replicaCount=-1
expect_eq "...and nothing is installed" "" "$helm" list -n "$sys" -q
"$helm" install "$rel" "$chart" -n "$sys" -f "$work/values.yaml" --set image.tag=nope \
  --wait --atomic --timeout 40s >"$work/nope.out" 2>&1
expect_eq "an image the node does not have: helm install --atomic fails" "1" echo "$?"
expect_ok "...with Helm's own error" grep -q "^Error: INSTALLATION FAILED" "$work/nope.out"
expect_ok "...and the pod said why, in one line (ErrImageNeverPull: aj:nope is not present)" bash -c \
  "'$AJ_KUBECTL' -n '$sys' get events --field-selector reason=ErrImageNeverPull -o jsonpath='{.items[*].message}' |
   grep -q 'Container image \"aj:nope\" is not present with pull policy of Never'"
expect_eq "...and nothing is left: no release" "" "$helm" list -n "$sys" -q
expect_ok "...no Deployment, pod, Role or Lease" wait_for 30 bash -c \
  "[[ -z \$('$AJ_KUBECTL' -n '$sys' get deploy,pods,roles,leases -o name) ]]"

# --- helm install: one pod on a real node, in-cluster, Ready, holding the Lease ---
expect_ok "helm install (waits for the pod to be Ready: the chart's probes pass)" \
  "$helm" install "$rel" "$chart" -n "$sys" -f "$work/values.yaml" --wait --timeout 180s
pod=$(pods)
expect_ok "one pod, Ready" ready_pods 1
expect_ok "...on a real node" bash -c "[[ \$('$AJ_KUBECTL' -n '$sys' get pod '$pod' -o jsonpath='{.spec.nodeName}') == real-* ]]"
holds() { [[ $(holder) == "$1" ]]; }
expect_ok "...holding the Lease (its identity is the pod's name)" wait_for 30 holds "$pod"
svc=$(k -n default get service kubernetes -o jsonpath='{.spec.clusterIP}:{.spec.ports[0].port}')
expect_eq "it reaches the API server as in-cluster clients do: the kubernetes Service $svc" "$svc" \
  k -n "$sys" exec "$pod" -- sh -c 'echo "$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT"'
expect_eq "...with its ServiceAccount's token and CA mounted (no kubeconfig)" "ca.crt namespace token" \
  k -n "$sys" exec "$pod" -- sh -c 'ls /var/run/secrets/kubernetes.io/serviceaccount | tr "\n" " " | sed "s/ \$//"; test ! -e "$HOME/.kube/config"'
expect_eq "it runs as uid and gid 10001" "10001 10001" k -n "$sys" exec "$pod" -- sh -c 'echo "$(id -u) $(id -g)"'
expect_eq "...with its root file system read-only" "ro" \
  k -n "$sys" exec "$pod" -- sh -c "awk '\$2 == \"/\" {split(\$4, o, \",\"); print o[1]}' /proc/mounts"

# --- an AjJob from aj run completes through it (a real container on a real node) ---
export AJ_HOME=$work/home
mkdir -p "$AJ_HOME/template" "$work/wd"
cat >"$AJ_HOME/template/real.yaml" <<YAML
config:
  target: {service: volcano, namespace: $ns, queue: default, gpus_per_node: 0, cpus_per_node: 1,
    memory: 256Mi, rdma: false, node_selector: {aj.dev/node: real}}
  environment: {image: "$AJ_LOCAL_IMAGE"}
  jobs:
    - name: train
      sku: C1
      instance_count: 1
  _extra: {volcano: {max_retry: 0}}
YAML
submit() { (cd "$work/wd" && "$AJ_BIN" run -t real --name "$1" python3 -c 'print("rank", 0)' >/dev/null 2>&1); }
expect_ok "aj run creates AjJob j1" submit j1
expect_ok "...which reaches Succeeded" wait_for 120 phase_is j1 Succeeded
expect_ok "...reconciled by the pod (its log names the AjJob)" bash -c \
  "'$AJ_KUBECTL' -n '$sys' logs '$pod' | grep -q '\"ajjob\":\"$ns/j1\"'"

# --- /metrics from the pod's port, through promtool ---
ip=$(k -n "$sys" get pod "$pod" -o jsonpath='{.status.podIP}')
port=$(k -n "$sys" get pod "$pod" -o jsonpath='{.spec.containers[0].ports[0].containerPort}')
expect_ok "/metrics is scraped from $ip:$port" bash -c "curl -sf --max-time 10 'http://$ip:$port/metrics' >'$work/metrics.txt'"
expect_ok "...it counts the AjJob that succeeded" grep -qx 'aj_ajjobs{phase="Succeeded",backend="volcano"} 1' "$work/metrics.txt"
expect_ok "promtool parses it and each dashboard query returns data from it" \
  "$repo_root/tests/metrics/check-scrape.sh" "$work/metrics.txt" "$chart/dashboards/aj-controller.json"

# --- what its ServiceAccount may do: exactly the chart's RBAC (watchNamespace: a Role in $ns) ---
other=$(new_namespace icother)
sa=system:serviceaccount:$sys:$full
while read -r want verb what where; do
  [[ -z $want || $want == \#* ]] && continue
  case $where in ns) where=$ns ;; sys) where=$sys ;; other) where=$other ;; esac
  got=$(k auth can-i --as="$sa" "$verb" "$what" -n "$where" 2>/dev/null)
  expect_eq "can-i $verb $what in $where: $want" "$want" echo "$got"
done <<'TABLE'
yes get        ajjobs.aj.dev                ns
yes watch      ajjobs.aj.dev                ns
yes patch      ajjobs.aj.dev/status         ns
yes delete     ajjobs.aj.dev                ns
no  update     ajjobs.aj.dev                ns
no  create     ajjobs.aj.dev                ns
yes list       ajtemplates.aj.dev           ns
yes create     jobs.batch.volcano.sh        ns
yes delete     jobs.batch.volcano.sh        ns
no  update     jobs.batch.volcano.sh        ns
yes create     jobs.batch                   ns
yes create     services                     ns
no  delete     services                     ns
yes list       pods                         ns
no  get        pods                         ns
no  create     pods                         ns
no  get        pods/log                     ns
no  create     pods/exec                    ns
# the storage Secret it writes: created and patched, never read or listed
yes create     secrets                      ns
yes patch      secrets                      ns
no  get        secrets                      ns
no  list       secrets                      ns
no  get        secrets                      sys
yes get        podgroups.scheduling.volcano.sh ns
yes list       events                       ns
yes create     events.events.k8s.io         ns
yes get        leases.coordination.k8s.io   sys
yes update     leases.coordination.k8s.io   sys
no  create     leases.coordination.k8s.io   sys
no  delete     leases.coordination.k8s.io   sys
no  update     leases.coordination.k8s.io   ns
# watchNamespace: nothing elsewhere
no  get        ajjobs.aj.dev                other
no  create     jobs.batch.volcano.sh        other
TABLE

# --- two replicas: one leads; a dead leader hands over after the lease time; nothing runs twice ---
expect_ok "helm upgrade to two replicas" \
  "$helm" upgrade "$rel" "$chart" -n "$sys" -f "$work/values.yaml" --set replicaCount=2 --wait --timeout 180s
expect_ok "two pods, both Ready (followers are ready too)" wait_for 60 ready_pods 2
leader=$(holder)
follower=$(pods | grep -vx "$leader")
expect_ok "one of them leads ($leader), the other follows ($follower)" bash -c "[[ -n '$leader' && -n '$follower' && '$leader' != '$follower' ]]"
for j in j2 j3 j4; do submit "$j"; done
# The leader stops dead: its container frozen through its node's containerd (a hung or cut-off
# leader: it neither renews nor releases the Lease), so the follower must wait the Lease out; then
# it is killed (SIGKILL, delivered as it thaws: it runs no further instruction). Killed outright
# instead, the kubelet would restart it at once under the same identity (the pod's name), and a
# holder that sees its own name renews: no hand-over to test.
cid=$(k -n "$sys" get pod "$leader" -o jsonpath='{.status.containerStatuses[0].containerID}')
node=$(k -n "$sys" get pod "$leader" -o jsonpath='{.spec.nodeName}')
transitions=$(k -n "$sys" get lease aj-controller -o jsonpath='{.spec.leaseTransitions}')
ctr_leader() { ctr --address "$AJ_CP_DIR/node/${node#real-}/root/run/containerd/containerd.sock" -n k8s.io "$@"; }
t0=$(date +%s.%N)
expect_ok "the leader's container is frozen (ctr tasks pause)" ctr_leader tasks pause "${cid#containerd://}"
expect_ok "the follower takes the Lease" wait_for 60 holds "$follower"
# How long it took is measured and shown, not asserted (no timed assertions in tests).
echo "# hand-over $(echo "$(date +%s.%N) - $t0" | bc | cut -d. -f1) s after the freeze (lease $(k -n "$sys" get lease aj-controller -o jsonpath='{.spec.leaseDurationSeconds}') s)"
expect_eq "...as one more transition of the Lease" "$((transitions + 1))" \
  k -n "$sys" get lease aj-controller -o jsonpath='{.spec.leaseTransitions}'
expect_ok "the frozen leader is killed" ctr_leader tasks kill -s SIGKILL "${cid#containerd://}"
# Thawed, it dies (containerd may have thawed it already: then there is nothing to resume).
ctr_leader tasks resume "${cid#containerd://}" >/dev/null 2>&1 || true
submit j5
expect_ok "the kubelet restarts it (restartCount 1) and both pods are Ready" wait_for 120 bash -c \
  "[[ \$('$AJ_KUBECTL' -n '$sys' get pod '$leader' -o jsonpath='{.status.containerStatuses[0].restartCount}') == 1 ]]"
expect_ok "...both Ready" wait_for 60 ready_pods 2
expect_ok "...the restarted one following: the Lease stays the first follower's" holds "$follower"
for j in j2 j3 j4 j5; do
  expect_ok "$j reaches Succeeded" wait_for 120 phase_is "$j" Succeeded
done
# Nothing twice: per AjJob one creation Event, one Volcano Job, its pod started once.
events() { # OBJECT REASON: how many times Events say it
  k -n "$ns" get events --field-selector "involvedObject.name=$1,reason=$2" \
    -o jsonpath='{range .items[*]}{.count}{"\n"}{end}' | awk '{n += ($1 == "" ? 1 : $1)} END {print n + 0}'
}
for j in j1 j2 j3 j4 j5; do
  expect_eq "nothing ran twice: $j's Volcano Job was created once (Events)" "1" events "$j" VolcanoJobCreated
  expect_eq "...and its pod started once" "1" events "$j-master-0" Started
done
expect_eq "...and one Volcano Job each in the namespace" "j1 j2 j3 j4 j5" bash -c \
  "'$AJ_KUBECTL' -n '$ns' get jobs.batch.volcano.sh -o jsonpath='{.items[*].metadata.name}' | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ \$//'"

# --- helm upgrade to a rebuilt image with a changed CRD (docs/operations.md: CRDs first) ---
status_of_all() { k -n "$ns" get ajjobs -o json | python3 -c '
import json, sys
for o in sorted(json.load(sys.stdin)["items"], key=lambda o: o["metadata"]["name"]):
    print(o["metadata"]["name"], o["metadata"]["uid"], json.dumps(o.get("status"), sort_keys=True))'; }
status_of_all >"$work/before.txt"
expect_ok "the image is rebuilt and loaded as aj:$tag2" \
  "$repo_root/scripts/build-image.sh" --base local --tag "aj:$tag2" "${loads[@]}" --snapshotter "$snap"
mkdir -p "$work/crds"
cp "$chart/crds/"*.yaml "$work/crds/"
# The change: a column for `kubectl get ajjobs -o wide` (priority 1: default output unchanged).
python3 - "$work/crds/ajjob.yaml" <<'PY'
import sys, yaml
p = sys.argv[1]
doc = yaml.safe_load(open(p))
for v in doc["spec"]["versions"]:
    v.setdefault("additionalPrinterColumns", []).append(
        {"name": "Upgraded", "type": "string", "priority": 1, "jsonPath": ".metadata.annotations.aj\\.dev/upgraded"})
yaml.safe_dump(doc, open(p, "w"), sort_keys=False)
PY
crd_changed=1
expect_ok "the changed CRDs are applied server-side" k apply --server-side --force-conflicts -f "$work/crds/"
expect_ok "helm upgrade to aj:$tag2" "$helm" upgrade "$rel" "$chart" -n "$sys" -f "$work/values.yaml" \
  --set replicaCount=2 --set image.tag="$tag2" --wait --timeout 180s
upgraded() {
  ready_pods 2 && [[ $(k -n "$sys" get pods -l "app.kubernetes.io/instance=$rel" \
    -o jsonpath='{.items[*].spec.containers[0].image}') == "aj:$tag2 aj:$tag2" ]]
}
expect_ok "the new pods run aj:$tag2, Ready" wait_for 90 upgraded
expect_ok "the CRD has the new column" bash -c \
  "'$AJ_KUBECTL' get crd ajjobs.aj.dev -o jsonpath='{.spec.versions[0].additionalPrinterColumns[*].name}' | grep -qw Upgraded"
expect_ok "one of the new pods holds the Lease" wait_for 60 a_pod_leads "$sys"
sleep 5   # the new leader's first reconcile of every AjJob
status_of_all >"$work/after.txt"
expect_ok "every AjJob and its status are kept (same uid, same status)" diff "$work/before.txt" "$work/after.txt"

# --- helm uninstall: no pod, Role or Lease; the CRDs stay ---
expect_ok "helm uninstall" "$helm" uninstall "$rel" -n "$sys" --wait --timeout 120s
expect_ok "no pod, Role or Lease is left" wait_for 60 bash -c \
  "[[ -z \$('$AJ_KUBECTL' -n '$sys' get pods,roles,leases -o name) && -z \$('$AJ_KUBECTL' -n '$ns' get roles -o name) ]]"
expect_ok "the CRDs stay (Helm never deletes crds/)" k get crd ajjobs.aj.dev ajtemplates.aj.dev
expect_eq "...and with them every AjJob" "5" bash -c "'$AJ_KUBECTL' -n '$ns' get ajjobs -o name | wc -l"
k apply --server-side --force-conflicts -f "$chart/crds/" >/dev/null && crd_changed=0

# --- the same with kubectl apply --server-side -k deploy/ (an overlay: this namespace, this image,
# the real nodes, the AjJob namespace only, cluster-wide names of its own) ---
sys2=$(new_namespace ickz)
id=${sys2##*-}
mkdir -p "$work/overlay"
cp -r "$repo_root/deploy" "$work/deploy"
args=$(python3 -c '
import json, sys, yaml
d = [o for o in yaml.safe_load_all(open(sys.argv[1])) if o and o["kind"] == "Deployment"][0]
a = d["spec"]["template"]["spec"]["containers"][0]["args"]
a = [x.replace("--lease-namespace=aj-system", "--lease-namespace=" + sys.argv[2]) for x in a]
print(json.dumps(a + ["--namespace=" + sys.argv[3]]))' "$repo_root/deploy/controller.yaml" "$sys2" "$ns")
cat >"$work/overlay/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: $sys2
resources: [../deploy]
images: [{name: aj, newTag: "$tag2"}]
patches:
- target: {kind: ClusterRole, name: aj-controller}
  patch: '[{"op": "replace", "path": "/metadata/name", "value": "aj-controller-$id"}]'
- target: {kind: ClusterRoleBinding, name: aj-controller}
  patch: '[{"op": "replace", "path": "/metadata/name", "value": "aj-controller-$id"}, {"op": "replace", "path": "/roleRef/name", "value": "aj-controller-$id"}]'
- target: {kind: Deployment, name: aj-controller}
  patch: |
    [{"op": "replace", "path": "/spec/template/spec/containers/0/imagePullPolicy", "value": "Never"},
     {"op": "replace", "path": "/spec/template/spec/containers/0/args", "value": $args},
     {"op": "add", "path": "/spec/template/spec/nodeSelector", "value": {"aj.dev/node": "real"}},
     {"op": "add", "path": "/spec/template/spec/tolerations", "value": [{"key": "aj.dev/node", "operator": "Equal", "value": "real", "effect": "NoSchedule"}]}]
YAML
expect_ok "kubectl apply --server-side -k (deploy/)" k apply --server-side -k "$work/overlay"
kz_ready() { [[ $(k -n "$sys2" get pods -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -cx True) == 2 ]]; }
expect_ok "its two pods are Ready on real nodes" wait_for 180 kz_ready
expect_ok "one holds the deploy/ Lease" wait_for 60 a_pod_leads "$sys2"
kpod=$(k -n "$sys2" get pods -o jsonpath='{.items[0].metadata.name}')
expect_eq "...as uid 10001" "10001" k -n "$sys2" exec "$kpod" -- id -u
expect_ok "aj run creates AjJob k1" submit k1
expect_ok "...which reaches Succeeded through it" wait_for 120 phase_is k1 Succeeded
expect_ok "...reconciled by a deploy/ pod" bash -c \
  "for p in \$('$AJ_KUBECTL' -n '$sys2' get pods -o name); do '$AJ_KUBECTL' -n '$sys2' logs \$p; done | grep -q '\"ajjob\":\"$ns/k1\"'"
expect_eq "the deploy/ ServiceAccount: cannot read Secrets" "no" bash -c \
  "'$AJ_KUBECTL' auth can-i --as=system:serviceaccount:$sys2:aj-controller get secrets -n '$ns' || true"
expect_eq "...nor create its Lease" "no" bash -c \
  "'$AJ_KUBECTL' auth can-i --as=system:serviceaccount:$sys2:aj-controller create leases.coordination.k8s.io -n '$sys2' || true"
# Not `kubectl delete -k`: that deletes the CRDs too, and with them every AjJob of the cluster
# (deploy/README.md says how to remove the controller alone).
expect_ok "deleting what it applied but the CRDs removes it" bash -c \
  "$(declare -f but_crds); AJ_KUBECTL='$AJ_KUBECTL' work='$work'; but_crds | '$AJ_KUBECTL' delete -f - --wait=true --timeout=120s"
expect_ok "...and keeps the CRDs and every AjJob" bash -c \
  "'$AJ_KUBECTL' get crd ajjobs.aj.dev >/dev/null && [[ \$('$AJ_KUBECTL' -n '$ns' get ajjobs -o name | wc -l) == 6 ]]"
expect_ok "...leaving no pod, Role, Lease or ClusterRole" bash -c \
  "! '$AJ_KUBECTL' get namespace '$sys2' >/dev/null 2>&1 && ! '$AJ_KUBECTL' get clusterrole aj-controller-$id >/dev/null 2>&1"
rm -f "$work/overlay/kustomization.yaml"

finish
