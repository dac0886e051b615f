#!/usr/bin/env python3
"""A loopback stand-in for the API server that serves AjJobs as they are
written in the JSON file DIR/ajjobs.json ({name: AjJob}, read at every
request so a test can change them), in namespace `ns`, and no pods. For the
CLI commands that read an AjJob and then go to its backend elsewhere (aj
logs of an Azure ML job). Serves HTTPS with --cert and --key and wants the
bearer token --token. Every request is appended to --log.
"""
import json
import os
import socketserver
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peerlib import read_head, reply, serve  # noqa: E402
import peerlib  # noqa: E402

PREFIX = "/apis/aj.dev/v1alpha1/namespaces/ns/ajjobs/"


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        opts = self.server.opts
        head = read_head(self.rfile)
        if not head:
            return
        method, url, query, headers = head
        peerlib.log(opts.log, method=method, path=url.path, query=query)
        if headers.get("authorization") != "Bearer " + opts.token:
            return reply(self.wfile, 401, {"kind": "Status", "code": 401, "reason": "Unauthorized"})
        with open(os.path.join(opts.dir, "ajjobs.json")) as f:
            jobs = json.load(f)
        if url.path.startswith(PREFIX) and url.path[len(PREFIX):] in jobs:
            return reply(self.wfile, 200, jobs[url.path[len(PREFIX):]])
        if url.path == "/api/v1/namespaces/ns/pods":
            return reply(self.wfile, 200, {"kind": "PodList", "metadata": {"resourceVersion": "1"},
                                           "items": []})
        reply(self.wfile, 404, {"kind": "Status", "code": 404, "reason": "NotFound"})


def main():
    opts = peerlib.api_args(__doc__).parse_args()
    return serve(peerlib.TLSServer(Handler, opts, None), opts.port_file)


if __name__ == "__main__":
    sys.exit(main())
