#!/usr/bin/env bash
# The README's main command: aj end to end on a Kubernetes cluster with Volcano.
#
# Usage: bash scripts/demo.sh [run]   build aj and aj-controller, use the cluster $KUBECONFIG
#                                     points at (when reachable) or start the local cluster
#                                     (real Volcano on kwok's simulated GPU nodes and two real
#                                     nodes running containers), install the CRDs,
#                                     start aj-controller in the background, submit the bundled
#                                     Volcano examples with `aj run` and follow each to its end
#        bash scripts/demo.sh stop    stop what `run` started (the controller, and the local
#                                     cluster if it was started for the demo)
#        bash scripts/demo.sh render  the offline tour: list, validate and render the examples
#
# State (controller pid and log, which cluster was used) lives in
# ${XDG_STATE_HOME:-$HOME/.local/state}/aj/demo (override: AJ_DEMO_DIR). Running `run` again
# restarts the controller and submits another job; nothing is left running by `stop`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
state=${AJ_DEMO_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/aj/demo}
local_dir=${AJ_LOCAL_CLUSTER_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/aj/local-cluster}
export AJ_LOCAL_CLUSTER_DIR=$local_dir
aj=$root/build/src/aj
controller=$root/build/controller/aj-controller
ns=training   # target.namespace of examples/.azure_jobs/template/volcano.yaml

say() { printf '\n== %s\n' "$*"; }
die() { echo "demo: $*" >&2; exit 1; }

build() {
  say "Installing build dependencies (apt, only what is missing)"
  bash scripts/install-deps.sh
  say "Building aj and aj-controller"
  cmake -S . -B build -G Ninja -DAJ_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build --target aj aj-controller >/dev/null
  echo "built $aj and $controller"
}

# --- the Go toolchain the control plane build needs ---
# Debian's golang-go is older than Kubernetes requires. The Go module proxy serves every Go
# release as the module golang.org/toolchain (that is how `go` itself switches toolchains), so
# a missing or old Go is replaced by that release, kept under ~/.cache/aj/go.
go_needed() {
  local ver v need=0.0
  ver=$(source tests/controlplane/lib.sh && cp_version)
  for v in $(sed -n 's/^go //p' tests/controlplane/versions/"$ver"/*/go.mod); do
    [[ $v =~ ^[0-9]+\.[0-9]+$ ]] && v=$v.0
    need=$(printf '%s\n%s\n' "$need" "$v" | sort -V | tail -1)
  done
  [[ $need != 0.0 ]] || die "no go.mod for control plane $ver under tests/controlplane/versions"
  echo "$need"
}
go_ok() { # go_ok NEED: a go on PATH at least that new
  local have
  command -v go >/dev/null 2>&1 || return 1
  have=$(go env GOVERSION 2>/dev/null) || return 1
  have=${have#go}; have=${have%%[-+ ]*}
  [[ $(printf '%s\n%s\n' "$1" "$have" | sort -V | head -1) == "$1" ]]
}
ensure_go() {
  local need arch dir proxy zip sudo=""
  need=$(go_needed)
  go_ok "$need" && return 0
  dir=${XDG_CACHE_HOME:-$HOME/.cache}/aj/go/go$need
  if [[ ! -x $dir/bin/go ]]; then
    arch=$(dpkg --print-architecture)
    proxy=${GOPROXY:-https://proxy.golang.org}; proxy=${proxy%%,*}
    [[ $proxy == http* ]] || proxy=https://proxy.golang.org
    echo "Go >= $need is needed to build the control plane; fetching go$need ($arch) from $proxy"
    if ! command -v curl >/dev/null || ! command -v unzip >/dev/null; then
      [[ $(id -u) -ne 0 ]] && sudo=sudo
      $sudo apt-get update -qq
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends curl unzip >/dev/null
    fi
    mkdir -p "$(dirname "$dir")"
    zip=$(mktemp "$(dirname "$dir")/.go$need.XXXXXX")
    rm -rf "$dir.tmp"
    curl -fsSL --retry 3 -o "$zip" "$proxy/golang.org/toolchain/@v/v0.0.1-go$need.linux-$arch.zip" &&
      unzip -q "$zip" -d "$dir.tmp" ||
      { rm -rf "$zip" "$dir.tmp"; die "could not fetch go$need; install Go >= $need and run again"; }
    rm -f "$zip"
    mv "$dir.tmp/golang.org/toolchain@v0.0.1-go$need.linux-$arch" "$dir"
    rm -rf "$dir.tmp"
    # Module zips carry no file modes.
    chmod +x "$dir"/bin/* "$dir"/pkg/tool/*/*
  fi
  export PATH=$dir/bin:$PATH
  go_ok "$need" || die "$dir/bin/go is not Go $need"
}

# Build or reuse the local cluster's programs (kube-apiserver, etcd, kubectl, kube-controller-manager,
# kube-scheduler, Volcano, kwok), each cached by version; the build scripts print a line a minute
# while they compile. Sets cp_bin to the control plane's directory.
cp_bin=
build_cluster() {
  cp_bin=$(source tests/controlplane/lib.sh && cp_bin_dir "$(cp_version)")
  [[ -n ${cp_built:-} ]] && return 0
  cp_built=1
  say "Building the local cluster's programs from source with Go (reused when already built)"
  echo "A first build takes about 20 minutes on 2 cores (and about 6 GB of Go caches); later runs reuse it."
  ensure_go
  bash tests/controlplane/build.sh >"$state/controlplane-build.out" ||
    { cat "$state/controlplane-build.out" >&2; die "the control plane build failed"; }
  bash tests/controlplane/build-cluster.sh >"$state/cluster-build.out" ||
    { cat "$state/cluster-build.out" >&2; die "building Volcano and kwok failed"; }
}

# A kubectl: the one on PATH, else the one built with the control plane. Sets kubectl.
kubectl=
find_kubectl() {
  if command -v kubectl >/dev/null 2>&1; then
    kubectl=kubectl
  else
    build_cluster
    kubectl=$cp_bin/kubectl
  fi
}

# True when $KUBECONFIG names a cluster that answers (and is not the demo's local one).
given_cluster() {
  [[ -n ${KUBECONFIG:-} ]] || return 1
  [[ $KUBECONFIG == "$local_dir/kubeconfig" ]] && return 1
  find_kubectl
  if "$kubectl" --request-timeout=5s version >/dev/null 2>&1; then return 0; fi
  echo "KUBECONFIG=$KUBECONFIG does not answer; using the local cluster instead"
  return 1
}

stop_controller() {
  local pid
  [[ -f $state/controller.pid ]] || return 0
  pid=$(cat "$state/controller.pid")
  if [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q aj-controller; then
    kill -TERM "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    echo "stopped aj-controller (pid $pid)"
  fi
  rm -f "$state/controller.pid" "$state/controller.port"
}

# GET a path from the controller's health port (bash's /dev/tcp: no curl needed); prints the body.
health_get() (
  port=$(cat "$state/controller.port" 2>/dev/null) || exit 1
  exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
  printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$1" >&3
  body=$(timeout 5 cat <&3)
  [[ $body == "HTTP/1."?" 200"* ]] && printf '%s\n' "${body##*$'\r\n\r\n'}"
)

start_controller() {
  stop_controller
  say "Starting aj-controller in the background (watching namespace $ns)"
  : >"$state/controller.log"
  # Its own session: Ctrl-C in this terminal, or the end of this script, does not stop it.
  setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$state/controller.pid" \
    "$controller" --kubeconfig "$KUBECONFIG" --namespace "$ns" --health-addr 127.0.0.1 \
    --health-port 0 --port-file "$state/controller.port" </dev/null >>"$state/controller.log" 2>&1 &
  for _ in $(seq 150); do
    health_get /readyz >/dev/null 2>&1 && break
    sleep 0.2
  done
  health_get /readyz >/dev/null 2>&1 ||
    { tail -n 20 "$state/controller.log" >&2; die "aj-controller did not become ready"; }
  echo "aj-controller is running (pid $(cat "$state/controller.pid")); log: $state/controller.log"
}

# Follow an AjJob until it ends, printing each phase it passes through with its message.
follow() { # name
  local phase last= msg
  for _ in $(seq 600); do
    phase=$(k -n "$ns" get ajjob "$1" -o jsonpath='{.status.phase}')
    if [[ -n $phase && $phase != "$last" ]]; then
      msg=$(k -n "$ns" get ajjob "$1" -o jsonpath='{.status.message}')
      printf '  %s  %-10s %s\n' "$(date +%H:%M:%S)" "$phase" "$msg"
      last=$phase
    fi
    case $phase in Succeeded | Failed | Cancelled) return 0 ;; esac
    sleep 0.2
  done
  echo "  (still $last after 2 minutes; follow it with: aj status $1 --namespace $ns --wait)"
}

pods() { # job: the pods Volcano's controller created
  k -n "$ns" get pods -l "volcano.sh/job-name=$1" \
    -o custom-columns=POD:.metadata.name,TASK:.metadata.labels.role,NODE:.spec.nodeName,PHASE:.status.phase
}

submit() { # template: aj run, then follow the AjJob to its end
  local line
  say "aj run -t $1 --context $ctx python train.py --epochs 3"
  line=$("$aj" run -t "$1" --context "$ctx" python train.py --epochs 3)
  echo "$line"
  name=${line#ajjob.aj.dev/}; name=${name%% *}
  follow "$name"
}

# The CPU example for the real nodes, in the demo's copy of the examples: the local runtime image,
# target.node_selector aj.dev/node=real, code through the shared volume, and a small train.py.
cpu_template() {
  cat >"$home/template/volcano-cpu.yaml" <<YAML
# CPU-only Volcano job on the local cluster's real nodes (written by scripts/demo.sh): the image
# made from Debian's packages, code through the shared volume.
config:
  target:
    service: volcano
    namespace: $ns
    queue: default
    gpus_per_node: 0
    cpus_per_node: 1
    memory: 512Mi
    rdma: false
    node_selector: {aj.dev/node: real}
  environment: {image: "$AJ_LOCAL_IMAGE"}
  jobs:
    - name: preprocess
      sku: C1
      instance_count: 2
      submit_args:
        env: {AMLT_PERSISTENT_VOLUME_NAME: training-shared, AMLT_PERSISTENT_VOLUME_MOUNT_DIR: /mnt/shared}
YAML
  mkdir -p "$state/cpu-code"
  cat >"$state/cpu-code/train.py" <<'PY'
import os, socket, sys
rank, world = os.environ["NODE_RANK"], os.environ["WORLD_SIZE"]
print("rank %s of %s on %s (master %s), args %s" % (rank, world, socket.gethostname(),
                                                   os.environ["MASTER_ADDR"], sys.argv[1:]))
for epoch in range(1, 4):
    print("rank %s epoch %d loss %.3f" % (rank, epoch, 1.0 / (epoch + int(rank))))
PY
}

# The CPU example on the real nodes: its code shipped through a helper pod, its ranks' output.
submit_cpu() {
  local line
  say "aj run -t volcano-cpu --context $ctx python3 train.py --epochs 3   (on the real nodes, from $state/cpu-code)"
  line=$(cd "$state/cpu-code" && "$aj" run -t volcano-cpu --context "$ctx" python3 train.py --epochs 3)
  echo "$line"
  name=${line#ajjob.aj.dev/}; name=${name%% *}
  follow "$name"
  say "Its pods ran in containers on the real nodes"
  pods "$name"
  say "aj logs $name --namespace $ns   (what its ranks printed)"
  "$aj" logs "$name" --namespace "$ns"
}

run() {
  local name ctx home local=0
  mkdir -p "$state"
  build
  if given_cluster; then
    say "Using the cluster KUBECONFIG points at (context $("$kubectl" config current-context))"
    echo given >"$state/cluster"
  else
    # A later `stop` must stop the local cluster even if this run fails half-way.
    echo "local $local_dir" >"$state/cluster"
    local=1
    say "Installing what the real nodes run (apt, only what is missing): containerd, runc, CNI plugins, mmdebstrap"
    bash scripts/install-deps.sh --node
    build_cluster
    say "Starting the local cluster on 127.0.0.1: etcd, kube-apiserver, kube-controller-manager,"
    echo "kube-scheduler, kwok (simulated GPU and CPU nodes: no container runs there), two real nodes"
    echo "(kubelet, containerd, runc: pods run in containers) and Volcano's webhook, controller and scheduler"
    AJ_CLUSTER_REAL_NODE=${AJ_CLUSTER_REAL_NODE:-2} bash scripts/local-cluster.sh up
    # shellcheck disable=SC1091
    source "$local_dir/env"
    kubectl=$AJ_KUBECTL
    say "Nodes: kwok's simulated ones, and the real ones (aj.dev/node=real)"
    "$kubectl" get nodes -L aj.dev/node,nvidia.com/gpu.product
  fi
  export KUBECONFIG
  k() { "$kubectl" --request-timeout=30s "$@"; }
  ctx=$(k config current-context)

  say "Installing the CRDs"
  k apply --server-side --force-conflicts -f crd/ajjob.yaml -f crd/ajtemplate.yaml
  if ! k get crd jobs.batch.volcano.sh >/dev/null 2>&1; then
    echo "Volcano is not installed: adding its CRDs (no Volcano runs them: jobs stay Submitted)"
    k apply --server-side -f tests/integration/crds/volcano/ >/dev/null
  fi
  k wait --for condition=Established --timeout=60s crd/ajjobs.aj.dev crd/ajtemplates.aj.dev crd/jobs.batch.volcano.sh >/dev/null
  k get namespace "$ns" >/dev/null 2>&1 || k create namespace "$ns"

  start_controller

  home=$root/examples/.azure_jobs
  echo "(the examples' target.context names a cluster you do not have; --context overrides it)"
  if ((local)); then
    # The GPU examples go to kwok's nodes, where no container runs and kwok's exec would run a
    # command on this machine rather than in a container holding the volume: they go without
    # code (docs/volcano.md, "Code through the shared volume"). The CPU example runs for real.
    home=$state/home
    rm -rf "$home"
    cp -r "$root/examples/.azure_jobs" "$home"
    sed -i -e 's|AMLT_PERSISTENT_VOLUME_NAME: training-shared|AMLT_PERSISTENT_VOLUME_NAME: ""|' \
      -e 's|AMLT_PERSISTENT_VOLUME_MOUNT_DIR: /mnt/shared|AMLT_PERSISTENT_VOLUME_MOUNT_DIR: ""|' \
      "$home/template/volcano.yaml"
    grep -q 'AMLT_PERSISTENT_VOLUME_NAME: ""' "$home/template/volcano.yaml" ||
      die "cannot take the shared volume out of $home/template/volcano.yaml"
    echo "(the examples' home copied to $home, without the shared volume in template/volcano.yaml)"
    cpu_template
  fi
  export AJ_HOME=$home
  submit volcano
  say "aj status $name --namespace $ns"
  "$aj" status "$name" --namespace "$ns"
  say "The pods Volcano created for it, and the nodes they ran on"
  pods "$name"

  submit heterogeneous
  say "The heterogeneous job's pods: each task on nodes of its own GPU product (node names say which)"
  pods "$name"
  ((local)) && submit_cpu
  say "aj list --namespace $ns"
  "$aj" list --namespace "$ns"

  say "Try it"
  cat <<MSG
export PATH=$root/build/src:\$PATH AJ_HOME=$home KUBECONFIG=$KUBECONFIG
aj run -t volcano -n 4 --context $ctx python -c 'print(1)'
aj list --namespace $ns -o wide
MSG
  say "Stop everything"
  echo "bash scripts/demo.sh stop"
}

stop() {
  local used=
  stop_controller
  [[ -f $state/cluster ]] && used=$(cat "$state/cluster")
  if [[ $used == "local "* ]]; then
    AJ_LOCAL_CLUSTER_DIR=${used#local } bash scripts/local-cluster.sh down
  elif [[ -n $used ]]; then
    echo "the cluster was yours (KUBECONFIG); it is left as it was"
  else
    echo "nothing to stop"
  fi
  rm -f "$state/cluster"
}

render() {
  bash scripts/install-deps.sh
  cmake -S . -B build -G Ninja -DAJ_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build --target aj >/dev/null
  export AJ_HOME=examples/.azure_jobs
  echo "== aj template list"
  "$aj" template list
  echo
  echo "== aj template validate"
  "$aj" template validate
  echo
  echo "== aj render -t volcano --name demo python train.py --epochs 3"
  "$aj" render -t volcano --name demo python train.py --epochs 3
}

case ${1:-run} in
  run) run ;;
  stop) stop ;;
  render) render ;;
  *) echo "usage: bash scripts/demo.sh [run|stop|render]" >&2; exit 2 ;;
esac
