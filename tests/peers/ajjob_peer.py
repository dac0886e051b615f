#!/usr/bin/env python3
"""A loopback stand-in for the API server, for the CLI and the controller's
unit tests. Serves HTTPS with --cert and --key and wants the bearer token
--token. Every request is appended to --log.

Two stores, both files in DIR that a test may change between requests:

- DIR/ajjobs.json ({name: AjJob}, read only): the AjJobs of namespace `ns`,
  and no pods. For the CLI commands that read an AjJob and then go to its
  backend elsewhere (aj logs of an Azure ML job).
- DIR/objects.json ({path: object}, read and written): any object by its
  API path (/api/v1/namespaces/NS/RES/NAME, /apis/G/V/namespaces/NS/RES/NAME).
  GET of an object or of a collection (a List of the objects under it;
  labelSelector and fieldSelector ignored), POST of a new object (201,
  409 AlreadyExists), PATCH as a JSON merge patch of the object or of its
  status subresource (the resourceVersion it names, if any, must match:
  409 Conflict), DELETE (404 when absent). Each write gives the object a
  new resourceVersion; a create gives it a uid. For aj_reconcile driven end
  to end without a cluster.
"""
import json
import os
import socketserver
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peerlib import read_head, reply, serve  # noqa: E402
import peerlib  # noqa: E402

PREFIX = "/apis/aj.dev/v1alpha1/namespaces/ns/ajjobs/"
LOCK = threading.Lock()


def status(code, reason, message=""):
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code,
            "reason": reason, "message": message}


def merge(target, patch):
    """RFC 7386: null removes, objects merge, the rest replaces."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge(out.get(k), v)
    return out


def depth(path):
    """Segments before the resource name: 4 for /api/v1/namespaces/NS, 5 for /apis/G/V/namespaces/NS;
    2 and 3 for a cluster-scoped one (/api/v1/nodes)."""
    core = path.startswith("/api/")
    if "/namespaces/" in path:
        return 4 if core else 5
    return 2 if core else 3


class Store:
    def __init__(self, dir_):
        self.file = os.path.join(dir_, "objects.json")
        self.objects = {}

    def load(self):
        with open(self.file) as f:
            self.objects = json.load(f)

    def save(self):
        with open(self.file + ".tmp", "w") as f:
            json.dump(self.objects, f, indent=1)
        os.replace(self.file + ".tmp", self.file)

    def next_rv(self):
        return str(1 + max([int(o.get("metadata", {}).get("resourceVersion", "0") or 0)
                            for o in self.objects.values()] + [0]))

    def handle(self, method, path, body):
        """(code, answer) for one request."""
        parts = path.rstrip("/").split("/")
        n = depth(path)
        sub = None
        if len(parts) == n + 4:     # .../RES/NAME/SUBRESOURCE
            sub = parts[-1]
            path = "/".join(parts[:-1])
            parts = parts[:-1]
        collection = len(parts) == n + 2
        if method == "GET" and collection:
            items = [o for p, o in sorted(self.objects.items())
                     if p.rsplit("/", 1)[0] == path]
            return 200, {"kind": "List", "metadata": {"resourceVersion": self.next_rv()},
                         "items": items}
        if method == "POST" and collection:
            name = body.get("metadata", {}).get("name")
            at = path + "/" + name
            if at in self.objects:
                return 409, status(409, "AlreadyExists", "%s already exists" % name)
            body.setdefault("metadata", {})
            body["metadata"]["uid"] = "uid-%s" % name
            body["metadata"]["resourceVersion"] = self.next_rv()
            body["metadata"].setdefault("namespace", parts[n])
            self.objects[at] = body
            return 201, body
        if path not in self.objects:
            return 404, status(404, "NotFound", "%s not found" % parts[-1])
        obj = self.objects[path]
        if method == "GET":
            return 200, obj
        if method == "DELETE":
            del self.objects[path]
            return 200, obj
        if method == "PATCH":
            rv = body.get("metadata", {}).get("resourceVersion")
            if rv and rv != obj.get("metadata", {}).get("resourceVersion"):
                return 409, status(409, "Conflict", "the object has been modified")
            body.get("metadata", {}).pop("resourceVersion", None)
            if sub == "status":
                body = {"status": body.get("status")}
            obj = merge(obj, body)
            obj["metadata"]["resourceVersion"] = self.next_rv()
            self.objects[path] = obj
            return 200, obj
        return 405, status(405, "MethodNotAllowed")


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        opts = self.server.opts
        head = read_head(self.rfile)
        if not head:
            return
        method, url, query, headers = head
        n = int(headers.get("content-length", "0") or 0)
        body = json.loads(self.rfile.read(n) or b"null") if n else None
        peerlib.log(opts.log, method=method, path=url.path, query=query, body=body)
        if headers.get("authorization") != "Bearer " + opts.token:
            return reply(self.wfile, 401, status(401, "Unauthorized"))
        store = Store(opts.dir)
        if os.path.exists(store.file):
            with LOCK:
                store.load()
                code, answer = store.handle(method, url.path, body)
                if method != "GET":
                    store.save()
            return reply(self.wfile, code, answer)
        with open(os.path.join(opts.dir, "ajjobs.json")) as f:
            jobs = json.load(f)
        if url.path.startswith(PREFIX) and url.path[len(PREFIX):] in jobs:
            return reply(self.wfile, 200, jobs[url.path[len(PREFIX):]])
        if url.path == "/api/v1/namespaces/ns/pods":
            return reply(self.wfile, 200, {"kind": "PodList", "metadata": {"resourceVersion": "1"},
                                           "items": []})
        reply(self.wfile, 404, status(404, "NotFound"))


def main():
    opts = peerlib.api_args(__doc__).parse_args()
    return serve(peerlib.TLSServer(Handler, opts, None), opts.port_file)


if __name__ == "__main__":
    sys.exit(main())
