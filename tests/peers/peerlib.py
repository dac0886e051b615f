"""What the loopback peers that stand in for the API server share: the
request head, JSON replies, a WebSocket upgrade and frame-level I/O
(RFC 6455, standard library only), a JSON-lines request log, TLS, and a
serve loop that writes the bound port to a file and never outlives the
test that started it.
"""
import argparse
import base64
import hashlib
import json
import os
import socketserver
import ssl
import struct
import threading
import urllib.parse

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def log(log_file, /, **entry):
    """Append entry as one JSON line to log_file (None: no log)."""
    if log_file:
        with open(log_file, "a") as f:
            f.write(json.dumps(entry) + "\n")


def read_head(rfile):
    """(method, url, query, headers) of the next request, or None at EOF; header names lower case."""
    line = rfile.readline().decode("latin-1").strip()
    if not line:
        return None
    method, target, _ = line.split(" ", 2)
    headers = {}
    while True:
        h = rfile.readline().decode("latin-1")
        if h in ("\r\n", "\n", ""):
            break
        k, _, v = h.partition(":")
        headers[k.strip().lower()] = v.strip()
    url = urllib.parse.urlsplit(target)
    return method, url, urllib.parse.parse_qs(url.query, keep_blank_values=True), headers


def reply(wfile, code, body, headers=()):
    """A JSON answer on a connection that closes after it."""
    data = json.dumps(body).encode()
    wfile.write(("HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
                 "Content-Length: %d\r\nConnection: close\r\n" % (code, len(data))).encode())
    for h in headers:
        wfile.write((h + "\r\n").encode())
    wfile.write(b"\r\n" + data)


def upgrade(wfile, headers, protocol=None):
    """Accept the WebSocket upgrade the request headers ask for."""
    accept = base64.b64encode(hashlib.sha1((headers["sec-websocket-key"] + GUID).encode())
                              .digest()).decode()
    extra = "Sec-WebSocket-Protocol: %s\r\n" % protocol if protocol else ""
    wfile.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                 "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n%s\r\n"
                 % (accept, extra)).encode())
    wfile.flush()


def tls(server, cert, key, lazy=False):
    """Serve HTTPS with the given certificate and key; lazy: each handshake in its connection's thread."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=not lazy)


class TLSServer(socketserver.ThreadingTCPServer):
    """An HTTPS peer on 127.0.0.1: handler class, parsed options, shared state."""
    allow_reuse_address = True
    daemon_threads = True
    request_queue_size = 256   # a client may open a hundred streams at once

    def __init__(self, handler, opts, state):
        super().__init__(("127.0.0.1", 0), handler)
        self.opts = opts
        self.state = state
        # a hundred streams at once: not one handshake after the other in accept()
        tls(self, opts.cert, opts.key, lazy=True)


def api_args(doc):
    """The options of an API server peer: where to write its port and log, its token and TLS."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--dir")
    ap.add_argument("--token", required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    return ap


def serve(server, port_file):
    """Write the bound port to port_file (atomically), then serve until the parent is gone."""
    parent = os.getppid()

    def orphaned():  # never outlive the test that started us
        while os.getppid() == parent:
            threading.Event().wait(0.5)
        os._exit(0)

    threading.Thread(target=orphaned, daemon=True).start()
    if port_file:
        with open(port_file + ".tmp", "w") as f:
            f.write(str(server.server_address[1]))
        os.rename(port_file + ".tmp", port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


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
