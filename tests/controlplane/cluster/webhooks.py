"""Print Volcano's webhook configurations from its installer manifest, each pointed at URL (instead
of an in-cluster Service) and trusting CA_FILE, for a webhook server running outside the cluster.

Usage: webhooks.py volcano-development.yaml https://127.0.0.1:PORT ca.crt"""
import base64
import sys

import yaml

KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")


def main(manifest, url, ca_file):
    with open(ca_file, "rb") as f:
        ca = base64.b64encode(f.read()).decode()
    with open(manifest) as f:
        docs = [d for d in yaml.safe_load_all(f) if d and d.get("kind") in KINDS]
    if len(docs) != 7:
        sys.exit(f"webhooks.py: expected 7 webhook configurations in {manifest}, found {len(docs)}")
    for d in docs:
        for w in d["webhooks"]:
            svc = w["clientConfig"].pop("service")
            w["clientConfig"] = {"url": url + svc["path"], "caBundle": ca}
    print(yaml.safe_dump_all(docs, sort_keys=False), end="")


main(*sys.argv[1:4])
