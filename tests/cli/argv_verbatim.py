#!/usr/bin/env python3
"""A hostile command reaches the pod's program byte for byte.

    argv_verbatim.py AJ

Renders a Volcano Job for a command full of shell and kubelet syntax
($(id), backticks, quotes, newlines, $$, $(VAR) naming variables the pod
defines, unicode) plus 4096 more arguments, then plays the pod: the
kubelet's $(VAR) expansion over the container's command and env
(tests/lib/kubelet.py), then the real bash running the result. The program
at the end writes the argv it got, NUL-separated; it must be exactly the
argv given to aj.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import kubelet  # noqa: E402

TEMPLATE = """base: []
config:
  target: {service: volcano, gpus_per_node: 0, cpus_per_node: 1, memory: 1Gi}
  environment: {image: busybox}
  jobs:
    - name: train
      sku: C1
      instance_count: 1
      submit_args:
        env: {PRICE: "5$$", REF: "$(AJ_TASK)"}
"""

HOSTILE = [
    "$(id)", "`id`", "'", '"', "'\"'\"'", "", " spaced  out ", "a\nb", "\n", "\\", "\\'",
    "$$", "price$$5", "$", "$(AJ_TASK)", "$$(AJ_TASK)", "$(MASTER_ADDR)", "$(NOPE)",
    "${HOME}", "$HOME", "*", "~", "!x", "-e", "--", "a;b|c&d>e", "\t", "é✓ 日本語 🚀",
    "$(", "$)", ")", "%s", "#", "'''",
]

PROGRAM = "import os, sys; sys.stdout.buffer.write(b''.join(os.fsencode(a) + b'\\0' for a in sys.argv[1:]))"


def main():
    aj = sys.argv[1]
    args = HOSTILE + ["arg-%d-$(AJ_TASK)-$$" % i for i in range(4096)]
    user = [sys.executable, "-c", PROGRAM] + args
    with tempfile.TemporaryDirectory(prefix="aj-argv-") as home:
        os.makedirs(os.path.join(home, "template"))
        with open(os.path.join(home, "template", "job.yaml"), "w", encoding="utf-8") as f:
            f.write(TEMPLATE)
        env = dict(os.environ, AJ_HOME=home)
        p = subprocess.run([aj, "render", "-t", "job", "--name", "argv", "-o", "json", "--"] + user,
                           env=env, capture_output=True, timeout=120)
    if p.returncode:
        print("aj render failed: %s" % p.stderr.decode("utf-8", "replace"))
        return 1
    doc = json.loads(p.stdout)
    container = doc["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    argv, pod_env = kubelet.container_view(container)
    failures = []
    if argv[:2] != ["/bin/bash", "-lc"] or argv[3] != "aj":
        failures.append("command is not bash -lc SCRIPT aj ARG...: %r" % argv[:4])
    if pod_env.get("PRICE") != "5$$" or pod_env.get("REF") != "$(AJ_TASK)":
        failures.append("env values changed: PRICE=%r REF=%r" % (pod_env.get("PRICE"), pod_env.get("REF")))
    run_env = dict(os.environ)
    run_env.update(pod_env)
    got = subprocess.run(argv, env=run_env, capture_output=True, timeout=120)
    want = b"".join(a.encode("utf-8") + b"\0" for a in args)
    if got.returncode:
        failures.append("bash exited %d: %s" % (got.returncode, got.stderr[:500]))
    elif got.stdout != want:
        have = got.stdout.split(b"\0")
        for i, a in enumerate(args):
            if i >= len(have) or have[i] != a.encode("utf-8"):
                failures.append("argument %d: want %r, got %r" % (i, a, have[i] if i < len(have) else None))
                break
        else:
            failures.append("extra output after the arguments")
    for f in failures:
        print("FAIL " + f)
    print("argv_verbatim: %d arguments, %d failed checks" % (len(args), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
