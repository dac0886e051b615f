#!/usr/bin/env python3
"""Write a one-layer image as a docker-archive (what `docker save` writes and `ctr images import`,
`buildah pull docker-archive:` and `docker load` read), from a root filesystem tar: no engine and no
registry needed.

    docker-archive.py OUT.tar NAME:TAG LAYER.tar [--cmd ARG ...] [--env K=V ...]

The layer is stored as given (uncompressed); the image config's rootfs.diff_ids is its sha256, and
its created time is fixed, so the same layer and options always give the same image ID.
"""
import argparse
import hashlib
import io
import json
import os
import platform
import sys
import tarfile

ARCH = {"x86_64": "amd64", "aarch64": "arm64"}


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def add_bytes(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("name")
    ap.add_argument("layer")
    ap.add_argument("--cmd", nargs="+", default=["/bin/sh"])
    ap.add_argument("--env", action="append", default=[])
    a = ap.parse_args()
    if ":" not in a.name.rsplit("/", 1)[-1]:
        print("docker-archive.py: image name %r has no :TAG" % a.name, file=sys.stderr)
        return 2
    diff_id = "sha256:" + sha256_file(a.layer)
    env = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"] + a.env
    config = {
        "architecture": ARCH.get(platform.machine(), platform.machine()),
        "os": "linux",
        "created": "1970-01-01T00:00:00Z",
        "config": {"Env": env, "Cmd": a.cmd},
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created": "1970-01-01T00:00:00Z", "created_by": "scripts/docker-archive.py"}],
    }
    config_bytes = json.dumps(config, sort_keys=True).encode()
    config_name = hashlib.sha256(config_bytes).hexdigest() + ".json"
    layer_name = diff_id[len("sha256:"):] + "/layer.tar"
    manifest = [{"Config": config_name, "RepoTags": [a.name], "Layers": [layer_name]}]
    tmp = a.out + ".tmp"
    with tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as tar:
        add_bytes(tar, config_name, config_bytes)
        tar.add(a.layer, arcname=layer_name, recursive=False)
        add_bytes(tar, "manifest.json", json.dumps(manifest).encode())
    os.replace(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
