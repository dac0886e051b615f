#!/usr/bin/env python3
"""A loopback stand-in for the API server for `aj logs -f`: one AjJob `j`
(backend volcano) in namespace `ns` with one pod, `j-master-0` (task master,
rank 0), whose log stream drops the first time. Serves HTTPS with --cert and
--key and wants the bearer token --token.

The first GET of the pod's log sends two whole lines and half of a third,
then cuts the connection in the middle of the chunked body (an API server or
kubelet that dropped the stream). Every later GET answers from its
sinceTime on (to the second, as the API server reads it), so the lines
already sent come again, then the rest, and ends the body. Once that answer
is sent the AjJob is Succeeded. The AjJob `az` is an Azure ML job (status
tasks and azure, no pods). Every request is appended to --log.

With --workers N the job also has N pods of task worker (j-worker-0 ...,
ranks 0 to N-1), each of whose streams sends that pod's three lines (from
its sinceTime on) and ends.
"""
import json
import os
import socketserver
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peerlib import read_head, reply, serve  # noqa: E402
import peerlib  # noqa: E402

LINES = [
    b"2024-05-01T12:00:01.100000000Z one\n",
    b"2024-05-01T12:00:02.200000000Z two\n",
    b"2024-05-01T12:00:02.700000000Z three, once whole\n",
    b"2024-05-01T12:00:04.000000000Z four\n",
]

# An Azure ML job as the controller reports it: tasks and Azure details, no pods in the cluster.
AZ = {"metadata": {"name": "az", "namespace": "ns"},
      "status": {"backend": "aml", "phase": "Running",
                 "tasks": [{"name": "main", "replicas": 2, "pending": 0, "running": 2,
                            "succeeded": 0, "failed": 0, "restarts": 1}],
                 "azure": {"compute": "gpu-cluster", "instanceType": "Standard_ND96asr_v4",
                           "portalUrl": "https://ml.azure.com/runs/az-1"}}}


def pod(task, rank):
    return {"metadata": {"name": "j-%s-%d" % (task, rank), "namespace": "ns",
                         "uid": "u-%s-%d" % (task, rank),
                         "labels": {"aj.dev/ajjob": "j", "aj.dev/task": task},
                         "annotations": {"volcano.sh/task-index": str(rank)}},
            "spec": {"nodeName": "n1", "containers": [{"name": task}]},
            "status": {"phase": "Running",
                       "containerStatuses": [{"name": task, "restartCount": 0,
                                              "state": {"running": {}}}]}}


def worker_lines(rank):
    return [b"2024-05-01T12:00:0%d.000000000Z worker %d line %d\n" % (k + 1, rank, k) for k in range(3)]


def chunk(data):
    return b"%x\r\n%s\r\n" % (len(data), data)


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        opts, state = self.server.opts, self.server.state
        head = read_head(self.rfile)
        if not head:
            return
        method, url, query, headers = head
        peerlib.log(opts.log, method=method, path=url.path, query=query)
        if headers.get("authorization") != "Bearer " + opts.token:
            return reply(self.wfile, 401, {"kind": "Status", "code": 401, "reason": "Unauthorized"})
        if url.path == "/apis/aj.dev/v1alpha1/namespaces/ns/ajjobs/j":
            with state["lock"]:
                phase = "Succeeded" if state["done"] else "Running"
            return reply(self.wfile, 200, {"metadata": {"name": "j", "namespace": "ns"},
                                           "status": {"backend": "volcano", "phase": phase}})
        if url.path == "/apis/aj.dev/v1alpha1/namespaces/ns/ajjobs/az":
            return reply(self.wfile, 200, AZ)
        if url.path == "/api/v1/namespaces/ns/events":
            return reply(self.wfile, 200, {"kind": "EventList", "metadata": {}, "items": []})
        if url.path == "/api/v1/namespaces/ns/pods":
            pods = [pod("master", 0)] + [pod("worker", r) for r in range(opts.workers)]
            return reply(self.wfile, 200, {"kind": "PodList", "metadata": {"resourceVersion": "5"},
                                           "items": pods})
        prefix = "/api/v1/namespaces/ns/pods/j-worker-"
        if url.path.startswith(prefix) and url.path.endswith("/log"):
            return self.send(worker_lines(int(url.path[len(prefix):-4])), query)
        if url.path != "/api/v1/namespaces/ns/pods/j-master-0/log":
            return reply(self.wfile, 404, {"kind": "Status", "code": 404, "reason": "NotFound"})
        with state["lock"]:
            state["streams"] += 1
            first = state["streams"] == 1
        if first:
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                             b"Transfer-Encoding: chunked\r\n\r\n")
            self.wfile.write(chunk(LINES[0] + LINES[1] + LINES[2][:20]))
            self.wfile.flush()
            self.connection.shutdown(2)   # cut: no last chunk
            return
        self.send(LINES, query)
        with state["lock"]:
            state["done"] = True

    def send(self, lines, query):
        """The lines from sinceTime on (to the second), in one whole chunked body."""
        since = query.get("sinceTime", [""])[0][:19]
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n")
        for line in lines:
            if line[:19].decode() >= since:
                self.wfile.write(chunk(line))
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def main():
    ap = peerlib.api_args(__doc__)
    ap.add_argument("--workers", type=int, default=0)
    opts = ap.parse_args()
    state = {"lock": threading.Lock(), "streams": 0, "done": False}
    return serve(peerlib.TLSServer(Handler, opts, state), opts.port_file)


if __name__ == "__main__":
    sys.exit(main())
