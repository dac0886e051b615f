#!/usr/bin/env python3
"""Check Azure ML bodies against Microsoft's own REST models (PyPI azure-ai-ml).

Usage: check_models.py [--min N] RECORD... (files, or directories of *.json)
A record is what tests/peers/azure_peer.py writes with AJ_AZURE_PEER_RECORD:
{"method", "path", "status", "request", "response"}: the body aj sent (checked
unless the answer was a 4xx a test provoked on purpose) and the answer aj
parsed (checked when 2xx). A record with "expect": MESSAGE is a bad body
written by hand: it passes only when the models reject it with MESSAGE.
Each body whose path names an Azure ML resource is, with the models of the API
version nearest to aj's (v2024_04_01_preview for 2024-04-01):
  * deserialized (a value of the wrong type fails),
  * validate()d (a missing required field or a broken constraint fails),
  * compared with its serialize() round trip: a key the models do not know
    (msrest drops it silently) or a value they change fails,
  * converted to the SDK's own entity (Job, Environment, Code, Datastore) with
    the models that entity reads, as `az ml` and the SDK do with a GET (a Job
    also back to a REST body, as the SDK would submit it).
Bodies of endpoints azure-ai-ml has no models for (subscriptions, Resource
Graph, virtual clusters, Singularity images, identity, blob) are counted as
not covered. Prints "ok - ..." / "FAIL - ..." per body and "N passed, N
failed"; exits 1 when a body failed or fewer than N bodies were checked.
"""
import argparse
import copy
import datetime
import glob
import json
import logging
import os
import re
import sys
import warnings

warnings.simplefilter("ignore")
# The SDK logs a line per experimental class it loads.
logging.disable(logging.WARNING)

from msrest.serialization import Serializer  # noqa: E402

from azure.ai.ml._restclient.v2024_04_01_preview import models as m2404  # noqa: E402
from azure.ai.ml._restclient.v2023_04_01_preview import models as m2304  # noqa: E402
from azure.ai.ml._restclient.v2022_05_01 import models as m2205  # noqa: E402
from azure.ai.ml.entities import Datastore, Environment, Job  # noqa: E402
from azure.ai.ml.entities._assets._artifacts.code import Code  # noqa: E402

# msrest checks a `pattern` with re.match, anchored at the start; the REST specs' patterns are JSON
# Schema ones, which match anywhere (the service's reading): '[a-zA-Z0-9_]' on an environmentId
# holds for an ARM id such as /subscriptions/... The SDK itself never validates on send.
Serializer.validation["pattern"] = lambda x, y: not re.search(y, x, flags=re.UNICODE)

WS = r"/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.MachineLearningServices/workspaces/[^/]+"


def entity_job(obj):
    # and back, as the SDK's jobs.create_or_update() would send it: that is where it checks
    # names (an output named data-in is refused there)
    Job._from_rest_object(obj)._to_rest_object()


# path regex -> (kind, schema model, (entity models, entity conversion) or None, list?)
RESOURCES = [
    (re.compile(WS + r"/jobs/[^/]+$", re.I), "job", m2404.JobBase, (m2304.JobBase, entity_job)),
    (re.compile(WS + r"/jobs$", re.I), "job list", m2404.JobBaseResourceArmPaginatedResult,
     (m2304.JobBase, entity_job)),
    (re.compile(WS + r"/environments/[^/]+/versions/[^/]+$", re.I), "environment version",
     m2404.EnvironmentVersion, (m2304.EnvironmentVersion, Environment._from_rest_object)),
    (re.compile(WS + r"/codes/[^/]+/versions/[^/]+$", re.I), "code version",
     m2404.CodeVersion, (m2205.CodeVersionData, Code._from_rest_object)),
    (re.compile(WS + r"/datastores/[^/]+$", re.I), "datastore", m2404.Datastore,
     (m2304.Datastore, Datastore._from_rest_object)),
    (re.compile(WS + r"/datastores$", re.I), "datastore list", m2404.DatastoreResourceArmPaginatedResult,
     (m2304.Datastore, Datastore._from_rest_object)),
]


def as_time(v):
    if not isinstance(v, str) or not re.match(r"^\d{4}-\d\d-\d\dT", v):
        return None
    try:
        return datetime.datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        return None


def same(a, b):
    if a == b:
        return True
    ta, tb = as_time(a), as_time(b)
    return ta is not None and ta == tb


def compare(body, back, path, problems):
    """Every key and value of body must survive the models' round trip."""
    if isinstance(body, dict):
        if not isinstance(back, dict):
            problems.append("%s: the models turn an object into %r" % (path or "(body)", back))
            return
        for k, v in body.items():
            p = "%s.%s" % (path, k) if path else k
            if v is None:
                continue
            if k not in back:
                problems.append("%s: not a field of the models (dropped on deserialization)" % p)
            else:
                compare(v, back[k], p, problems)
    elif isinstance(body, list):
        if not isinstance(back, list) or len(back) != len(body):
            problems.append("%s: the models change the list to %r" % (path, back))
            return
        for i, (v, w) in enumerate(zip(body, back)):
            compare(v, w, "%s[%d]" % (path, i), problems)
    elif not same(body, back):
        problems.append("%s: sent %s, the models make it %s" % (path, json.dumps(body), json.dumps(back)))


def extra_properties(obj, path, problems, seen=None):
    """Keys msrest kept in additional_properties: unknown to the models."""
    seen = seen if seen is not None else set()
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, list):
        for i, v in enumerate(obj):
            extra_properties(v, "%s[%d]" % (path, i), problems, seen)
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            extra_properties(v, "%s.%s" % (path, k), problems, seen)
        return
    if not hasattr(obj, "_attribute_map"):
        return
    for k in getattr(obj, "additional_properties", None) or {}:
        problems.append("%s.%s: not a field of %s" % (path or "(body)", k, type(obj).__name__))
    for attr, spec in obj._attribute_map.items():
        if attr != "additional_properties":
            extra_properties(getattr(obj, attr, None), (path + "." if path else "") + spec["key"], problems, seen)


def check_one(model, body, problems):
    try:
        # deserialize() pops discriminators out of the dicts it reads: give it a copy
        obj = model.deserialize(copy.deepcopy(body))
    except Exception as e:  # msrest raises DeserializationError and friends
        problems.append("does not deserialize as %s: %s" % (model.__name__, e))
        return None
    for err in obj.validate() or []:
        problems.append("validate(): %s" % err)
    extra_properties(obj, "", problems)
    compare(body, obj.serialize(keep_readonly=True), "", problems)
    return obj


def to_entity(entity, body, path, kind, problems):
    models, convert = entity
    items = body.get("value", []) if kind.endswith(" list") else [body]
    for i, item in enumerate(items):
        item = dict(item)
        # A request body has no id or name: the service answers with the ARM path.
        if not kind.endswith(" list"):
            item.setdefault("id", path)
            item.setdefault("name", path.rsplit("/", 1)[1])
            item.setdefault("systemData", {"createdAt": "2026-01-01T00:00:00Z", "createdBy": "aj",
                                           "createdByType": "Application"})
        try:
            convert(models.deserialize(copy.deepcopy(item)))
        except Exception as e:
            problems.append("%sthe SDK's %s conversion fails: %s: %s" % (
                "value[%d]: " % i if kind.endswith(" list") else "", convert.__qualname__.split(".")[0],
                type(e).__name__, e))


def records(args):
    for a in args:
        files = sorted(glob.glob(os.path.join(a, "*.json"))) if os.path.isdir(a) else [a]
        for f in files:
            with open(f, encoding="utf-8") as fh:
                yield f, json.load(fh)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--min", type=int, default=1, help="fail when fewer bodies were checked")
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args()
    passed = failed = 0
    uncovered = {}
    checked = {}
    bodies = []
    refused = 0
    for f, r in records(a.paths):
        status = r.get("status") or 200
        if isinstance(r.get("request"), dict):
            if 400 <= status < 500:
                refused += 1
            else:
                bodies.append((f, "request", r["method"], r["path"], r["request"], r.get("expect")))
        if isinstance(r.get("response"), dict) and 200 <= status < 300:
            bodies.append((f, "response", r["method"], r["path"], r["response"], r.get("expect")))
    for f, direction, method, path, body, expect in bodies:
        match = next((x for x in RESOURCES if x[0].search(path)), None)
        if not match:
            key = re.sub(r"/[0-9a-f-]{36}|/k8s-[^/]+", "/…", path)
            uncovered[key] = uncovered.get(key, 0) + 1
            continue
        _, kind, model, entity = match
        problems = []
        if check_one(model, body, problems) is not None and entity:
            to_entity(entity, body, path, kind, problems)
        what = "%s %s %s (%s, %s)" % (direction, method, path, kind, os.path.basename(f))
        checked[(direction, kind)] = checked.get((direction, kind), 0) + 1
        # one line per key: the round trip and additional_properties may both name it
        problems = list({p.split(": ", 1)[0] if ": not a field" in p else p: p for p in problems}.values())
        if expect is not None:
            if any(expect in p for p in problems):
                problems = []
                what = "rejected as expected (%s): %s" % (expect, what)
            else:
                problems = ["expected the models to reject it with: " + expect] + problems
        if problems:
            failed += 1
            print("FAIL - " + what)
            for p in problems:
                print("       | " + p)
        else:
            passed += 1
            print("ok   - " + what)
    for (k, kind), n in sorted(checked.items()):
        print("# checked %d %s bodies of %s" % (n, k, kind))
    if refused:
        print("# not checked: %d request bodies the peer refused with a 4xx (provoked by the tests)" % refused)
    for p, n in sorted(uncovered.items()):
        print("# not covered by azure-ai-ml (no model): %d x %s" % (n, p))
    if passed + failed < a.min:
        print("FAIL - only %d bodies checked, expected at least %d" % (passed + failed, a.min))
        failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
