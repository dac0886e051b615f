# Kueue on the local cluster (sourced by cluster-up.sh, whose start, free_port, serving_cert, k
# and die it uses): the real manager with its CRDs and its webhooks for Kueue's own kinds and
# batch/v1 Jobs (the batch/job integration only), pointed at 127.0.0.1. Then what the examples
# name: a ResourceFlavor per node shape, the ClusterQueue team-a with nominal quotas of the kwok
# nodes, and the LocalQueue team-a in namespace training (template/kube's queue).
kueue_up() { # kueue-dir
  local kq=$1 p hp mp cfg=$dir/kueue.yaml certs=$dir/kueue-certs crd t_end
  k apply --server-side -f "$kq/crd" >/dev/null || die "installing Kueue's CRDs failed"
  for crd in "$kq"/crd/*.yaml; do
    k wait --for condition=established --timeout=60s -f "$crd" >/dev/null ||
      die "Kueue's CRD $(basename "$crd") was not established"
  done
  k create namespace kueue-system --dry-run=client -o yaml | k apply -f - >/dev/null ||
    die "creating namespace kueue-system failed"
  serving_cert kueue-webhook
  mkdir -p "$certs"
  cp "$pki/kueue-webhook.crt" "$certs/tls.crt"
  cp "$pki/kueue-webhook.key" "$certs/tls.key"
  p=$(free_port); hp=$(free_port); mp=$(free_port)
  cat >"$cfg" <<CONF
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health: {healthProbeBindAddress: "127.0.0.1:$hp"}
metrics: {bindAddress: "127.0.0.1:$mp"}
webhook: {port: $p, host: 127.0.0.1, certDir: "$certs"}
leaderElection: {leaderElect: false}
internalCertManagement: {enable: false}
integrations: {frameworks: ["batch/job"]}
# RDMA devices are a node property, not a quota: the ClusterQueue covers cpu, memory and GPUs.
resources: {excludeResourcePrefixes: ["rdma/"]}
CONF
  # The on-demand visibility API would be a second server and an APIService: not needed here.
  # Its metrics server serves the webhook's certificate too (kueue-run.sh puts it in place).
  start kueue "http://127.0.0.1:$hp/readyz" unshare --mount --propagation private -- \
    "$cp_here/cluster/kueue-run.sh" "$certs" "$dir/kueue-etc" "$kq/bin/kueue" --config "$cfg" \
    --kubeconfig "$KUBECONFIG" --feature-gates=VisibilityOnDemand=false
  python3 "$cp_here/cluster/webhooks.py" "$kq/webhook/manifests.yaml" "https://127.0.0.1:$p" \
    "$pki/ca.crt" 2 kueue.x-k8s.io,batch kueue- >"$dir/kueue-webhooks.yaml" ||
    die "cannot read Kueue's webhook configurations"
  k apply -f "$dir/kueue-webhooks.yaml" >/dev/null || die "registering Kueue's webhooks failed"
  # The webhook answers once its server is up: the first object through it may have to wait.
  t_end=$(($(date +%s) + timeout_s))
  until k apply -f - >/dev/null 2>"$dir/kueue-queues.err" <<YAML; do
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: cpu}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: a100}
spec:
  nodeLabels: {nvidia.com/gpu.product: A100-SXM4-80GB}
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
spec:
  nodeLabels: {nvidia.com/gpu.product: H100-80GB-HBM3}
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-a}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: cpu
      resources:
      - {name: cpu, nominalQuota: 192}
      - {name: memory, nominalQuota: 1536Gi}
      - {name: nvidia.com/gpu, nominalQuota: 0}
    - name: a100
      resources:
      - {name: cpu, nominalQuota: 512}
      - {name: memory, nominalQuota: 8Ti}
      - {name: nvidia.com/gpu, nominalQuota: 32}
    - name: h100
      resources:
      - {name: cpu, nominalQuota: 512}
      - {name: memory, nominalQuota: 8Ti}
      - {name: nvidia.com/gpu, nominalQuota: 32}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: team-a, namespace: training}
spec: {clusterQueue: team-a}
YAML
    (($(date +%s) < t_end)) || die "Kueue's queues were refused for ${timeout_s}s: $(tail -n 3 "$dir/kueue-queues.err")"
    sleep 0.5
  done
  t_end=$(($(date +%s) + timeout_s))
  until [[ $(k get clusterqueue team-a -o jsonpath='{.status.conditions[?(@.type=="Active")].status}') == True ]]; do
    (($(date +%s) < t_end)) || die "Kueue's ClusterQueue team-a did not become Active within ${timeout_s}s"
    sleep 0.5
  done
}
