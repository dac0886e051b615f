#!/usr/bin/env python3
"""Run the adversarial corpus (tests/data/bad) through the CLI.

    run_cli.py AJ BUNDLE_CHECK CORPUS_DIR [CASE...]

AJ_CORPUS_WRAP, when set, is a command prefix (split on spaces) put before
every run, e.g. a valgrind command line.

Each case directory holds an `expect` file and either a template home
(`home/`, or `home.py` that writes one into the directory it is given) or an
AjJob (`ajjob.json`). Template cases run `aj` with the arguments in `args`
(one per line, "\\n" standing for a newline; default: render -t bad --name
bad-case -- python train.py).
AjJob cases run the controller's pipeline through aj_bundle_check; cases the
API server itself rejects (`rejected ...`) are checked by the integration
test only. Expect lines:

    exit N            exit status
    stderr TEXT       TEXT appears in stderr
    message TEXT      (AjJob) TEXT appears in the error / status.message
    script TEXT       the first container's shell script (render -o json) holds
                      TEXT ("\\n": newline)
    script-lacks TEXT ... does not hold TEXT
    argv JSON         the user's arguments after the script are exactly this list
    env NAME=VALUE    the first container has this environment entry

Containers are read as their process gets them: after the kubelet's $(VAR)
expansion (tests/lib/kubelet.py).
    rejected TEXT     (AjJob) the API server refuses the object with TEXT
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import kubelet  # noqa: E402

DEFAULT_ARGS = ["render", "-t", "bad", "--name", "bad-case", "--", "python", "train.py"]


def read_expect(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            key, _, value = line.partition(" ")
            out.append((key, value.replace("\\n", "\n") if key == "script" else value))
    return out


def first_container(stdout):
    doc = json.loads(stdout)
    if isinstance(doc, list):
        doc = doc[0]
    return doc["spec"]["tasks"][0]["template"]["spec"]["containers"][0]


def run_case(aj, bundle_check, case):
    expect = read_expect(os.path.join(case, "expect"))
    if any(k == "rejected" for k, _ in expect):
        return None, []
    env = dict(os.environ)
    tmp = tempfile.mkdtemp(prefix="aj-corpus-")
    try:
        if os.path.exists(os.path.join(case, "ajjob.json")):
            cmd = [bundle_check, os.path.join(case, "ajjob.json")]
        else:
            home = os.path.join(tmp, "home")
            if os.path.isdir(os.path.join(case, "home")):
                shutil.copytree(os.path.join(case, "home"), home)
            else:
                os.makedirs(home)
                subprocess.run([sys.executable, os.path.join(case, "home.py"), home], check=True)
            env["AJ_HOME"] = home
            args = DEFAULT_ARGS
            if os.path.exists(os.path.join(case, "args")):
                with open(os.path.join(case, "args"), encoding="utf-8") as f:
                    args = [a.replace("\\n", "\n") for a in f.read().split("\n")[:-1]]
            cmd = [aj] + args
        wrap = os.environ.get("AJ_CORPUS_WRAP", "").split()
        p = subprocess.run(wrap + cmd, env=env, capture_output=True, timeout=300)
    finally:
        shutil.rmtree(tmp)
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    problems = []
    if p.returncode < 0 or p.returncode > 2:
        problems.append("crashed or aborted: status %d" % p.returncode)
    container = None
    for key, value in expect:
        if key == "exit":
            if p.returncode != int(value):
                problems.append("exit %d, want %s" % (p.returncode, value))
        elif key in ("stderr", "message"):
            if value not in err:
                problems.append("stderr lacks: %s" % value)
        elif key in ("script", "script-lacks", "env", "argv"):
            if container is None:
                try:
                    container = kubelet.container_view(first_container(out))
                except (ValueError, KeyError, IndexError, TypeError):
                    problems.append("stdout is not a rendered Volcano Job")
                    break
            argv, env = container
            script = argv[2]
            envs = ["%s=%s" % kv for kv in env.items()]
            if key == "script" and value not in script:
                problems.append("script lacks: %r" % value)
            if key == "script-lacks" and value in script:
                problems.append("script holds: %r" % value)
            if key == "argv" and argv[3:] != ["aj"] + json.loads(value):
                problems.append("argv after the script is %r" % argv[3:])
            if key == "env" and value not in envs:
                problems.append("no env entry %r" % value)
        else:
            problems.append("unknown expect line: %s" % key)
    # Every error line names a file, a key or the program: no bare crash text.
    if p.returncode and not err.strip():
        problems.append("failed without a message")
    return (out, err), problems


def main():
    aj, bundle_check, corpus = sys.argv[1:4]
    names = sys.argv[4:] or sorted(os.listdir(corpus))
    failures = checked = skipped = 0
    for name in names:
        case = os.path.join(corpus, name)
        if not os.path.isfile(os.path.join(case, "expect")):
            continue
        output, problems = run_case(aj, bundle_check, case)
        if output is None:
            skipped += 1
            continue
        checked += 1
        if problems:
            failures += 1
            print("FAIL %s" % name)
            for pr in problems:
                print("  " + pr)
            print("  stderr| " + "\n  stderr| ".join(output[1][:2000].splitlines()[:10]))
    print("corpus: %d cases checked, %d failed, %d left to the API server" % (checked, failures, skipped))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
