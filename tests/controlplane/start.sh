#!/usr/bin/env bash
# Start etcd and kube-apiserver on 127.0.0.1 (free ports), with fresh certificates and a kubeconfig.
#
# Usage: tests/controlplane/start.sh [--version vX.Y.Z] [--dir DIR] [--build] [--cluster]
#   --dir DIR   run directory (created; must not hold a running control plane). Default: a new temp dir.
#   --build     build the binaries first if they are missing (otherwise a missing build is an error).
#   --restart   stop a control plane still running in DIR (e.g. left by an interrupted run) first.
#   --cluster   then make it a batch cluster: kube-controller-manager, kube-scheduler, kwok nodes and
#               Volcano (cluster-up.sh; its components are listed in DIR/components).
#   --worker    a MultiKueue worker cluster instead (implies --cluster): the same without Volcano and
#               aj's CRDs, which a worker never sees (cluster-up.sh DIR worker). Wire it to a manager
#               with cluster/multikueue.sh.
# Environment: AJ_K8S_VERSION (default version), AJ_CP_READY_TIMEOUT (seconds, default 60),
#   AJ_CP_PORTS="ETCD PEER APISERVER" ports to try first ("-": any; a taken one is replaced by a free one).
#
# On success prints the env file path on the last line. The env file (DIR/env, shell syntax) sets
# KUBECONFIG, AJ_KUBECTL, AJ_KUBE_SERVER, AJ_KUBE_CA, AJ_KUBE_TOKEN, ports and pids.
# Stop with: tests/controlplane/stop.sh --dir DIR   (or: stop.sh DIR/env)
# On any failure everything started so far is stopped and the directory removed.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$cp_here/node.sh"

ver=
dir=
build=0
restart=0
cluster=0
worker=0
while (($#)); do
  case $1 in
    --version) ver=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --build) build=1; shift ;;
    --restart) restart=1; shift ;;
    --cluster) cluster=1; shift ;;
    --worker) cluster=1; worker=1; shift ;;
    *) echo "start.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
ver=$(cp_version "$ver")
bin=$(cp_bin_dir "$ver")
timeout_s=${AJ_CP_READY_TIMEOUT:-60}

if [[ ! -x $bin/kube-apiserver || ! -x $bin/etcd || ! -x $bin/kubectl ]]; then
  if ((build)); then
    bin=$("$cp_here/build.sh" "$ver" | tail -1)
  else
    echo "start.sh: control plane $ver is not built; run: tests/controlplane/build.sh $ver" >&2
    exit 1
  fi
fi

t0=$(date +%s.%N)
if [[ -z $dir ]]; then
  dir=$(mktemp -d "${TMPDIR:-/tmp}/aj-controlplane.XXXXXX")
else
  if ((restart)) && [[ -f $dir/env ]]; then
    "$cp_here/stop.sh" --dir "$dir" >&2
  elif [[ -f $dir/env ]] && "$cp_here/stop.sh" --check "$dir/env" 2>/dev/null; then
    echo "start.sh: a control plane is already running in $dir (stop it: tests/controlplane/stop.sh --dir $dir)" >&2
    exit 1
  fi
  # Reuse only an empty directory or one a previous start wrote (never wipe anything else).
  if [[ -d $dir && -n $(ls -A "$dir") && ! -d $dir/pki ]]; then
    echo "start.sh: $dir is not empty and not a control-plane directory; choose another --dir" >&2
    exit 1
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
fi
dir=$(cd "$dir" && pwd)
pki=$dir/pki
mkdir -p "$pki"
# etcd data in memory when possible: it is thrown away anyway.
if [[ -d /dev/shm && -w /dev/shm ]]; then
  data=$(mktemp -d /dev/shm/aj-etcd.XXXXXX)
else
  data=$dir/etcd-data
fi

etcd_pid=
api_pid=
started=0
# On any failure before the end, stop what was started and remove the directory.
cleanup() {
  local rc=$?
  if ((!started)); then
    cp_stop_components "$dir" >/dev/null
    node_down "$dir"
    [[ -n $api_pid ]] && stop_pid "$api_pid"
    [[ -n $etcd_pid ]] && stop_pid "$etcd_pid"
    rm -rf "$data" "$dir"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- certificates: a CA, the serving cert, an admin client cert, a service-account key pair ---
ossl() {
  openssl "$@" >>"$pki/openssl.log" 2>&1 ||
    { echo "start.sh: openssl $1 failed: $(tail -n 1 "$pki/openssl.log")" >&2; return 1; }
}
ec_key() { ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }
ec_key "$pki/ca.key"
ossl req -x509 -new -key "$pki/ca.key" -subj "/CN=aj-test-ca" -days 30 -out "$pki/ca.crt" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
issue() { # name subject extensions...
  local name=$1 subj=$2; shift 2
  ec_key "$pki/$name.key"
  ossl req -new -key "$pki/$name.key" -subj "$subj" -out "$pki/$name.csr"
  printf '%s\n' "$@" >"$pki/$name.ext"
  ossl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 30 -extfile "$pki/$name.ext" -out "$pki/$name.crt"
}
# 10.0.0.1 and the kubernetes.default names: the `kubernetes` Service, which in-cluster clients (a
# pod on a real node) reach through the cluster's API relay (node.sh).
issue apiserver "/CN=kube-apiserver" "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:10.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" \
  "extendedKeyUsage=serverAuth" "keyUsage=critical,digitalSignature,keyEncipherment"
issue admin "/O=system:masters/CN=aj-admin" "extendedKeyUsage=clientAuth" \
  "keyUsage=critical,digitalSignature,keyEncipherment"
ec_key "$pki/sa.key"
ossl pkey -in "$pki/sa.key" -pubout -out "$pki/sa.pub"
token=$(openssl rand -hex 24)
printf '%s,aj-admin-token,aj-admin-token,"system:masters"\n' "$token" >"$pki/tokens.csv"
chmod 600 "$pki"/*.key "$pki/tokens.csv"

# kubeconfig for the admin client certificate, pointing at PORT.
write_kubeconfig() { # port
  local server=https://127.0.0.1:$1
  cat >"$dir/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: aj-test
  cluster:
    server: $server
    certificate-authority-data: $(base64 -w0 <"$pki/ca.crt")
users:
- name: aj-admin
  user:
    client-certificate-data: $(base64 -w0 <"$pki/admin.crt")
    client-key-data: $(base64 -w0 <"$pki/admin.key")
contexts:
- name: aj-test
  context: {cluster: aj-test, user: aj-admin, namespace: default}
current-context: aj-test
KC
  chmod 600 "$dir/kubeconfig"
}

# DIR/env: everything a client or stop.sh needs. Written as soon as a daemon is started (so a
# start killed half-way can still be stopped with stop.sh) and again when all is ready.
write_env() { # state: starting | ready
  local server=https://127.0.0.1:${api_port:-}
  cat >"$dir/env.tmp" <<ENV
# Control plane $ver ($1) started by tests/controlplane/start.sh; stop with tests/controlplane/stop.sh --dir $dir
export AJ_CP_STATE=$1
export AJ_CP_DIR='$dir'
export AJ_K8S_VERSION='$ver'
export KUBECONFIG='$dir/kubeconfig'
export AJ_KUBECTL='$bin/kubectl'
export AJ_KUBE_SERVER='$server'
export AJ_KUBE_CA='$pki/ca.crt'
export AJ_KUBE_CLIENT_CERT='$pki/admin.crt'
export AJ_KUBE_CLIENT_KEY='$pki/admin.key'
export AJ_KUBE_TOKEN='$token'
export AJ_CP_APISERVER_PORT=${api_port:-}
export AJ_CP_APISERVER_PID=${api_pid:-}
export AJ_CP_ETCD_PORT=${etcd_port:-}
export AJ_CP_ETCD_PID=${etcd_pid:-}
export AJ_CP_ETCD_DATA='$data'
export AJ_CP_CLUSTER=$cluster
export AJ_CP_WORKER=$worker
ENV
  # what the real node adds (AJ_LOCAL_IMAGE), once it runs
  [[ -f $dir/env.node ]] && cat "$dir/env.node" >>"$dir/env.tmp"
  chmod 600 "$dir/env.tmp"   # it holds the admin token
  mv "$dir/env.tmp" "$dir/env"
}

# --- ports ---
# pick_port VAR: the next preferred port (used as is), else a random free one not picked before.
preferred=(${AJ_CP_PORTS:-})
picked=" "
pick_port() {
  local p
  p=-
  if ((${#preferred[@]})); then
    p=${preferred[0]}; preferred=("${preferred[@]:1}")
  fi
  if [[ $p == - ]]; then
    while :; do
      p=$((20000 + RANDOM % 40000))
      [[ $picked != *" $p "* ]] && port_free "$p" && break
    done
  fi
  picked+="$p "
  printf -v "$1" '%s' "$p"
}
log_tail() {
  echo "--- last lines of $dir/etcd.log ---" >&2
  tail -n "${1:-20}" "$dir/etcd.log" >&2 2>/dev/null || true
  echo "--- last lines of $dir/kube-apiserver.log ---" >&2
  tail -n "${1:-20}" "$dir/kube-apiserver.log" >&2 2>/dev/null || true
}
in_use() { grep -qiE 'address already in use|bind: address' "$1" 2>/dev/null; }
deadline=$(($(date +%s) + timeout_s))


# Wait until PROBE succeeds. Returns 0 when ready, 1 if the process exited, 2 on timeout.
wait_ready() { # pid interval probe...
  local pid=$1 interval=$2; shift 2
  while (($(date +%s) < deadline)); do
    "$@" && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep "$interval"
  done
  return 2
}
# After a failed wait: retry (return 0) if the port was taken, else report and exit.
retry_or_die() { # what rc log
  if [[ $2 == 1 ]] && in_use "$3" && (($(date +%s) < deadline)); then
    echo "start.sh: a port for $1 was taken, retrying on another" >&2
    return 0
  fi
  if [[ $2 == 1 ]]; then echo "start.sh: $1 exited during start-up" >&2
  else echo "start.sh: $1 did not become ready within ${timeout_s}s" >&2; fi
  log_tail; exit 1
}
# GET /health over plain HTTP with bash alone.
etcd_healthy() {
  (exec 3<>"/dev/tcp/127.0.0.1/$etcd_port" &&
    printf 'GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3 &&
    timeout 2 cat <&3) 2>/dev/null | grep -q '"health":"true"'
}
api_ready() {
  [[ $("$bin/kubectl" --kubeconfig "$dir/kubeconfig" --request-timeout 2s get --raw /readyz 2>/dev/null) == ok ]]
}

# --- etcd (retried on other ports if one was taken in between) ---
for attempt in 1 2 3 4 5; do
  pick_port etcd_port; pick_port peer_port
  rm -rf "${data:?}"/*
  etcd_pid=$(spawn "$dir/etcd.log" "$bin/etcd" --name aj --data-dir "$data" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "aj=http://127.0.0.1:$peer_port" --initial-cluster-state new \
    --unsafe-no-fsync --log-level warn)
  write_env starting
  rc=0; wait_ready "$etcd_pid" 0.1 etcd_healthy || rc=$?
  ((rc == 0)) && break
  stop_pid "$etcd_pid"; etcd_pid=
  retry_or_die etcd "$rc" "$dir/etcd.log"
done
[[ -n $etcd_pid ]] || { echo "start.sh: etcd found no free port in 5 attempts" >&2; log_tail; exit 1; }
t_etcd=$(date +%s.%N)

# --- kube-apiserver ---
# The ServiceAccount admission plugin (token volumes) needs kube-controller-manager's
# serviceaccount controller to make each namespace's "default" account, so only the whole cluster
# has it: there pods get their token (and the real nodes mount it, for in-cluster clients).
admission=(--disable-admission-plugins ServiceAccount)
((cluster)) && admission=()
for attempt in 1 2 3 4 5; do
  pick_port api_port
  write_kubeconfig "$api_port"
  api_pid=$(spawn "$dir/kube-apiserver.log" "$bin/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
    --endpoint-reconciler-type none \
    --cert-dir "$pki" --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --client-ca-file "$pki/ca.crt" --token-auth-file "$pki/tokens.csv" \
    --authorization-mode RBAC --service-cluster-ip-range 10.0.0.0/24 \
    --service-account-issuer "https://127.0.0.1:$api_port" \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
    --kubelet-preferred-address-types InternalIP \
    --kubelet-client-certificate "$pki/admin.crt" --kubelet-client-key "$pki/admin.key" \
    "${admission[@]}" --allow-privileged=true --profiling=false)
  write_env starting
  rc=0; wait_ready "$api_pid" 0.2 api_ready || rc=$?
  ((rc == 0)) && break
  stop_pid "$api_pid"; api_pid=
  retry_or_die kube-apiserver "$rc" "$dir/kube-apiserver.log"
done
[[ -n $api_pid ]] || { echo "start.sh: kube-apiserver found no free port in 5 attempts" >&2; log_tail; exit 1; }

if ((cluster)); then
  up=("$cp_here/cluster-up.sh" "$dir")
  ((worker)) && up+=(worker)
  "${up[@]}" || exit 1
fi
write_env ready
started=1
server=https://127.0.0.1:$api_port
t1=$(date +%s.%N)
what=cluster
((worker)) && what='worker cluster'
((cluster)) || what='control plane'
awk -v w="$what" -v v="$ver" -v s="$server" -v a="$t0" -v e="$t_etcd" -v b="$t1" -v k="$dir/kubeconfig" 'BEGIN {
  printf "start.sh: %s %s ready at %s in %.1f s (etcd healthy after %.1f s); kubeconfig %s\n", w, v, s, b - a, e - a, k }' >&2
echo "$dir/env"
