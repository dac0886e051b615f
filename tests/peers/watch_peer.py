#!/usr/bin/env python3
"""A loopback stand-in for one collection of the API server (configmaps of
any namespace), for testing aj's watch loop: list, then watch over a
WebSocket, with each stream following a script. Serves HTTPS with --cert
and --key.

A list (GET without watch=1) answers the collection as it stands. A watch
(GET with watch=1 and Upgrade: websocket) needs an Origin header, as
kube-apiserver does (403 without one), and the bearer token given with
--token; it then plays the next entry of --script, a JSON list whose
entries are either {"status": CODE} (the upgrade is refused with that code)
or {"events": [...], "end": "close" | "drop" | "hold"}. An event is
{"type", "name", "rv"} (ADDED, MODIFIED, DELETED, BOOKMARK), {"type":
"ERROR", "code", "reason"}, or {"raw": TEXT} sent as it is; "pieces" splits
its text message into that many WebSocket frames (a text frame, then
continuations) and "pad" adds that many bytes of data to the object. After
its events a stream is closed with status 1000 ("close"), cut without a
close frame ("drop"), or kept open until the client hangs up ("hold"). When
the script is used up, streams hold. Every request is appended to --log as
one JSON line with the time it arrived.
"""
import json
import os
import socketserver
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peerlib import Socket, read_head, reply, serve, upgrade  # noqa: E402
import peerlib  # noqa: E402


def log(opts, **entry):
    peerlib.log(opts.log, **entry)


class Handler(socketserver.StreamRequestHandler):
    def reply(self, code, body):
        reply(self.wfile, code, body)

    def handle(self):
        opts, state = self.server.opts, self.server.state
        head = read_head(self.rfile)
        if not head:
            return
        method, url, query, headers = head
        entry = {"time": time.monotonic(), "method": method, "path": url.path, "query": query,
                 "origin": "origin" in headers,
                 "authorized": headers.get("authorization") == "Bearer " + opts.token}
        watch = query.get("watch") == ["1"]
        entry["kind"] = "watch" if watch else "list"
        if not entry["authorized"]:
            log(opts, status=401, **entry)
            return self.reply(401, {"kind": "Status", "status": "Failure", "reason": "Unauthorized",
                                    "code": 401})
        if not watch:
            with state["lock"]:
                items = [obj for _, obj in sorted(state["objects"].items())]
                rv = state["rv"]
            log(opts, status=200, **entry)
            return self.reply(200, {"kind": "ConfigMapList", "apiVersion": "v1",
                                    "metadata": {"resourceVersion": rv}, "items": items})
        if headers.get("upgrade", "").lower() != "websocket" or not entry["origin"]:
            log(opts, status=403, **entry)
            return self.reply(403, {"kind": "Status", "status": "Failure", "code": 403})
        with state["lock"]:
            step = state["script"].pop(0) if state["script"] else {"events": [], "end": "hold"}
        if "status" in step:
            log(opts, status=step["status"], **entry)
            return self.reply(step["status"], {"kind": "Status", "status": "Failure",
                                               "code": step["status"]})
        upgrade(self.wfile, headers)
        log(opts, status=101, **entry)
        ws = Socket(self.rfile, self.connection)
        try:
            for ev in step["events"]:
                self.send(ws, state, ev)
            if step["end"] == "close":
                ws.send_frame(True, 8, struct.pack("!H", 1000))
            elif step["end"] == "hold":
                while ws.read_message()[0] != 8:
                    pass
        except (EOFError, OSError, ValueError):
            pass

    @staticmethod
    def send(ws, state, ev):
        if "raw" in ev:
            text = ev["raw"]
        elif ev["type"] == "ERROR":
            text = json.dumps({"type": "ERROR", "object": {
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "too old resource version", "reason": ev["reason"], "code": ev["code"]}})
        else:
            obj = {"kind": "ConfigMap", "apiVersion": "v1",
                   "metadata": {"resourceVersion": ev["rv"]}}
            if ev["type"] != "BOOKMARK":
                obj["metadata"]["name"] = ev["name"]
                obj["data"] = {"pad": "x" * ev.get("pad", 0)}
            with state["lock"]:
                state["rv"] = ev["rv"]
                if ev["type"] in ("ADDED", "MODIFIED"):
                    state["objects"][ev["name"]] = obj
                elif ev["type"] == "DELETED":
                    state["objects"].pop(ev["name"], None)
            text = json.dumps({"type": ev["type"], "object": obj})
        data = (text + "\n").encode()
        pieces = max(1, ev.get("pieces", 1))
        step = -(-len(data) // pieces)
        chunks = [data[i:i + step] for i in range(0, len(data), step)] or [b""]
        with ws.lock:
            for i, c in enumerate(chunks):
                ws.send_frame(i == len(chunks) - 1, 1 if i == 0 else 0, c)


def main():
    ap = peerlib.api_args(__doc__)
    ap.add_argument("--script", default="[]")
    opts = ap.parse_args()
    state = {"lock": threading.Lock(), "objects": {}, "rv": "10", "script": json.loads(opts.script)}
    return serve(peerlib.TLSServer(Handler, opts, state), opts.port_file)


if __name__ == "__main__":
    sys.exit(main())
