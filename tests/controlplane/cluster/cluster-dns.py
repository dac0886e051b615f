#!/usr/bin/env python3
"""The local cluster's DNS for the real node's pods: the records of Kubernetes' DNS specification
that aj's jobs use, answered from the API server.

    cluster-dns.py --netns NAME --ip IP --health-port PORT --env ENV_FILE [--domain cluster.local]

  <svc>.<ns>.svc.<domain>          A: a headless Service's endpoint addresses, else its cluster IP
  <host>.<svc>.<ns>.svc.<domain>   A: the endpoint whose hostname is <host> (a pod with hostname and
                                   subdomain, as Volcano's svc plugin and the kube backend make them)
  <a-b-c-d>.<ns>.pod.<domain>      A: a.b.c.d
Other names in the domain get NXDOMAIN, names outside it REFUSED: nothing is forwarded anywhere.

Its UDP and TCP sockets are made inside network namespace NAME (on the pod bridge, address IP, port
53), then the process returns to its own namespace, where it reads the API server (127.0.0.1) with
the env file's client certificate and serves GET /healthz on 127.0.0.1:PORT. Why not CoreDNS:
docs/controlplane.md ("The real node").
"""
import argparse
import json
import re
import select
import socket
import ssl
import struct
import sys
import urllib.parse
import urllib.request

import netns

TTL = 5


def read_env(path):
    env = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^export (\w+)='?(.*?)'?$", line.rstrip("\n"))
            if m:
                env[m.group(1)] = m.group(2)
    return env


class Api:
    def __init__(self, env):
        self.server = env["AJ_KUBE_SERVER"]
        self.ctx = ssl.create_default_context(cafile=env["AJ_KUBE_CA"])
        self.ctx.load_cert_chain(env["AJ_KUBE_CLIENT_CERT"], env["AJ_KUBE_CLIENT_KEY"])

    def get(self, path, query=None):
        url = self.server + path + ("?" + urllib.parse.urlencode(query) if query else "")
        try:
            with urllib.request.urlopen(url, context=self.ctx, timeout=5) as r:
                return json.load(r)
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return None
            raise

    def service(self, ns, name):
        return self.get("/api/v1/namespaces/%s/services/%s" % (ns, name))

    def endpoints(self, ns, svc):
        """(hostname or None, address) of every endpoint of Service svc."""
        out = []
        doc = self.get("/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices" % ns,
                       {"labelSelector": "kubernetes.io/service-name=" + svc})
        for sl in (doc or {}).get("items", []):
            if sl.get("addressType") != "IPv4":
                continue
            for ep in sl.get("endpoints") or []:
                for a in ep.get("addresses") or []:
                    out.append((ep.get("hostname"), a))
        return out


LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")


def resolve(api, name, domain):
    """(rcode, [IPv4 address]) for a lower-case name without its final dot."""
    if name != domain and not name.endswith("." + domain):
        return 5, []  # REFUSED: not ours, and nothing is forwarded
    parts = name[: -len(domain)].rstrip(".").split(".") if name != domain else []
    if not all(LABEL.match(p) for p in parts):
        return 3, []
    if len(parts) == 3 and parts[2] == "pod":
        ip = parts[0].replace("-", ".")
        try:
            socket.inet_aton(ip)
        except OSError:
            return 3, []
        return (0, [ip]) if ip.count(".") == 3 else (3, [])
    if len(parts) not in (3, 4) or parts[-1] != "svc":
        return 3, []
    ns, svc = parts[-2], parts[-3]
    host = parts[0] if len(parts) == 4 else None
    s = api.service(ns, svc)
    if s is None:
        return 3, []
    cluster_ip = s.get("spec", {}).get("clusterIP")
    if host is None and cluster_ip and cluster_ip != "None":
        return 0, [cluster_ip]
    eps = api.endpoints(ns, svc)
    ips = sorted({a for h, a in eps if host is None or h == host})
    if host is not None and not ips:
        return 3, []
    return 0, ips


def parse_question(msg):
    if len(msg) < 12:
        return None
    qd = struct.unpack("!H", msg[4:6])[0]
    if qd != 1:
        return None
    labels, i = [], 12
    while True:
        if i >= len(msg):
            return None
        n = msg[i]
        if n == 0:
            i += 1
            break
        if n & 0xC0 or i + 1 + n > len(msg):
            return None
        labels.append(msg[i + 1:i + 1 + n].decode("ascii", "replace").lower())
        i += 1 + n
    if i + 4 > len(msg):
        return None
    qtype, qclass = struct.unpack("!HH", msg[i:i + 4])
    return ".".join(labels), qtype, qclass, msg[12:i + 4]


def answer(api, msg, domain, log):
    q = parse_question(msg)
    ident, flags = struct.unpack("!HH", msg[:4]) if len(msg) >= 4 else (0, 0)
    rd = flags & 0x0100
    if q is None:
        return struct.pack("!HHHHHH", ident, 0x8000 | rd | 1, 0, 0, 0, 0)  # FORMERR
    name, qtype, qclass, question = q
    try:
        rcode, ips = resolve(api, name, domain)
    except Exception as e:  # the API server being away is a server failure, not a missing name
        log.write("%s: %s\n" % (name, e))
        rcode, ips = 2, []
    answers = b""
    if rcode == 0 and qtype in (1, 255) and qclass == 1:
        for ip in ips:
            answers += struct.pack("!HHHIH", 0xC00C, 1, 1, TTL, 4) + socket.inet_aton(ip)
    n = len(answers) // 16
    aa = 0x0400 if rcode != 5 else 0
    log.write("%s %d -> %s %s\n" % (name, qtype, rcode, " ".join(ips) if answers else "-"))
    log.flush()
    return struct.pack("!HHHHHH", ident, 0x8000 | aa | rd | rcode, 1, n, 0, 0) + question + answers


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--netns", required=True)
    ap.add_argument("--ip", required=True)
    ap.add_argument("--health-port", type=int, required=True)
    ap.add_argument("--env", required=True)
    ap.add_argument("--domain", default="cluster.local")
    a = ap.parse_args()
    api = Api(read_env(a.env))

    def listen():
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind((a.ip, 53))
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        tcp.bind((a.ip, 53))
        tcp.listen(16)
        return udp, tcp

    udp, tcp = netns.sockets_in(a.netns, listen)
    netns.serve_health(a.health_port)
    log = sys.stdout
    log.write("cluster-dns: serving %s on %s:53 (network namespace %s)\n" % (a.domain, a.ip, a.netns))
    log.flush()
    while True:
        r, _, _ = select.select([udp, tcp], [], [])
        if udp in r:
            msg, peer = udp.recvfrom(4096)
            udp.sendto(answer(api, msg, a.domain, log), peer)
        if tcp in r:
            c, _ = tcp.accept()
            c.settimeout(2)
            try:
                n = struct.unpack("!H", c.recv(2))[0]
                msg = b""
                while len(msg) < n:
                    chunk = c.recv(n - len(msg))
                    if not chunk:
                        break
                    msg += chunk
                out = answer(api, msg, a.domain, log)
                c.sendall(struct.pack("!H", len(out)) + out)
            except (OSError, struct.error):
                pass
            finally:
                c.close()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
