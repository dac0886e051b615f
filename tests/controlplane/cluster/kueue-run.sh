#!/usr/bin/env bash
# Run Kueue's manager (the arguments) with its metrics certificate where it insists on finding it
# when its internal certificate management is off: /etc/kueue/metrics/certs. Run it in a mount
# namespace of its own (unshare --mount): /etc is overlaid there with a directory of the run, so the
# host's /etc is never written.
# Usage: unshare --mount --propagation private -- kueue-run.sh CERT-DIR STATE-DIR KUEUE [ARGS...]
set -euo pipefail
certs=$1 state=$2
shift 2
mkdir -p "$state/upper" "$state/work"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$state/upper,workdir=$state/work" /etc
mkdir -p /etc/kueue/metrics/certs
cp "$certs/tls.crt" "$certs/tls.key" /etc/kueue/metrics/certs/
exec "$@"
