#!/usr/bin/env python3
"""A loopback stand-in for the API server's pod exec (and the few pod calls
around it), for testing aj's exec client and code upload without a kubelet.

Speaks the Kubernetes exec channel protocol over a WebSocket (RFC 6455,
written here with the standard library only): v5.channel.k8s.io and/or
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
import base64
import hashlib
import json
import os
import socket
import socketserver
import ssl
import struct
import subprocess
import sys
import threading
import urllib.parse

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
STDIN, STDOUT, STDERR, ERROR, CLOSE = 0, 1, 2, 3, 255


def log(opts, **entry):
    if opts.log:
        with open(opts.log, "a") as f:
            f.write(json.dumps(entry) + "\n")


class Socket:
    """Frame-level WebSocket I/O on a connected socket (server side)."""

    def __init__(self, rfile, sock):
        self.rfile = rfile
        self.sock = sock
        self.lock = threading.RLock()  # a message's fragments never interleave with another

    def read_exact(self, n):
        data = self.rfile.read(n)
        if data is None or len(data) < n:
            raise EOFError
        return data

    def read_frame(self):
        b0, b1 = self.read_exact(2)
        fin, opcode, masked, n = b0 & 0x80, b0 & 0x0F, b1 & 0x80, b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", self.read_exact(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self.read_exact(8))[0]
        key = self.read_exact(4) if masked else b"\0\0\0\0"
        data = bytearray(self.read_exact(n))
        for i in range(n):
            data[i] ^= key[i % 4]
        return bool(fin), opcode, bytes(data)

    def read_message(self):
        """(opcode, payload) of the next data or close message; pings answered."""
        parts, first = [], None
        while True:
            fin, opcode, data = self.read_frame()
            if opcode == 9:
                self.send_frame(True, 10, data)
                continue
            if opcode == 10:
                continue
            if opcode == 8:
                return 8, data
            if opcode != 0:
                first = opcode
            parts.append(data)
            if fin:
                return first, b"".join(parts)

    def send_frame(self, fin, opcode, data):
        n = len(data)
        head = bytes([(0x80 if fin else 0) | opcode])
        if n < 126:
            head += bytes([n])
        elif n < 65536:
            head += bytes([126]) + struct.pack("!H", n)
        else:
            head += bytes([127]) + struct.pack("!Q", n)
        with self.lock:
            self.sock.sendall(head + data)

    def send_message(self, stream, data, fragments=1):
        """One binary message; with fragments > 1 the stream byte travels alone first."""
        with self.lock:
            if fragments <= 1 or not data:
                self.send_frame(True, 2, bytes([stream]) + data)
                return
            self.send_frame(False, 2, bytes([stream]))
            step = max(1, -(-len(data) // (fragments - 1)))
            chunks = [data[i:i + step] for i in range(0, len(data), step)]
            for i, c in enumerate(chunks):
                self.send_frame(i == len(chunks) - 1, 0, c)


def status_json(code):
    if code == 0:
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "command terminated with non-zero exit code: exit status %d" % code,
            "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}


class Handler(socketserver.StreamRequestHandler):
    def reply(self, code, body, headers=()):
        data = json.dumps(body).encode()
        self.wfile.write(("HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
                          "Content-Length: %d\r\nConnection: close\r\n" % (code, len(data))).encode())
        for h in headers:
            self.wfile.write((h + "\r\n").encode())
        self.wfile.write(b"\r\n" + data)

    def handle(self):
        opts = self.server.opts
        line = self.rfile.readline().decode("latin-1").strip()
        if not line:
            return
        method, target, _ = line.split(" ", 2)
        headers = {}
        while True:
            h = self.rfile.readline().decode("latin-1")
            if h in ("\r\n", "\n", ""):
                break
            k, _, v = h.partition(":")
            headers[k.strip().lower()] = v.strip()
        body = b""
        if "content-length" in headers:
            body = self.rfile.read(int(headers["content-length"]))
        url = urllib.parse.urlsplit(target)
        query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
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
        accept = base64.b64encode(hashlib.sha1((headers["sec-websocket-key"] + GUID).encode()).digest()).decode()
        self.wfile.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          "Sec-WebSocket-Accept: %s\r\nSec-WebSocket-Protocol: %s\r\n\r\n" % (accept, chosen)).encode())
        self.wfile.flush()
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
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(opts.cert, opts.key)
            self.socket = ctx.wrap_socket(self.socket, server_side=True)


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
    srv = Server(opts)
    parent = os.getppid()

    def orphaned():  # never outlive the test that started us
        while os.getppid() == parent:
            threading.Event().wait(0.5)
        os._exit(0)

    threading.Thread(target=orphaned, daemon=True).start()
    if opts.port_file:
        with open(opts.port_file + ".tmp", "w") as f:
            f.write(str(srv.server_address[1]))
        os.rename(opts.port_file + ".tmp", opts.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
