# The local cluster's real nodes (sourced, not executed): kubelets with containerd, runc and the CNI
# plugins from Debian's packages, one pod network and the cluster DNS.
#   node_up COUNT  (cluster-up.sh; uses its start, failed, free_port and die) builds the kubelet and
#                  the images (cached), makes the pod network, starts cluster-dns and api-relay
#                  (the `kubernetes` Service) and, per node
#                  real-K, containerd@real-K and kubelet@real-K, and waits for the Nodes
#   node_down DIR  (stop.sh, start.sh's cleanup) stops them and removes every container, mount,
#                  network namespace, interface and cgroup the nodes made; a no-op without nodes
#
# Isolation: each node's containerd and kubelet run in a mount namespace of their own
# (DIR/node/K/mntns) where /run, /var/lib and /var/log are directories of DIR/node/K, so their
# default paths (containerd's state and shim sockets, the kubelet's root, CNI's cache, pod logs)
# are private to the node, and every mount they make (container root filesystems, network
# namespaces, volumes) goes when that namespace goes. There the kubelet also reads the kernel
# tunables it wants (vm.overcommit_memory 1, kernel.panic 10, kernel.panic_on_oops 1) from files:
# it would otherwise write them into the machine's kernel. The pod network is a bridge where the
# host has .1 (for the kubelets' probes) but takes no connection from a pod (iptables), and pods
# have no default route: they reach each other, the DNS and the `kubernetes` Service (relayed to
# the API server), nothing else. Why each flag: docs/controlplane.md ("The real nodes").

node_pkgs="containerd runc containernetworking-plugins iptables"
# Pod networks: 10.203.<index>.0/24, one index per cluster with real nodes (several may run).
node_net=10.203

node_up() {
  local count=$1 n=$dir/node ver kubelet_bin images pause runtime runtime_name idx p k t_node
  local snap=native first last per names=()
  t_node=$(date +%s)
  case $dir/ in /run/* | /var/lib/* | /var/log/*) die "real node: the run directory $dir is under /run, /var/lib or /var/log, which the nodes' kubelets and containerd see as their own; choose another" ;; esac
  ((count >= 1 && count <= 8)) || die "real node: $count real nodes asked for; 1 to 8"
  for p in containerd ctr runc unshare nsenter ip iptables; do
    command -v "$p" >/dev/null || die "real node: $p is not installed (run: scripts/install-deps.sh --test; packages $node_pkgs)"
  done
  for p in bridge host-local loopback; do
    [[ -x /usr/lib/cni/$p ]] || die "real node: the CNI plugin /usr/lib/cni/$p is missing (run: scripts/install-deps.sh --test)"
  done
  ver=$AJ_K8S_VERSION
  kubelet_bin=$("$cp_here/build.sh" --kubelet "$ver" | tail -1) || die "real node: building the kubelet failed"
  images=$("$cp_here/node-images.sh" "$ver") || die "real node: making its images failed"
  pause=$(awk '$1 == "pause" {print $2}' <<<"$images")
  runtime=$(awk '$1 == "runtime" {print $3}' <<<"$images")
  runtime_name=$(awk '$1 == "runtime" {print $2}' <<<"$images")
  grep -qw overlay /proc/filesystems && snap=overlayfs

  # --- claim a pod network: its bridge is the claim, made under a machine-wide lock ---
  mkdir -p "$n"
  exec 7>>"$(aj_cache_root)/node-net.lock"
  flock 7
  for ((idx = 1; idx < 255; idx++)); do
    ip link show "ajbr$idx" >/dev/null 2>&1 && continue
    ip -o addr show to "$node_net.$idx.0/24" | grep -q . && continue
    ip -o route show | grep -q "^$node_net\.$idx\." && continue
    break
  done
  ((idx < 255)) || die "real node: no free pod network $node_net.X.0/24 (254 clusters with real nodes running?)"
  cat >"$n/state" <<STATE
node_idx=$idx
node_count=$count
node_bridge=ajbr$idx
node_subnet=$node_net.$idx.0/24
node_dns_ip=$node_net.$idx.2
node_dns_netns=aj-dns-$idx
node_dns_veth=ajdns$idx
node_host_ip=$node_net.$idx.1
STATE
  # shellcheck disable=SC1091
  source "$n/state"
  ip link add "$node_bridge" type bridge && ip link set "$node_bridge" up ||
    die "real node: cannot create the bridge $node_bridge (needs CAP_NET_ADMIN)"
  flock -u 7
  # The host at .1: the kubelets' HTTP probes go from the host to the pods. Pods may answer but
  # never open a connection to the host (anything listening on a host address stays out of reach).
  ip addr add "$node_host_ip/24" dev "$node_bridge" &&
    iptables -I INPUT -i "$node_bridge" -m conntrack --ctstate NEW -j DROP ||
    die "real node: cannot give the host $node_host_ip on $node_bridge with pods kept from opening connections to it (iptables)"

  # --- the DNS's own network namespace on the bridge, at .2 (pods get .10 to .249) ---
  ip netns add "$node_dns_netns" &&
    ip link add "$node_dns_veth" type veth peer name eth0 netns "$node_dns_netns" &&
    ip link set "$node_dns_veth" master "$node_bridge" up &&
    ip -n "$node_dns_netns" addr add "$node_dns_ip/24" dev eth0 &&
    ip -n "$node_dns_netns" link set eth0 up &&
    ip -n "$node_dns_netns" link set lo up || die "real node: cannot make the DNS network namespace $node_dns_netns"
  p=$(free_port)
  start cluster-dns "http://127.0.0.1:$p/healthz" python3 -B "$cp_here/cluster/cluster-dns.py" \
    --netns "$node_dns_netns" --ip "$node_dns_ip" --health-port "$p" --env "$dir/env"
  printf 'nameserver %s\noptions ndots:5\n' "$node_dns_ip" >"$n/resolv.conf"

  # --- the `kubernetes` Service for in-cluster clients: its cluster IP on the DNS namespace's lo,
  # routed there from the pods (CNI below), relayed to the API server on the host's 127.0.0.1 ---
  local svc_ip svc_port
  read -r svc_ip svc_port < <("$AJ_KUBECTL" --kubeconfig "$KUBECONFIG" -n default get service kubernetes \
    -o jsonpath='{.spec.clusterIP} {.spec.ports[0].port}{"\n"}')
  [[ -n $svc_ip && -n $svc_port ]] || die "real node: the API server has no kubernetes Service"
  ip -n "$node_dns_netns" addr add "$svc_ip/32" dev lo || die "real node: cannot put $svc_ip in $node_dns_netns"
  p=$(free_port)
  start api-relay "http://127.0.0.1:$p/healthz" python3 -B "$cp_here/cluster/api-relay.py" \
    --netns "$node_dns_netns" --listen "$svc_ip:$svc_port" --to "$AJ_CP_APISERVER_PORT" --health-port "$p"

  per=$((240 / count))
  for ((k = 0; k < count; k++)); do
    first=$((10 + k * per)); last=$((first + per - 1))
    node_one "$k" "$node_net.$idx.$first" "$node_net.$idx.$last"
    names+=("real-$k")
  done

  # The kubelet refuses a loopback node IP (--node-ip 127.0.0.1 makes it keep the addresses it
  # finds instead of taking eth0's), so the address the API server reaches it at is written here,
  # as kwok writes its nodes'.
  local t_end=$(($(date +%s) + timeout_s)) ready node
  until ready=$("$AJ_KUBECTL" --kubeconfig "$KUBECONFIG" get nodes -l aj.dev/node=real \
                  -o jsonpath='{range .items[*]}{.metadata.name} {.status.addresses[0].address} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' 2>/dev/null) &&
        [[ $(grep -c ' 127\.0\.0\.1 True$' <<<"$ready") == "$count" ]]; do
    for node in $(awk '$2 != "127.0.0.1" {print $1}' <<<"$ready"); do
      "$AJ_KUBECTL" --kubeconfig "$KUBECONFIG" patch node "$node" --subresource=status --type=merge \
        -p "{\"status\":{\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"127.0.0.1\"},{\"type\":\"Hostname\",\"address\":\"$node\"}]}}" >/dev/null 2>&1
    done
    (($(date +%s) <= t_end)) || failed kubelet@real-0 "or another: the real nodes ${names[*]} were not all Ready within ${timeout_s}s"
    sleep 0.5
  done
  echo "export AJ_LOCAL_IMAGE='$runtime_name'" >"$dir/env.node"
  echo "cluster-up.sh: $count real node(s) ${names[*]} (pods $node_subnet, DNS $node_dns_ip, image $runtime_name) ready in $(($(date +%s) - t_node)) s" >&2
}

# node_one K FIRST LAST: node real-K, its pods' addresses FIRST to LAST. Uses node_up's locals.
node_one() {
  local k=$1 m=$n/$1 name=real-$1 mport p hz img
  mkdir -p "$m/root/run" "$m/root/var-lib" "$m/root/var-log" "$m/sysctl" "$m/cni"
  touch "$m/mntns"
  unshare --mount="$m/mntns" --propagation private true || die "real node: cannot make a mount namespace (unshare --mount)"
  echo 1 >"$m/sysctl/overcommit_memory"
  echo 10 >"$m/sysctl/panic"
  echo 1 >"$m/sysctl/panic_on_oops"
  nsenter --mount="$m/mntns" sh -ec '
    mount --bind "$1/root/run" /run
    mount --bind "$1/root/var-lib" /var/lib
    mount --bind "$1/root/var-log" /var/log
    mount --bind "$1/sysctl/overcommit_memory" /proc/sys/vm/overcommit_memory
    mount --bind "$1/sysctl/panic" /proc/sys/kernel/panic
    mount --bind "$1/sysctl/panic_on_oops" /proc/sys/kernel/panic_on_oops
    test -d "$1/cni"' _ "$m" || die "real node: cannot prepare the mount namespace of $name"

  # CNI: the shared bridge, no gateway, no masquerade; this node's share of the addresses.
  cat >"$m/cni/10-aj.conflist" <<CNI
{
  "cniVersion": "1.0.0",
  "name": "aj-pods-$idx",
  "plugins": [{
    "type": "bridge", "bridge": "$node_bridge", "isGateway": false, "isDefaultGateway": false,
    "ipMasq": false, "hairpinMode": true,
    "ipam": {"type": "host-local", "ranges": [[{"subnet": "$node_subnet", "rangeStart": "$2", "rangeEnd": "$3"}]],
             "routes": [{"dst": "10.0.0.0/24", "gw": "$node_dns_ip"}]}
  }]
}
CNI

  # containerd: CRI with the local pause image; nothing is pulled.
  mport=$(free_port)
  cat >"$m/containerd.toml" <<TOML
version = 2
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[metrics]
  address = "127.0.0.1:$mport"
[plugins."io.containerd.internal.v1.opt"]
  path = "/var/lib/containerd-opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  disable_apparmor = true
  # (no CAP_SYS_RESOURCE here: a sandbox's oom_score_adj below containerd's would fail runc)
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "$snap"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$m/cni"
    max_conf_num = 1
TOML
  start "containerd@$name" "http://127.0.0.1:$mport/v1/metrics" nsenter --mount="$m/mntns" \
    containerd --config "$m/containerd.toml"
  for img in "$(awk '$1 == "pause" {print $3}' <<<"$images")" "$runtime"; do
    nsenter --mount="$m/mntns" ctr -n k8s.io images import --snapshotter "$snap" "$img" >>"$m/import.log" 2>&1 ||
      { tail -n 5 "$m/import.log" >&2; die "real node: containerd of $name could not import $img"; }
  done

  # the kubelet, its cgroup root in every v1 hierarchy (it checks they exist), cpuset filled in
  local h
  for h in /sys/fs/cgroup/*/; do
    [[ -f $h/cgroup.procs && ! -f $h/cgroup.controllers ]] || continue
    mkdir -p "$h/aj-$idx-$k" || die "real node: cannot create the cgroup $h/aj-$idx-$k"
    if [[ -f $h/cpuset.cpus ]]; then
      cat "$h/cpuset.cpus" >"$h/aj-$idx-$k/cpuset.cpus" && cat "$h/cpuset.mems" >"$h/aj-$idx-$k/cpuset.mems"
    fi
  done
  p=$(free_port); hz=$(free_port)
  cat >"$m/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $p
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $hz
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: "$AJ_KUBE_CA"}
authorization: {mode: AlwaysAllow}
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: /aj-$idx-$k
cgroupsPerQOS: true
enforceNodeAllocatable: [pods]
failCgroupV1: false
failSwapOn: false
clusterDNS: ["$node_dns_ip"]
clusterDomain: cluster.local
resolvConf: "$n/resolv.conf"
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: "1%", imagefs.available: "1%"}
registerWithTaints:
- {key: aj.dev/node, value: real, effect: NoSchedule}
YAML
  start "kubelet@$name" "http://127.0.0.1:$hz/healthz" nsenter --mount="$m/mntns" "$kubelet_bin/kubelet" \
    --config "$m/kubelet.yaml" --kubeconfig "$KUBECONFIG" --hostname-override "$name" --node-ip 127.0.0.1 \
    --node-labels aj.dev/node=real --v=1
}

# Processes whose command line contains STRING.
node_pids_matching() {
  local f pid
  for f in /proc/[0-9]*/cmdline; do
    pid=${f#/proc/}; pid=${pid%/cmdline}
    tr '\0' ' ' 2>/dev/null <"$f" | grep -qF -- "$1" && echo "$pid"
  done
  return 0
}

# node_down DIR: everything the real nodes made goes, in an order that leaves nothing busy.
node_down() {
  local n=$1/node pid pids cg i ifs ns m
  [[ -f $n/state ]] || return 0
  # Best effort, whatever the caller's options: every step runs even if one fails.
  local -
  set +e +o pipefail
  # shellcheck disable=SC1091
  source "$n/state"
  # The daemons (their command lines name this directory's files).
  for pid in $(node_pids_matching "$n/") $(node_pids_matching "cluster-dns.py --netns $node_dns_netns ") \
             $(node_pids_matching "api-relay.py --netns $node_dns_netns "); do
    stop_pid "$pid"
  done
  for m in "$n"/[0-9]*; do
    [[ -d $m ]] || continue
    # Every container process (in the node's cgroups) and whatever is left in its mount namespace
    # (the shims, which outlive containerd).
    ns=
    [[ -e $m/mntns ]] && ns="mnt:[$(stat -Lc %i "$m/mntns" 2>/dev/null)]"
    for i in $(seq 50); do
      pids=$({ find /sys/fs/cgroup/*/"aj-$node_idx-${m##*/}" -name cgroup.procs -exec cat {} + 2>/dev/null
               if [[ -n $ns ]]; then
                 for pid in /proc/[0-9]*; do
                   [[ $(readlink "$pid/ns/mnt" 2>/dev/null) == "$ns" ]] && echo "${pid#/proc/}"
                 done
               fi; } | sort -u)
      [[ -z $pids ]] && break
      # shellcheck disable=SC2086
      kill -KILL $pids 2>/dev/null || true
      sleep 0.1
    done
    # With no process left in it the namespace goes, and with it its mounts (root filesystems,
    # the pods' network namespaces with their veths, volumes).
    mountpoint -q "$m/mntns" 2>/dev/null && umount "$m/mntns"
    for cg in /sys/fs/cgroup/*/"aj-$node_idx-${m##*/}"; do
      [[ -d $cg ]] && find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
    done
  done
  ifs=$(ip -o link show master "$node_bridge" 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//')
  ip link del "$node_dns_veth" 2>/dev/null || true
  ip netns del "$node_dns_netns" 2>/dev/null || true
  for i in $(seq 50); do
    [[ -z $(ip -o link show master "$node_bridge" 2>/dev/null) ]] && break
    sleep 0.1
  done
  for i in $ifs; do ip link del "$i" 2>/dev/null || true; done
  ip link del "$node_bridge" 2>/dev/null || true
  while iptables -D INPUT -i "$node_bridge" -m conntrack --ctstate NEW -j DROP 2>/dev/null; do :; done
  rm -rf "$n" "$1/env.node"
}
