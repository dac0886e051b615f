# Volcano on the local cluster (sourced by cluster-up.sh, whose start, free_port, serving_cert, k
# and die it uses; a MultiKueue worker has none of it): every CRD of Volcano's archive and aj's
# first, then its admission webhook, controller and scheduler, waited for until the scheduler has
# made the default queue.
volcano_crds() { # volcano-dir
  local volcano=$1 t_end
  k apply --server-side -f "$volcano/crd/volcano" -f "$volcano/crd/jobflow" -f "$root/crd" >/dev/null ||
    die "installing the CRDs failed"
  # (kubectl wait fails at once on a CRD whose status has no conditions yet)
  t_end=$(($(date +%s) + timeout_s))
  until k wait --for condition=Established --timeout=10s crd --all >/dev/null 2>&1; do
    (($(date +%s) < t_end)) || die "the CRDs were not established within ${timeout_s}s"
    sleep 0.5
  done
}
volcano_up() { # volcano-dir
  local volcano=$1 p hp t_end
  # --- Volcano's admission webhook: its configurations point at our URL and trust our CA ---
  serving_cert volcano-webhook
  p=$(free_port)
  python3 "$cp_here/cluster/webhooks.py" "$volcano/installer/volcano-development.yaml" \
    "https://127.0.0.1:$p" "$pki/ca.crt" >"$dir/webhooks.yaml" || die "cannot read Volcano's webhook configurations"
  k apply -f "$dir/webhooks.yaml" >/dev/null || die "registering Volcano's webhooks failed"
  hp=$(free_port)
  start vc-webhook-manager "https://127.0.0.1:$hp/healthz" "$volcano/bin/vc-webhook-manager" \
    --kubeconfig "$KUBECONFIG" --listen-address 127.0.0.1 --port "$p" --webhook-url "https://127.0.0.1:$p" \
    --tls-cert-file "$pki/volcano-webhook.crt" --tls-private-key-file "$pki/volcano-webhook.key" \
    --ca-cert-file "$pki/ca.crt" --enable-healthz --healthz-address "127.0.0.1:$hp" \
    --enabled-admission=/jobs/mutate,/jobs/validate,/podgroups/validate,/queues/mutate,/queues/validate,/hypernodes/validate,/cronjobs/validate

  p=$(free_port); hp=$(free_port)
  start vc-controller-manager "http://127.0.0.1:$hp/healthz" "$volcano/bin/vc-controller-manager" \
    --kubeconfig "$KUBECONFIG" --leader-elect=false --listen-address "127.0.0.1:$p" \
    --enable-healthz --healthz-address "127.0.0.1:$hp"

  cat >"$dir/vc-scheduler.conf" <<'CONF'
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
CONF
  p=$(free_port); hp=$(free_port)
  start vc-scheduler "http://127.0.0.1:$hp/healthz" "$volcano/bin/vc-scheduler" \
    --kubeconfig "$KUBECONFIG" --scheduler-conf "$dir/vc-scheduler.conf" --leader-elect=false \
    --schedule-period=1s --listen-address "127.0.0.1:$p" --enable-healthz --healthz-address "127.0.0.1:$hp"

  # vc-scheduler creates the default and root queues; the webhook must answer before jobs come.
  t_end=$(($(date +%s) + timeout_s))
  until k get queue default >/dev/null 2>&1; do
    (($(date +%s) < t_end)) || die "vc-scheduler did not create the default queue within ${timeout_s}s"
    sleep 0.5
  done
}
