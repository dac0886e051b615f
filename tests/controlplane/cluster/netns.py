"""What the cluster's programs on the real nodes' pod network share (cluster-dns.py, api-relay.py):
they make their listening sockets inside a network namespace of their own on the pod bridge, then
return to the host's, where they reach the API server (127.0.0.1) and serve a health check on
127.0.0.1 for cluster-up.sh."""
import ctypes
import http.server
import os
import threading

CLONE_NEWNET = 0x40000000


def _setns(fd):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def sockets_in(netns, make):
    """make()'s result, called inside network namespace netns (ip netns's /run/netns/NAME): the
    sockets it makes stay there, the calling thread comes back to its own namespace."""
    own = os.open("/proc/self/ns/net", os.O_RDONLY)
    target = os.open("/run/netns/" + netns, os.O_RDONLY)
    try:
        _setns(target)
        try:
            return make()
        finally:
            _setns(own)
    finally:
        os.close(target)
        os.close(own)


def serve_health(port):
    """GET /healthz on 127.0.0.1:port answers 200, in a thread of its own."""
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            ok = self.path == "/healthz"
            self.send_response(200 if ok else 404)
            self.end_headers()
            self.wfile.write(b"ok\n" if ok else b"")

        def log_message(self, *a):
            pass

    srv = http.server.HTTPServer(("127.0.0.1", port), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
