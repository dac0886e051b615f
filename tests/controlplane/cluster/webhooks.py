"""Print a component's webhook configurations from its manifest, each pointed at URL (instead of an
in-cluster Service) and trusting CA_FILE, for a webhook server running outside the cluster.

Usage: webhooks.py MANIFEST https://127.0.0.1:PORT ca.crt [COUNT [GROUPS [PREFIX]]]
  COUNT   the number of configurations the manifest must hold (default 7, Volcano's installer)
  GROUPS  comma-separated API groups ("" is the core group): only the webhooks whose rules all
          name these groups are kept, so that a webhook for a kind the server does not serve
          (its integration is off) cannot refuse every such object with failurePolicy Fail
  PREFIX  put before each configuration's name (kubebuilder's manifests use generic names)"""
import base64
import sys

import yaml

KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")


def wanted(webhook, groups):
    if groups is None:
        return True
    return all(g in groups for rule in webhook.get("rules", []) for g in rule.get("apiGroups", []))


def main(manifest, url, ca_file, count="7", groups=None, prefix=""):
    with open(ca_file, "rb") as f:
        ca = base64.b64encode(f.read()).decode()
    with open(manifest) as f:
        docs = [d for d in yaml.safe_load_all(f) if d and d.get("kind") in KINDS]
    if len(docs) != int(count):
        sys.exit(f"webhooks.py: expected {count} webhook configurations in {manifest}, found {len(docs)}")
    allowed = None if groups is None else set(groups.split(","))
    for d in docs:
        d["metadata"]["name"] = prefix + d["metadata"]["name"]
        d["webhooks"] = [w for w in d["webhooks"] if wanted(w, allowed)]
        for w in d["webhooks"]:
            svc = w["clientConfig"].pop("service")
            w["clientConfig"] = {"url": url + svc["path"], "caBundle": ca}
    print(yaml.safe_dump_all(docs, sort_keys=False), end="")


main(*sys.argv[1:7])
