#!/usr/bin/env python3
"""A loopback stand-in for the API server's pod exec (and the few pod calls
around it), for testing aj's exec client and code upload without a kubelet.

Speaks the Kubernetes exec channel protocol over a WebSocket (RFC 6455,
in peerlib.py with the standard library only): v5.channel.k8s.io and/or
v4.channel.k8s.io, stream byte first in every binary message, the final
metav1.Status on stream 3, v5's {255, stream} close message. The command
really runs here, so a test's "pod" is this machine and its "volume" a
temporary directory.

Also answers POST/GET/DELETE on .../pods so a whole upload (helper pod,
wait for Running, exec, delete) can run against it. Every request is
appended to --log as one JSON line.

Faults for tests: --drop-after N closes the TCP connection once N stdin
bytes have arrived (the command then sees its input end early);
--corrupt-at N flips one stdin byte at offset N; --protocols limits what
is offered; --token requires that bearer token; --pod-phase sets what GET
reports. Outgoing stdout messages are split into several WebSocket
fragments, the stream byte alone in the first, to exercise reassembly.
"""
import argparse
import json
import os
import socket
import socketserver
import struct
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peerlib import Socket, read_head, reply, serve, tls, upgrade  # noqa: E402
import peerlib  # noqa: E402

STDIN, STDOUT, STDERR, ERROR, CLOSE = 0, 1, 2, 3, 255


def log(opts, **entry):
    peerlib.log(opts.log, **entry)


def status_json(code):
    if code == 0:
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "command terminated with non-zero exit code: exit status %d" % code,
            "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}


class Handler(socketserver.StreamRequestHandler):
    def reply(self, code, body, headers=()):
        reply(self.wfile, code, body, headers)

    def handle(self):
        opts = self.server.opts
        head = read_head(self.rfile)
        if not head:
            return
        method, url, query, headers = head
        body = b""
        if "content-length" in headers:
            body = self.rfile.read(int(headers["content-length"]))
        auth = headers.get("authorization", "")
        entry = {"method": method, "path": url.path, "query": query,
                 "authorized": auth == "Bearer " + opts.token if opts.token else True}
        if opts.token and auth != "Bearer " + opts.token:
            log(opts, status=401, **entry)
            self.reply(401, {"kind": "Status", "status": "Failure", "reason": "Unauthorized", "code": 401})
            return
        parts = url.path.strip("/").split("/")
        # api v1 namespaces NS pods [NAME [exec]]
        if len(parts) >= 5 and parts[:3] == ["api", "v1", "namespaces"] and parts[4] == "pods":
            ns = parts[3]
            if len(parts) == 7 and parts[6] == "exec" and headers.get("upgrade", "").lower() == "websocket":
                return self.exec(opts, entry, headers, query)
            return self.pods(opts, entry, method, ns, parts[5] if len(parts) > 5 else None, body)
        log(opts, status=404, **entry)
        self.reply(404, {"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404})

    def pods(self, opts, entry, method, ns, name, body):
        pods = self.server.pods
        if method == "POST" and not name:
            pod = json.loads(body)
            pod["metadata"]["namespace"] = ns
            pod["metadata"]["uid"] = "uid-%d" % len(pods)
            pod["status"] = {"phase": "Pending"}
            pods[(ns, pod["metadata"]["name"])] = pod
            log(opts, status=201, pod=pod, **entry)
            return self.reply(201, pod)
        pod = pods.get((ns, name))
        if not pod:
            log(opts, status=404, **entry)
            return self.reply(404, {"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404,
                                    "message": 'pods "%s" not found' % name})
        if method == "GET":
            pod["status"] = {"phase": opts.pod_phase}
            log(opts, status=200, **entry)
            return self.reply(200, pod)
        if method == "DELETE":
            del pods[(ns, name)]
            log(opts, status=200, **entry)
            return self.reply(200, pod)
        log(opts, status=405, **entry)
        self.reply(405, {"kind": "Status", "status": "Failure", "code": 405})

    def exec(self, opts, entry, headers, query):
        offered = [p.strip() for p in headers.get("sec-websocket-protocol", "").split(",") if p.strip()]
        chosen = next((p for p in offered if p in opts.protocols), None)
        if not chosen or "command" not in query:
            log(opts, status=400, offered=offered, **entry)
            return self.reply(400, {"kind": "Status", "status": "Failure", "reason": "BadRequest", "code": 400})
        upgrade(self.wfile, headers, chosen)
        log(opts, status=101, protocol=chosen, **entry)
        ws = Socket(self.rfile, self.connection)
        wants_stdin = query.get("stdin") == ["true"]
        proc = subprocess.Popen(query["command"], stdout=subprocess.PIPE,
                                stdin=subprocess.PIPE if wants_stdin else subprocess.DEVNULL,
                                stderr=subprocess.PIPE, cwd=opts.dir)

        def pump(src, stream):
            for chunk in iter(lambda: src.read1(65536), b""):
                try:
                    ws.send_message(stream, chunk, fragments=3 if stream == STDOUT else 1)
                except OSError:
                    pass

        pumps = [threading.Thread(target=pump, args=(proc.stdout, STDOUT)),
                 threading.Thread(target=pump, args=(proc.stderr, STDERR))]
        for t in pumps:
            t.start()
        state = {"received": 0, "dropped": False}

        def close_stdin():
            try:
                if proc.stdin:
                    proc.stdin.close()
            except (BrokenPipeError, ValueError):
                pass

        def feed():  # the client's messages, until it hangs up
            try:
                while True:
                    opcode, data = ws.read_message()
                    if opcode == 8:
                        break
                    if not data:
                        continue
                    if data[0] == CLOSE and chosen.startswith("v5") and data[1:] == bytes([STDIN]):
                        close_stdin()
                        continue
                    if data[0] != STDIN:
                        continue
                    payload = bytearray(data[1:])
                    got = state["received"]
                    if opts.corrupt_at is not None and got <= opts.corrupt_at < got + len(payload):
                        payload[opts.corrupt_at - got] ^= 0xFF
                    if opts.drop_after is not None and got + len(payload) >= opts.drop_after:
                        payload = payload[:opts.drop_after - got]
                        state["dropped"] = True
                    state["received"] += len(payload)
                    try:
                        proc.stdin.write(payload)
                        proc.stdin.flush()
                    except (AttributeError, BrokenPipeError, ValueError):
                        pass
                    if state["dropped"]:
                        self.connection.shutdown(socket.SHUT_RDWR)
                        break
            except (EOFError, OSError, ValueError):  # hung up, or closed by us
                pass
            close_stdin()

        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
        code = proc.wait()
        for t in pumps:
            t.join()
        received, dropped = state["received"], state["dropped"]
        log(opts, event="exited", code=code, received=received, dropped=dropped, command=query["command"])
        if dropped:
            return
        try:
            ws.send_message(ERROR, json.dumps(status_json(code)).encode())
            ws.send_frame(True, 8, struct.pack("!H", 1000))
        except OSError:
            pass


class Server(socketserver.TCPServer):
    allow_reuse_address = True

    def __init__(self, opts):
        super().__init__(("127.0.0.1", opts.port), Handler)
        self.opts = opts
        self.pods = {}
        if opts.cert:
            tls(self, opts.cert, opts.key)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--token")
    ap.add_argument("--log")
    ap.add_argument("--dir", default=".")
    ap.add_argument("--protocols", default="v5.channel.k8s.io,v4.channel.k8s.io")
    ap.add_argument("--drop-after", type=int)
    ap.add_argument("--corrupt-at", type=int)
    ap.add_argument("--pod-phase", default="Running")
    opts = ap.parse_args()
    opts.protocols = opts.protocols.split(",")
    return serve(Server(opts), opts.port_file)


if __name__ == "__main__":
    sys.exit(main())
