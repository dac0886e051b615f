#!/usr/bin/env python3
"""The `kubernetes` Service for the real nodes' pods: what kube-proxy does for that one Service,
without kube-proxy, for an API server that listens on 127.0.0.1 only.

    api-relay.py --netns NAME --listen IP:PORT --to PORT --health-port PORT

The listening socket is made inside network namespace NAME (the cluster DNS's, on the pod bridge,
where node.sh puts the Service's cluster IP on lo and the pods route the service range to), then
the process returns to the host's namespace: each connection accepted there is relayed, bytes
unchanged, to 127.0.0.1:PORT of the host (TLS end to end: the pod verifies the API server's
certificate, which names the cluster IP, with its ServiceAccount's ca.crt). GET /healthz on
127.0.0.1:--health-port answers while it runs. Why not kube-proxy: docs/controlplane.md.
"""
import argparse
import socket
import sys
import threading

import netns


def pipe(src, dst):
    """Copy src to dst until src ends, then end dst's sending side (the other way may go on)."""
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def relay(conn, port):
    try:
        up = socket.create_connection(("127.0.0.1", port), timeout=10)
    except OSError as e:
        sys.stdout.write("api-relay: cannot reach 127.0.0.1:%d: %s\n" % (port, e))
        sys.stdout.flush()
        conn.close()
        return
    up.settimeout(None)
    back = threading.Thread(target=pipe, args=(up, conn), daemon=True)
    back.start()
    pipe(conn, up)
    back.join()
    conn.close()
    up.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--netns", required=True)
    ap.add_argument("--listen", required=True)
    ap.add_argument("--to", type=int, required=True)
    ap.add_argument("--health-port", type=int, required=True)
    a = ap.parse_args()
    ip, port = a.listen.rsplit(":", 1)

    def listen():
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind((ip, int(port)))
        srv.listen(64)
        return srv

    srv = netns.sockets_in(a.netns, listen)
    netns.serve_health(a.health_port)
    sys.stdout.write("api-relay: %s (network namespace %s) to 127.0.0.1:%d\n" % (a.listen, a.netns, a.to))
    sys.stdout.flush()
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=relay, args=(conn, a.to), daemon=True).start()


if __name__ == "__main__":
    main()
