#!/usr/bin/env bash
# The control-plane scripts on bad input: taken ports, a start that is not ready in time, builds
# that cannot work, a cluster component that dies, a stale state directory. Uses the fixture's API
# server port as a port known to be taken.
source "$(dirname "$0")/lib.sh"
cpd=$repo_root/tests/controlplane
busy=$AJ_CP_APISERVER_PORT
work=$(mktemp -d "${TMPDIR:-/tmp}/aj-it-scripts.XXXXXX")
trap 'for d in "$work"/cp* "$work"/cl* "$work"/lc; do [[ -d $d ]] && "$cpd/stop.sh" --dir "$d" >/dev/null 2>&1; done; rm -rf "$work" "$t_out"' EXIT

# No process runs from DIR (it is on the daemons' command lines) and DIR is gone.
gone() { [[ -z $(pids_matching "--cert-dir $1/pki") && ! -e $1 ]]; }

# Second control plane with its etcd client port taken: retried on other ports.
expect_fail "start reports a taken etcd port and retries" "a port for etcd was taken, retrying" \
  bash -c "AJ_CP_PORTS='$busy' '$cpd/start.sh' --dir '$work/cp1' 2>&1 && false"
expect_ok "...and the second control plane is ready" "$cpd/stop.sh" --check "$work/cp1/env"
expect_fail "a second start in the same directory is refused" "already running" "$cpd/start.sh" --dir "$work/cp1"
old_pid=$(source "$work/cp1/env" && echo "$AJ_CP_APISERVER_PID")
expect_ok "--restart replaces a running one" "$cpd/start.sh" --restart --dir "$work/cp1"
expect_ok "...whose processes are gone" test -z "$(pids_matching "--secure-port" | grep -x "$old_pid")"
mkdir -p "$work/foreign" && touch "$work/foreign/keep"
expect_fail "a non-empty directory that is not ours is refused" "not a control-plane directory" \
  "$cpd/start.sh" --dir "$work/foreign"
expect_ok "...and left alone" test -f "$work/foreign/keep"
expect_ok "stop" "$cpd/stop.sh" --dir "$work/cp1"
expect_ok "stop leaves no process and no directory" gone "$work/cp1"
expect_ok "stopping twice is harmless" "$cpd/stop.sh" --dir "$work/cp1"

# API server port taken (etcd gets free ports).
expect_fail "start reports a taken API server port and retries" "a port for kube-apiserver was taken, retrying" \
  bash -c "AJ_CP_PORTS='- - $busy' '$cpd/start.sh' --dir '$work/cp2' 2>&1 && false"
expect_ok "...and comes up on another port" bash -c "source '$work/cp2/env' && [[ \$AJ_CP_APISERVER_PORT != $busy ]]"
"$cpd/stop.sh" --dir "$work/cp2" >/dev/null

# Not ready in time (a zero budget, so it cannot depend on the machine's speed): the logs of both
# daemons are printed, nothing is left behind.
AJ_CP_READY_TIMEOUT=0 "$cpd/start.sh" --dir "$work/cp3" >"$work/timeout.out" 2>&1
expect_eq "a start not ready in time fails" "1" echo "$?"
expect_ok "...naming the timeout" grep -q "did not become ready within 0s" "$work/timeout.out"
expect_ok "...with the last lines of the etcd log" grep -q -- "--- last lines of .*etcd.log" "$work/timeout.out"
expect_ok "...and of the kube-apiserver log" grep -q -- "--- last lines of .*kube-apiserver.log" "$work/timeout.out"
expect_ok "...leaving no process and no directory" gone "$work/cp3"

# A start killed half-way (e.g. by a ctest timeout) can still be cleaned up by stop.sh.
"$cpd/start.sh" --dir "$work/cp4" >/dev/null 2>&1 &
starter=$!
for _ in $(seq 300); do
  grep -qs '^export AJ_CP_APISERVER_PID=[0-9]' "$work/cp4/env" && break
  sleep 0.1
done
kill -KILL "$starter" 2>/dev/null; wait "$starter" 2>/dev/null
expect_ok "a start killed with SIGKILL left its pids in the env file" grep -q '^export AJ_CP_APISERVER_PID=[0-9]' "$work/cp4/env"
expect_ok "...so stop.sh removes what it started" "$cpd/stop.sh" --dir "$work/cp4"
expect_ok "...leaving no process and no directory" gone "$work/cp4"

# Builds that cannot work stop with one line naming the cause and the command to retry.
expect_fail "unknown version" "retry: tests/controlplane/build.sh v1.99.0" "$cpd/build.sh" v1.99.0
expect_fail "not a version" "is not a Kubernetes release tag" "$cpd/build.sh" latest
mkdir -p "$work/fakego"
printf '#!/bin/sh\n[ "$1 $2" = "env GOVERSION" ] && { echo go1.20.1; exit 0; }\nexit 1\n' >"$work/fakego/go"
chmod +x "$work/fakego/go"
expect_fail "Go too old" "needs Go >= " \
  env PATH="$work/fakego:$PATH" AJ_CONTROLPLANE_CACHE="$work/cache" "$cpd/build.sh"
expect_fail "module proxy unreachable" "retry: tests/controlplane/build.sh" \
  env GOPROXY=off GOMODCACHE="$work/gomod" AJ_CONTROLPLANE_CACHE="$work/cache" "$cpd/build.sh"
expect_eq "...in one line" "1" bash -c "GOPROXY=off GOMODCACHE='$work/gomod' AJ_CONTROLPLANE_CACHE='$work/cache' '$cpd/build.sh' 2>&1 | grep -v '^build.sh: building' | wc -l"
expect_fail "gen-modules: release not served" "retry: tests/controlplane/gen-modules.sh v1.99.0" \
  env GOPROXY=off GOMODCACHE="$work/gomod" "$cpd/gen-modules.sh" v1.99.0
expect_ok "build with binaries present is a no-op" bash -c "'$cpd/build.sh' $AJ_K8S_VERSION 2>&1 | grep -q 'up to date'"

# --- the local cluster (start.sh --cluster) ---
# (Volcano's source, refused or missing: test-volcano-source.sh)
# A component that never gets healthy: a kwok that exits at once, in a tools cache of its own.
real=$(dirname "$("$cpd/build-cluster.sh" volcano 2>/dev/null | awk '{print $2}')")
kver=$(cat "$cpd/KWOK_VERSION")
mkdir -p "$work/tools/kwok/$kver/bin"
ln -s "$real" "$work/tools/volcano"
ln -s "$(dirname "$(dirname "$(dirname "$AJ_KUBECTL")")")" "$work/tools/controlplane"
printf '#!/bin/sh\necho "kwok: simulated start-up failure" >&2\nexit 3\n' >"$work/tools/kwok/$kver/bin/kwok"
chmod +x "$work/tools/kwok/$kver/bin/kwok"
echo "$kver" >"$work/tools/kwok/$kver/stamp"
AJ_TOOLS_CACHE=$work/tools "$cpd/start.sh" --cluster --dir "$work/cl1" >"$work/cl1.out" 2>&1
expect_eq "a cluster whose kwok dies fails" "1" echo "$?"
# FILE holds TEXT (else FILE is shown)
has() { grep -q "$2" "$1" || { cat "$1"; return 1; }; }
expect_ok "...naming kwok" has "$work/cl1.out" "cluster-up.sh: kwok exited during start-up"
expect_ok "...with its last log lines" has "$work/cl1.out" "kwok: simulated start-up failure"
expect_ok "...leaving no process and no directory" gone "$work/cl1"
no_process() { [[ -z $(pids_matching "$1") ]]; }
expect_ok "...not even the components started before it" no_process "$work/cl1/"
# A real node whose containerd cannot start: named with its log, and nothing of the node is left.
mkdir -p "$work/bin"
printf '#!/bin/sh\necho "containerd: simulated start-up failure" >&2\nexit 1\n' >"$work/bin/containerd"
chmod +x "$work/bin/containerd"
bridges() { ip -o link show type bridge | awk -F': ' '$2 ~ /^ajbr/ {print $2}' | sort; }
before=$(bridges)
PATH=$work/bin:$PATH "$cpd/start.sh" --cluster --dir "$work/cl2" >"$work/cl2.out" 2>&1
expect_eq "a cluster whose real node's containerd fails does not start" "1" echo "$?"
expect_ok "...naming it" has "$work/cl2.out" "cluster-up.sh: containerd@real-0 exited during start-up"
expect_ok "...with its last log lines" has "$work/cl2.out" "containerd: simulated start-up failure"
expect_ok "...leaving no process and no directory" gone "$work/cl2"
expect_eq "...and no bridge of its own" "$before" bridges
# A stale state directory from a killed run: local-cluster.sh up stops what is left and starts anew.
AJ_LOCAL_CLUSTER_DIR=$work/lc bash "$repo_root/scripts/local-cluster.sh" up >/dev/null 2>&1
expect_ok "local-cluster.sh up starts the cluster" env AJ_LOCAL_CLUSTER_DIR="$work/lc" bash "$repo_root/scripts/local-cluster.sh" status
# shellcheck disable=SC1091
kill -KILL $(source "$work/lc/env" && awk '{print $2}' "$work/lc/components" && echo "$AJ_CP_APISERVER_PID $AJ_CP_ETCD_PID")
sleep 1
expect_fail "status says a killed cluster is not running" "is not running" \
  env AJ_LOCAL_CLUSTER_DIR="$work/lc" bash "$repo_root/scripts/local-cluster.sh" status
expect_ok "up over its stale directory starts it again" \
  env AJ_LOCAL_CLUSTER_DIR="$work/lc" bash "$repo_root/scripts/local-cluster.sh" up
expect_ok "...and every component is healthy, Kueue and the real node's four included" bash -c "AJ_LOCAL_CLUSTER_DIR='$work/lc' bash '$repo_root/scripts/local-cluster.sh' status | grep -c ' healthy ' | grep -qx 11"
# what the real node made, to look for after down
# shellcheck disable=SC1091
source "$work/lc/node/state"
cgroups=$(ls -d /sys/fs/cgroup/*/aj-"$node_idx"-* 2>/dev/null)
expect_ok "the real node has a bridge, a DNS namespace and cgroups" test -n "$(ip link show "$node_bridge" 2>/dev/null)$(ip netns list | grep "$node_dns_netns")$cgroups"
expect_ok "...and an iptables rule that keeps its pods from opening connections to the host" \
  bash -c "iptables -S INPUT | grep -q -- '-i $node_bridge '"
expect_ok "down stops it" env AJ_LOCAL_CLUSTER_DIR="$work/lc" bash "$repo_root/scripts/local-cluster.sh" down
expect_ok "...leaving no directory" test ! -e "$work/lc"
expect_ok "...no process" no_process "$work/lc/"
expect_ok "...no mount" bash -c "! grep -F '$work/lc' /proc/self/mountinfo"
expect_ok "...no bridge" bash -c "! ip link show '$node_bridge' 2>/dev/null"
expect_ok "...no DNS network namespace" bash -c "! ip netns list | grep -F '$node_dns_netns'"
expect_ok "...no interface on the pod network" bash -c "! ip -o link | grep -E 'ajdns$node_idx|master $node_bridge'"
expect_ok "...no cgroup" bash -c "! ls -d /sys/fs/cgroup/*/aj-$node_idx-* 2>/dev/null"
expect_ok "...no iptables rule" bash -c "! iptables -S INPUT | grep -q -- '-i $node_bridge '"
finish
