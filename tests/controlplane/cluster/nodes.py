"""Print the local cluster's Node objects (YAML) for a spec such as "a100=4 h100=4 cpu=3".

Each node is managed by kwok (annotation kwok.x-k8s.io/node: fake). GPU nodes have 8 GPUs, RDMA
and the GPU product label, and are tainted so that only pods asking for GPUs land there."""
import sys

SHAPES = {
    "a100": {"gpu": "A100-SXM4-80GB"},
    "h100": {"gpu": "H100-80GB-HBM3"},
    "cpu": {},
}


def node(name, shape):
    gpu = shape.get("gpu")
    res = {"cpu": "128", "memory": "2Ti", "pods": "110", "ephemeral-storage": "4Ti"}
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "type": "kwok"}
    taints = ""
    if gpu:
        res.update({"nvidia.com/gpu": "8", "rdma/rdma_shared_device_a": "1k"})
        labels["nvidia.com/gpu.product"] = gpu
        taints = "  taints:\n  - {key: nvidia.com/gpu, value: present, effect: NoSchedule}\n"
    else:
        res.update({"cpu": "64", "memory": "512Gi"})
    lab = "".join(f"    {k}: {v!r}\n".replace("'", '"') for k, v in labels.items())
    cap = "".join(f"      {k}: {v!r}\n".replace("'", '"') for k, v in res.items())
    return (f"apiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n"
            f"  annotations:\n    kwok.x-k8s.io/node: fake\n  labels:\n{lab}"
            f"spec:\n{taints}status:\n  allocatable:\n{cap}  capacity:\n{cap}")


def main(spec):
    docs = []
    for item in spec.split():
        kind, _, count = item.partition("=")
        if kind not in SHAPES or not count.isdigit():
            sys.exit(f"nodes.py: '{item}' is not SHAPE=COUNT with SHAPE one of {', '.join(SHAPES)}")
        docs += [node(f"kwok-{kind}-{i}", SHAPES[kind]) for i in range(int(count))]
    if not docs:
        sys.exit("nodes.py: no nodes asked for")
    print("---\n".join(docs), end="")


main(sys.argv[1] if len(sys.argv) > 1 else "")
