"""kube-apiserver's own request counters (apiserver_request_total) from its /metrics text, summed
by (verb, resource, subresource), and their increase between two readings.

As a program: apiserver_requests.py BEFORE AFTER N prints the increase per N of each counter that
grew by at least N/10 (the clients' requests, not the server's background)."""
import re
import sys


def load(path):
    out = {}
    for line in open(path):
        m = re.match(r'apiserver_request_total\{(.*)\} (\S+)', line)
        if m:
            lab = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
            key = (lab.get("verb"), lab.get("resource"), lab.get("subresource", ""))
            out[key] = out.get(key, 0) + float(m.group(2))
    return out


def increase(before, after):
    return {k: v - before.get(k, 0) for k, v in after.items() if v > before.get(k, 0)}


if __name__ == "__main__":
    d, n = increase(load(sys.argv[1]), load(sys.argv[2])), int(sys.argv[3])
    for k in sorted(d):
        if d[k] >= n / 10:
            print("  %-7s %-10s %-7s %.2f" % (k[0], k[1], k[2], d[k] / n))
