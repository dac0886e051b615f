#!/usr/bin/env bash
# The README's main command: aj end to end on a Kubernetes API server.
#
# Usage: bash scripts/demo.sh [run]   build aj and aj-controller, use the cluster $KUBECONFIG
#                                     points at (when reachable) or start the local control
#                                     plane, install the CRDs, start aj-controller in the
#                                     background, submit the bundled Volcano example with
#                                     `aj run` and show the AjJob and the Volcano Job it became
#        bash scripts/demo.sh stop    stop what `run` started (the controller, and the local
#                                     control plane if it was started for the demo)
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

# Build or reuse kube-apiserver, etcd and kubectl, saying how long a first build takes.
# Sets cp_bin to their directory.
cp_bin=
build_controlplane() {
  local bin pid t0 last=0 now
  bin=$(source tests/controlplane/lib.sh && cp_bin_dir "$(cp_version)")
  cp_bin=$bin
  [[ -n ${cp_built:-} ]] && return 0
  cp_built=1
  if [[ -x $bin/kube-apiserver && -x $bin/etcd && -x $bin/kubectl ]]; then
    say "Reusing the local control plane binaries in $bin"
  else
    say "Building kube-apiserver, etcd and kubectl from source with Go"
    echo "The first build takes 10 minutes or more (and about 4 GB of Go caches); later runs reuse it."
    ensure_go
  fi
  bash tests/controlplane/build.sh >"$state/controlplane-build.out" 2>&1 &
  pid=$!
  t0=$(date +%s)
  while kill -0 "$pid" 2>/dev/null; do
    sleep 2
    now=$(( ($(date +%s) - t0) / 60 ))
    if ((now > last)); then last=$now; echo "  ... still building ($now min so far)"; fi
  done
  wait "$pid" || { cat "$state/controlplane-build.out" >&2; die "the control plane build failed"; }
  tail -n 2 "$state/controlplane-build.out" | head -n 1
}

# A kubectl: the one on PATH, else the one built with the control plane. Sets kubectl.
kubectl=
find_kubectl() {
  if command -v kubectl >/dev/null 2>&1; then
    kubectl=kubectl
  else
    build_controlplane
    kubectl=$cp_bin/kubectl
  fi
}

# True when $KUBECONFIG names a cluster that answers (and is not the demo's local one).
given_cluster() {
  [[ -n ${KUBECONFIG:-} ]] || return 1
  [[ $KUBECONFIG == "$local_dir/kubeconfig" ]] && return 1
  find_kubectl
  if "$kubectl" --request-timeout=5s version >/dev/null 2>&1; then return 0; fi
  echo "KUBECONFIG=$KUBECONFIG does not answer; using the local control plane instead"
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

run() {
  local name line phase ctx home template
  mkdir -p "$state"
  build
  if given_cluster; then
    say "Using the cluster KUBECONFIG points at (context $("$kubectl" config current-context))"
    echo given >"$state/cluster"
  else
    # A later `stop` must stop the local control plane even if this run fails half-way.
    echo "local $local_dir" >"$state/cluster"
    build_controlplane
    say "Starting the local control plane (kube-apiserver + etcd on 127.0.0.1, no nodes)"
    bash scripts/local-cluster.sh up
    # shellcheck disable=SC1091
    source "$local_dir/env"
    kubectl=$AJ_KUBECTL
  fi
  export KUBECONFIG
  k() { "$kubectl" --request-timeout=30s "$@"; }
  ctx=$(k config current-context)

  say "Installing the CRDs"
  k apply --server-side --force-conflicts -f crd/ajjob.yaml -f crd/ajtemplate.yaml
  if ! k get crd jobs.batch.volcano.sh >/dev/null 2>&1; then
    echo "Volcano is not installed: adding its CRDs (no Volcano scheduler runs them here)"
    k apply --server-side -f tests/integration/crds/volcano/ >/dev/null
  fi
  k wait --for condition=Established --timeout=60s crd/ajjobs.aj.dev crd/ajtemplates.aj.dev crd/jobs.batch.volcano.sh >/dev/null
  k get namespace "$ns" >/dev/null 2>&1 || k create namespace "$ns"

  start_controller

  home=$root/examples/.azure_jobs template=volcano
  if [[ $(cat "$state/cluster") == local* ]]; then
    # The example ships code through a shared volume that a helper pod fills; the local API
    # server has no node to run that pod, so the job goes without the volume (and without code).
    home=$state/home template=volcano-nodeless
    rm -rf "$home"
    cp -r "$root/examples/.azure_jobs" "$home"
    cat >"$home/template/$template.yaml" <<'YAML'
# The volcano example without its shared volume: no code is shipped.
base: volcano
config:
  jobs:
    - submit_args:
        env:
          AMLT_PERSISTENT_VOLUME_NAME: ""
          AMLT_PERSISTENT_VOLUME_MOUNT_DIR: ""
YAML
  fi
  say "aj run -t $template --context $ctx python train.py --epochs 3"
  echo "(the example's target.context names a cluster you do not have; --context overrides it)"
  [[ $template == volcano ]] || echo "(template $template in $home: the volcano example without its shared volume)"
  export AJ_HOME=$home
  line=$("$aj" run -t "$template" --context "$ctx" python train.py --epochs 3)
  echo "$line"
  name=${line#ajjob.aj.dev/}; name=${name%% *}

  for _ in $(seq 100); do
    phase=$(k -n "$ns" get ajjob "$name" -o jsonpath='{.status.phase}')
    [[ -n $phase && $phase != Pending ]] && break
    sleep 0.2
  done
  say "aj status $name --namespace $ns"
  "$aj" status "$name" --namespace "$ns"
  say "aj list --namespace $ns"
  "$aj" list --namespace "$ns"
  say "The Volcano Job aj-controller created (kubectl get jobs.batch.volcano.sh $name -n $ns -o yaml, spec excerpt)"
  # awk reads to the end, so kubectl never meets a closed pipe.
  k -n "$ns" get jobs.batch.volcano.sh "$name" -o yaml |
    awk '/^spec:/ { on = 1 } /^status:/ { on = 0 } on && n++ < 45'
  echo "  ..."

  say "Try it"
  cat <<MSG
export PATH=$root/build/src:\$PATH AJ_HOME=$home KUBECONFIG=$KUBECONFIG
aj list --namespace $ns -o wide
aj cancel $name --namespace $ns
MSG
  if [[ $(cat "$state/cluster") == local* ]]; then
    cat <<MSG
# No scheduler or nodes run here: play Volcano by finishing the job by hand, then follow it:
"$kubectl" -n $ns patch jobs.batch.volcano.sh $name --subresource=status --type=merge -p '{"status":{"state":{"phase":"Completed"}}}'
aj status $name --namespace $ns --wait
MSG
  fi
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
