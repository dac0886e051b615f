#!/usr/bin/env bash
# The real nodes of the cluster fixture (tests/controlplane/node.sh: kubelets with containerd and
# runc, a pod network, the cluster DNS): aj's pods run in real containers there, reached through
# target.node_selector. The script's argv arrives byte for byte (the hostile command of
# cli.argv_verbatim, cut to the 4096 items the AjJob CRD allows), the rank variables hold, a failing rank's exit code is the one the AjJob
# names, three ranks meet at MASTER_ADDR through the DNS (homogeneous and heterogeneous), code goes
# through the shared volume's helper pod, scratch is writable, aj logs -f shows a restarted pod.
# Every expected value is computed here from the inputs, never read from aj.
source "$(dirname "$0")/lib.sh"
cluster_test real
: "${AJ_LOCAL_IMAGE:?the env file names no AJ_LOCAL_IMAGE: the cluster has no real node}"
start_controller main
expect_ok "the controller becomes ready" wait_for 30 grep -q '"msg":"aj-controller started"' "$work/main.log"

real_nodes=$(k get nodes -l aj.dev/node=real -o name | wc -l)

# --- the nodes ---
expect_ok "three real nodes (AJ_CLUSTER_REAL_NODE=3 for this fixture)" test "$real_nodes" -eq 3
for node in real-0 real-1 real-2; do
  expect_eq "$node is Ready" True k get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'
  expect_eq "$node is tainted aj.dev/node=real:NoSchedule" "aj.dev/node=real:NoSchedule" \
    k get node "$node" -o jsonpath='{range .spec.taints[*]}{.key}={.value}:{.effect}{end}'
  expect_eq "$node has the machine's CPUs" "$(nproc)" k get node "$node" -o jsonpath='{.status.capacity.cpu}'
  expect_eq "...and its memory" "$(awk '/^MemTotal:/ {print $2 "Ki"}' /proc/meminfo)" \
    k get node "$node" -o jsonpath='{.status.capacity.memory}'
done
listens_local() {
  local a
  a=$(ss -ltnpH | grep "pid=$1," | awk '{print $4}')
  [[ -n $a ]] && ! grep -qv '^127\.0\.0\.1:' <<<"$a"
}
while read -r name pid url _; do
  [[ $name == cluster-dns || $name == api-relay || $name == *@real-* ]] || continue
  expect_ok "$name is healthy at $url" curl -sf -o /dev/null --max-time 5 "$url"
  expect_ok "$name listens on 127.0.0.1 only" listens_local "$pid"
done <"$AJ_CP_DIR/components"

# --- templates: the runtime image, on the real nodes ---
home=$work/home
mkdir -p "$home/template"
export AJ_HOME=$home
target="target: {service: volcano, namespace: $ns, queue: default, gpus_per_node: 0, cpus_per_node: 1,
    memory: 256Mi, rdma: false, node_selector: {aj.dev/node: real}}"
cat >"$home/template/real.yaml" <<YAML
config:
  $target
  environment: {image: "$AJ_LOCAL_IMAGE"}
  jobs:
    - name: train
      sku: C1
      instance_count: 1
      submit_args:
        env: {PRICE: "5\$\$", REF: "\$(AJ_TASK)"}
        container_args: {scratch_mount_path: /scratch, scratch_size: 1Gi}
  _extra: {volcano: {max_retry: 0}}
YAML
cat >"$home/template/real-code.yaml" <<YAML
config:
  $target
  environment: {image: "$AJ_LOCAL_IMAGE"}
  code: {ignore: ["*.log", "data/"]}
  jobs:
    - name: train
      sku: C1
      instance_count: 1
      submit_args:
        env: {AMLT_PERSISTENT_VOLUME_NAME: training-shared, AMLT_PERSISTENT_VOLUME_MOUNT_DIR: /mnt/shared}
  _extra: {volcano: {max_retry: 2}}
YAML
task() { echo "        $1: {replicas: 1, cpus_per_node: 1, memory: 256Mi, gpus_per_node: 0, rdma: false, processes_per_node: $2}"; }
cat >"$home/template/real-hetero.yaml" <<YAML
config:
  target: {service: volcano, namespace: $ns, queue: default, node_selector: {aj.dev/node: real}}
  environment: {image: "$AJ_LOCAL_IMAGE"}
  jobs: [{name: train, sku: heterogeneous}]
  _extra:
    volcano:
      max_retry: 0
      tasks:
$(task master 1)
$(task left 2)
$(task right 3)
YAML
ended() { [[ $(phase "$1") == Succeeded || $(phase "$1") == Failed ]]; }
# pod_log NAME TASK INDEX: the container's log, read from its kubelet through the API server
pod_log() { k -n "$ns" logs "$1-$2-$3"; }
mkdir -p "$work/empty"
cd "$work/empty" || exit 1

# --- the script really runs: argv byte for byte, the rank variables, scratch ---
args_py='
import os, sys
sys.path.insert(0, sys.argv[2])
from argv_verbatim import HOSTILE
args = HOSTILE + ["$(HOME)", "$$$$", "$(PRICE)"]
# the AjJob CRD holds at most 4096 items of spec.command: python3, -c, the program and these
args += ["arg-%d-$(AJ_TASK)-$$" % i for i in range(4096 - 3 - len(args))]
with open(sys.argv[1], "wb") as f:
    f.write(b"".join(a.encode() + b"\0" for a in args))
with open(sys.argv[1] + ".hex", "w") as f:
    f.write("".join("ARG " + a.encode().hex() + "\n" for a in args))
'
python3 -c "$args_py" "$work/args" "$repo_root/tests/cli"
mapfile -d '' args <"$work/args"
program='import os, sys
for k in ("NODE_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "AJ_NODES", "AJ_TASK", "PRICE", "REF"):
    print("ENV %s=%s" % (k, os.environ.get(k)))
p = "/scratch/probe"
open(p, "w").write("x")
mounted = any(l.split()[4] == "/scratch" for l in open("/proc/self/mountinfo"))
print("SCRATCH mounted=%s written=%s" % (mounted, open(p).read() == "x"))
for a in sys.argv[1:]:
    print("ARG " + os.fsencode(a).hex())'
expect_ok "aj run of ${#args[@]} hostile arguments" "$AJ_BIN" run --namespace "$ns" -t real --name argv -- python3 -c "$program" "${args[@]}"
expect_ok "it succeeds on a real node" wait_for 180 ended argv
expect_eq "...Succeeded" Succeeded phase argv
expect_eq "...on real-0, real-1 or real-2" "real" \
  bash -c "'$AJ_KUBECTL' get node \$('$AJ_KUBECTL' -n '$ns' get pod argv-master-0 -o jsonpath='{.spec.nodeName}') -o jsonpath='{.metadata.labels.aj\.dev/node}'"
pod_log argv master 0 >"$work/argv.log"
expect_eq "every argument arrives byte for byte, in order" "$(cat "$work/args.hex")" grep '^ARG ' "$work/argv.log"
expect_eq "the rank contract of a one-pod job, and env values kept as written" \
"ENV NODE_RANK=0
ENV WORLD_SIZE=1
ENV MASTER_ADDR=argv-master-0.argv
ENV MASTER_PORT=6105
ENV AJ_NODES=1
ENV AJ_TASK=master
ENV PRICE=5\$\$
ENV REF=\$(AJ_TASK)" grep '^ENV ' "$work/argv.log"
expect_eq "the scratch emptyDir is mounted at /scratch and writable" "SCRATCH mounted=True written=True" \
  grep '^SCRATCH ' "$work/argv.log"

# --- a failing rank's exit code is the one the AjJob names ---
expect_ok "aj run of a command exiting 7" "$AJ_BIN" run --namespace "$ns" -t real --name fail -- bash -c 'echo failing; exit 7'
expect_ok "it fails" wait_for 180 ended fail
expect_eq "...Failed" Failed phase fail
expect_ok "...and the message names the container's exit code 7" \
  bash -c "'$AJ_KUBECTL' -n '$ns' get ajjob fail -o jsonpath='{.status.message}' | grep -q 'exit code 7'"
expect_eq "the container printed before it exited" failing pod_log fail master 0

# --- rank rendezvous over the cluster DNS ---
rdv='import os, socket, time
r, n = int(os.environ["NODE_RANK"]), int(os.environ["AJ_NODES"])
host, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
if r == 0:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("", port))
    s.listen(n)
    conns, ranks = [], [0]
    while len(conns) < n - 1:
        c, _ = s.accept()
        ranks.append(int(c.recv(16)))
        conns.append(c)
    world = ",".join(map(str, sorted(ranks)))
    for c in conns:
        c.sendall(world.encode())
        c.close()
else:
    deadline = time.time() + 120
    while True:
        try:
            c = socket.create_connection((host, port), timeout=5)
            break
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.5)
    c.sendall(str(r).encode())
    world = c.recv(64).decode()
print("rank %d of %s world %s" % (r, os.environ["WORLD_SIZE"], world))'
expect_ok "aj run -n 3 of the rendezvous" "$AJ_BIN" run --namespace "$ns" -t real -n 3 --name rdv -- python3 -c "$rdv"
expect_ok "it succeeds" wait_for 240 ended rdv
expect_eq "...Succeeded" Succeeded phase rdv
expect_eq "its three pods ran on three real nodes" "real-0 real-1 real-2" \
  bash -c "'$AJ_KUBECTL' -n '$ns' get pods -l volcano.sh/job-name=rdv -o jsonpath='{.items[*].spec.nodeName}' | tr ' ' '\n' | sort | xargs"
expect_eq "the master saw every rank" "rank 0 of 3 world 0,1,2" pod_log rdv master 0
expect_eq "worker 0 reached it at MASTER_ADDR" "rank 1 of 3 world 0,1,2" pod_log rdv worker 0
expect_eq "worker 1 too" "rank 2 of 3 world 0,1,2" pod_log rdv worker 1

expect_ok "aj run of the heterogeneous rendezvous (master, left, right)" \
  "$AJ_BIN" run --namespace "$ns" -t real-hetero --name rdvh -- python3 -c "$rdv"
expect_ok "it succeeds" wait_for 240 ended rdvh
expect_eq "...Succeeded" Succeeded phase rdvh
expect_eq "master: WORLD_SIZE 1 + 2 + 3" "rank 0 of 6 world 0,1,2" pod_log rdvh master 0
expect_eq "left is rank 1" "rank 1 of 6 world 0,1,2" pod_log rdvh left 0
expect_eq "right is rank 2" "rank 2 of 6 world 0,1,2" pod_log rdvh right 0

# --- code through the shared volume, and aj logs -f of a pod Volcano restarted ---
src=$work/src
mkdir -p "$src/pkg" "$src/data"
printf 'print("hello from the shipped tree")\n' >"$src/main.py"
printf 'x = 1\n' >"$src/pkg/mod.py"
printf 'ignored\n' >"$src/run.log"
printf 'ignored\n' >"$src/data/big.bin"
# the tree's digest as the pods compute it: every regular file's path and SHA-256, sorted
tree_digest='import hashlib, os, sys
root = sys.argv[1] if len(sys.argv) > 1 else "."
lines = []
for d, _, fs in os.walk(root):
    for f in fs:
        p = os.path.join(d, f)
        lines.append("%s %s" % (os.path.relpath(p, root), hashlib.sha256(open(p, "rb").read()).hexdigest()))
print(hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest())'
want_tree=$(mkdir -p "$work/sel" && cp "$src/main.py" "$work/sel/" && mkdir -p "$work/sel/pkg" &&
            cp "$src/pkg/mod.py" "$work/sel/pkg/" && python3 -c "$tree_digest" "$work/sel")
want_digest=$(cd "$src" && "$AJ_BIN" code stats -t real-code | awk '/sha256/ {print $NF}')
expect_ok "aj code stats names the archive's digest" test "${#want_digest}" -eq 64
# First attempt: print, mark the shared volume, fail; Volcano restarts the job, the second succeeds.
attempt='import os, subprocess, sys, time
mark = "/mnt/shared/attempted-" + os.environ["HOSTNAME"].rsplit("-", 2)[0]
subprocess.run([sys.executable, "main.py"], check=True)
print("tree", subprocess.run([sys.executable, "-c", sys.argv[1]], capture_output=True, text=True).stdout.strip())
if not os.path.exists(mark):
    open(mark, "w").close()
    print("attempt 1: failing", flush=True)
    time.sleep(5)   # outlive a few looks of aj logs at the pods (every 2 s): a pod gone before any is never seen
    sys.exit(3)
print("attempt 2: done")'
(cd "$src" && "$AJ_BIN" run -t real-code --namespace "$ns" --name code -- python3 -c "$attempt" "$tree_digest") \
  >"$work/code.out" 2>&1
expect_eq "aj run ships the tree through the helper pod and submits" 0 echo "$?"
"$AJ_BIN" logs code --namespace "$ns" -f >"$work/follow.out" 2>"$work/follow.err" &
fpid=$!
expect_eq "the AjJob records the digest aj code stats printed" "$want_digest" jpath code '{.spec.code.digest}'
expect_eq "no helper pod is left" "" k -n "$ns" get pods -l app.kubernetes.io/component=code-upload -o name
expect_ok "the job ends" wait_for 300 ended code
expect_eq "...Succeeded after one restart by Volcano" "Succeeded 1" jpath code '{.status.phase} {.status.retryCount}'
expect_ok "aj logs -f ends by itself" wait_for 60 bash -c "! kill -0 $fpid"
kill "$fpid" 2>/dev/null
expect_ok "aj logs -f showed the first attempt's real output" grep -qx '\[master-0\] attempt 1: failing' "$work/follow.out"
expect_ok "...and the restarted pod's" grep -qx '\[master-0\] attempt 2: done' "$work/follow.out"
expect_ok "...each having run the shipped code" test "$(grep -cx '\[master-0\] hello from the shipped tree' "$work/follow.out")" -ge 2
expect_eq "the pods saw exactly the selected files (digest of their tree)" "[master-0] tree $want_tree" \
  bash -c "grep -m1 '\] tree ' '$work/follow.out'"

# --- SIGINT while the code goes up leaves no pod and no AjJob ---
head -c 30000000 /dev/urandom >"$src/blob.bin"   # incompressible: the upload takes a while
(cd "$src" && exec "$AJ_BIN" run -t real-code --namespace "$ns" --name sigint -- true) >"$work/sigint.out" 2>&1 &
apid=$!
expect_ok "a helper pod runs on a real node" wait_for 60 bash -c \
  "[[ \$('$AJ_KUBECTL' -n '$ns' get pods -l app.kubernetes.io/component=code-upload -o jsonpath='{.items[*].status.phase}') == Running ]]"
sleep 0.5
kill -INT "$apid"
wait "$apid"
expect_ok "aj ends with a failure status" test "$?" -ne 0
expect_eq "...and no helper pod is left" "" k -n "$ns" get pods -l app.kubernetes.io/component=code-upload -o name
expect_fail "...and no AjJob" "not found" k -n "$ns" get ajjob sigint
rm -f "$src/blob.bin"
cd / || exit 1
finish
