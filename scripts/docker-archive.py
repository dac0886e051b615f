#!/usr/bin/env python3
"""Write a one-layer image as a docker-archive (what `docker save` writes and `ctr images import`,
`buildah pull docker-archive:` and `docker load` read), from a root filesystem tar: no engine and no
registry needed. The one writer of the project's images (scripts/debian-image.sh, the real nodes'
pause image).

    docker-archive.py OUT.tar LAYER.tar --tag NAME:TAG [--tag ...] [--cmd ARG ...] [--env K=V ...]
                      [--created RFC3339] [--created-by TEXT] [--print-id]

The layer is stored as given (uncompressed); the image config's rootfs.diff_ids is its sha256, and
its created time is given (the Unix epoch by default), so the same layer and options always give
the same image ID. --print-id prints that ID (sha256:... of the config) on stdout.
"""
import argparse
import calendar
import hashlib
import io
import json
import os
import platform
import re
import sys
import tarfile

# The machine's name of its architecture, as image configs spell it (Go's GOARCH).
ARCH = {"x86_64": "amd64", "aarch64": "arm64", "i686": "386", "armv7l": "arm", "ppc64le": "ppc64le",
        "s390x": "s390x", "riscv64": "riscv64"}
PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def add_bytes(tar, name, data, mtime):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    info.mtime = mtime
    tar.addfile(info, io.BytesIO(data))


def fail(msg):
    print("docker-archive.py: " + msg, file=sys.stderr)
    return 2


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("layer")
    ap.add_argument("--tag", action="append", required=True)
    ap.add_argument("--cmd", nargs="+", default=["/bin/sh"])
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--created", default="1970-01-01T00:00:00Z")
    ap.add_argument("--created-by", default="scripts/docker-archive.py")
    ap.add_argument("--print-id", action="store_true")
    a = ap.parse_args()
    for t in a.tag:
        if ":" not in t.rsplit("/", 1)[-1]:
            return fail("image name %r has no :TAG" % t)
    m = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z", a.created)
    if not m:
        return fail("--created %r is not a UTC time like 2024-01-31T12:00:00Z" % a.created)
    mtime = calendar.timegm(tuple(int(x) for x in m.groups()) + (0, 0, 0))
    diff_id = "sha256:" + sha256_file(a.layer)
    config = {
        "architecture": ARCH.get(platform.machine(), platform.machine()),
        "os": "linux",
        "created": a.created,
        "config": {"Env": [PATH] + a.env, "Cmd": a.cmd},
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created": a.created, "created_by": a.created_by}],
    }
    config_bytes = json.dumps(config, sort_keys=True).encode()
    config_hex = hashlib.sha256(config_bytes).hexdigest()
    layer_name = diff_id[len("sha256:"):] + "/layer.tar"
    manifest = [{"Config": config_hex + ".json", "RepoTags": a.tag, "Layers": [layer_name]}]
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    tmp = "%s.%d.tmp" % (a.out, os.getpid())
    try:
        with tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as tar:
            add_bytes(tar, config_hex + ".json", config_bytes, mtime)
            info = tar.gettarinfo(a.layer, arcname=layer_name)
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = mtime
            with open(a.layer, "rb") as f:
                tar.addfile(info, f)
            add_bytes(tar, "manifest.json", json.dumps(manifest).encode(), mtime)
        os.replace(tmp, a.out)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return fail("cannot write %s: %s" % (a.out, e.strerror))
    if a.print_id:
        print("sha256:" + config_hex)
    return 0


if __name__ == "__main__":
    sys.exit(main())
