#!/usr/bin/env python3
"""Turn a Grafana dashboard and a /metrics page into a promtool rule test.

Usage: dashboard_rules.py SCRAPE DASHBOARD OUT_DIR
Writes OUT_DIR/rules.yaml, one alerting rule `count(QUERY) > 0` per dashboard
query (panel targets and the templating's label_values()), and OUT_DIR/test.yaml,
whose input series are every sample of the page as prometheus-client's parser
reads it (constant for 20 minutes, job="aj-controller" as a scrape adds it),
and which expects every rule to fire after 10 minutes. Grafana's variables
become what they stand for: $__rate_interval 5m, $job any job.
"""
import json
import sys

import yaml
from prometheus_client.parser import text_string_to_metric_families


def series(scrape):
    with open(scrape, encoding="utf-8") as f:
        families = list(text_string_to_metric_families(f.read()))
    for fam in families:
        for s in fam.samples:
            labels = dict(s.labels, job="aj-controller")
            sel = ",".join('%s="%s"' % (k, v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n"))
                           for k, v in sorted(labels.items()))
            yield {"series": "%s{%s}" % (s.name, sel), "values": "%s+0x20" % repr(float(s.value))}


def queries(dashboard):
    with open(dashboard, encoding="utf-8") as f:
        d = json.load(f)
    for p in d.get("panels", []):
        for t in p.get("targets", []):
            yield "%s (%s)" % (p["title"], t["refId"]), t["expr"]
    for v in d.get("templating", {}).get("list", []):
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        if v.get("type") == "query" and q.startswith("label_values("):
            # Grafana's label_values(SELECTOR, LABEL): the selector must have series with LABEL
            sel, label = q[len("label_values("):-1].rsplit(",", 1)
            yield "variable %s" % v["name"], "count by (%s) (%s)" % (label.strip(), sel.strip())


def grafana(expr):
    return expr.replace("$__rate_interval", "5m").replace('=~"$job"', '=~".*"')


def main():
    scrape, dashboard, out = sys.argv[1:4]
    rules, alerts = [], []
    for i, (what, expr) in enumerate(queries(dashboard)):
        name = "Q%d" % i
        rules.append({"alert": name, "expr": "count(%s) > 0" % grafana(expr), "labels": {"query": what}})
        alerts.append({"eval_time": "10m", "alertname": name, "exp_alerts": [{"exp_labels": {"query": what}}]})
    if not rules:
        sys.exit("no queries in %s" % dashboard)
    with open(out + "/rules.yaml", "w", encoding="utf-8") as f:
        yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}, f, sort_keys=False)
    with open(out + "/test.yaml", "w", encoding="utf-8") as f:
        yaml.safe_dump({"rule_files": ["rules.yaml"], "evaluation_interval": "1m",
                        "tests": [{"interval": "1m", "input_series": list(series(scrape)),
                                   "alert_rule_test": alerts}]}, f, sort_keys=False)
    for what, expr in queries(dashboard):
        print("%s: %s" % (what, expr))


if __name__ == "__main__":
    main()
