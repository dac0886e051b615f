#!/usr/bin/env python3
"""Assertions on the chart's objects as the API server returned them.

Usage: check_objects.py PROFILE FILE.json [key=value...]
FILE.json is the output of `kubectl apply --dry-run=server -o json` (a List
or one object). PROFILE names the value set (default, namespaced, aks). Each
check prints "ok - ..." or "FAIL - ..."; the exit status is 1 if any failed.
The expectations are written out here, not read from the chart.
"""
import json
import sys

# What the controller does with the API (controller/reconcile.c, cache
# watches, events.c), verb by verb.
RULES = [
    (["aj.dev"], ["ajjobs", "ajtemplates"], ["get", "list", "watch"]),
    # the finalizer and annotation of AjJobs forwarded to Azure; finished AjJobs
    # deleted after their ttlSecondsAfterFinished
    (["aj.dev"], ["ajjobs"], ["patch", "delete"]),
    (["aj.dev"], ["ajjobs/status"], ["get", "update", "patch"]),
    (["batch.volcano.sh"], ["jobs"], ["get", "list", "watch", "create", "delete"]),
    # the kube backend's Indexed Jobs and the headless Service created beside each
    (["batch"], ["jobs"], ["get", "list", "watch", "create", "delete"]),
    ([""], ["services"], ["create"]),
    (["events.k8s.io"], ["events"], ["create", "patch"]),
    # the storage Secret (controller/storage.c): written, never read
    ([""], ["secrets"], ["create", "patch"]),
    # controller/runner/volcano.c: the pods of a failed or cancelled job, why a job waits;
    # controller/controller.c: aj's pods watched (a failure recorded before the pod goes)
    ([""], ["pods"], ["list", "watch"]),
    (["scheduling.volcano.sh"], ["podgroups"], ["get"]),
    ([""], ["events"], ["list"]),
    # controller/runner/kube.c: what Kueue says of a queued Job (its Workload)
    (["kueue.x-k8s.io"], ["workloads"], ["get", "list", "watch"]),
]
# controller/placer.c: what limits a start, for placement AjJobs, listed cluster-wide whatever
# namespace is watched: in the controller's ClusterRole, or with a watched namespace in a
# ClusterRole of their own with the pods of every namespace (a Role cannot grant them).
PLACEMENT_RULES = [
    ([""], ["nodes"], ["list"]),
    (["scheduling.volcano.sh"], ["queues"], ["list"]),
    (["kueue.x-k8s.io"], ["clusterqueues", "localqueues", "resourceflavors"], ["list"]),
]
LEASE_RULES = [(["coordination.k8s.io"], ["leases"], ["get", "update"])]

failed = 0


def check(name, cond, detail=""):
    global failed
    if cond:
        print("ok   - " + name)
    else:
        failed += 1
        print("FAIL - " + name + (": " + detail if detail else ""))


def rules_of(obj):
    return [(r.get("apiGroups"), r.get("resources"), r.get("verbs")) for r in obj.get("rules", [])]


def main():
    profile, path = sys.argv[1], sys.argv[2]
    params = dict(a.split("=", 1) for a in sys.argv[3:])
    ns = params["namespace"]
    with open(path) as f:
        doc = json.load(f)
    items = doc["items"] if doc.get("kind") == "List" else [doc]
    by_kind = {}
    for o in items:
        by_kind.setdefault(o["kind"], []).append(o)

    def one(kind):
        objs = by_kind.get(kind, [])
        check("exactly one %s" % kind, len(objs) == 1, "found %d" % len(objs))
        return objs[0] if objs else {}

    dep = one("Deployment")
    spec = dep.get("spec", {})
    pod = spec.get("template", {}).get("spec", {})
    pod_labels = spec.get("template", {}).get("metadata", {}).get("labels", {})
    c = (pod.get("containers") or [{}])[0]
    args = c.get("args", [])
    psc, csc = pod.get("securityContext", {}), c.get("securityContext", {})

    # Every value set keeps the hardening.
    check("pods run as non-root", psc.get("runAsNonRoot") is True and psc.get("runAsUser", 0) > 0, str(psc))
    check("seccomp RuntimeDefault", psc.get("seccompProfile", {}).get("type") == "RuntimeDefault", str(psc))
    check("read-only root file system", csc.get("readOnlyRootFilesystem") is True, str(csc))
    check("no privilege escalation", csc.get("allowPrivilegeEscalation") is False, str(csc))
    check("all capabilities dropped", csc.get("capabilities", {}).get("drop") == ["ALL"], str(csc))
    port = next((p for p in c.get("ports", []) if p.get("name") == "http"), {})
    check("container port http is 8081", port.get("containerPort") == 8081, str(c.get("ports")))
    check("--health-port matches the container port", "--health-port=8081" in args, str(args))
    lp, rp = c.get("livenessProbe", {}).get("httpGet", {}), c.get("readinessProbe", {}).get("httpGet", {})
    check("liveness probe GET /healthz on http", lp.get("path") == "/healthz" and lp.get("port") == "http", str(lp))
    check("readiness probe GET /readyz on http", rp.get("path") == "/readyz" and rp.get("port") == "http", str(rp))
    res = c.get("resources", {})
    check("resources requested and memory limited",
          "cpu" in res.get("requests", {}) and "memory" in res.get("requests", {}) and "memory" in res.get("limits", {}),
          str(res))
    env = {e["name"]: e for e in c.get("env", [])}
    check("POD_NAME from the pod name (leader identity)",
          env.get("POD_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "metadata.name")
    check("entrypoint is aj-controller", c.get("command") == ["/usr/local/bin/aj-controller"], str(c.get("command")))
    sel = spec.get("selector", {}).get("matchLabels", {})
    check("the selector matches the pod labels", sel and all(pod_labels.get(k) == v for k, v in sel.items()))

    replicas = int(params["replicas"])
    check("replicas %d" % replicas, spec.get("replicas") == replicas, str(spec.get("replicas")))
    elect = replicas > 1 or params.get("elect") == "true"
    check("leader election %s" % ("on" if elect else "off"), ("--leader-elect" in args) == elect, str(args))
    if elect:
        check("the Lease lives in the release namespace", "--lease-namespace=" + ns in args, str(args))

    sa_name = params["sa"]
    sas = by_kind.get("ServiceAccount", [])
    check("ServiceAccount %s created" % sa_name, [s["metadata"]["name"] for s in sas] == [sa_name])
    check("the pods use it", pod.get("serviceAccountName") == sa_name, pod.get("serviceAccountName"))

    # RBAC: exactly the rules above, cluster-wide or in the watched namespace.
    watch = params.get("watch", "")
    role_kind = "Role" if watch else "ClusterRole"
    own = lambda o: not o["metadata"]["name"].endswith(("-leader-election", "-placement"))
    roles = [r for r in by_kind.get("Role", []) + by_kind.get("ClusterRole", []) if own(r)]
    check("one %s for the controller" % role_kind, [r["kind"] for r in roles] == [role_kind], str([r["kind"] for r in roles]))
    if roles:
        want = RULES if watch else RULES + PLACEMENT_RULES
        check("its rules are exactly what the controller uses", rules_of(roles[0]) == want, str(rules_of(roles[0])))
        if watch:
            check("the Role is in the watched namespace", roles[0]["metadata"].get("namespace") == watch)
    place = [r for r in by_kind.get("ClusterRole", []) if r["metadata"]["name"].endswith("-placement")]
    place_b = [b for b in by_kind.get("ClusterRoleBinding", []) if b["metadata"]["name"].endswith("-placement")]
    check("a placement ClusterRole exactly when a namespace is watched", bool(place) == bool(watch) and
          bool(place_b) == bool(watch), str([r["metadata"]["name"] for r in place + place_b]))
    if place:
        check("...listing the pods of every namespace and what limits a start, nothing more",
              rules_of(place[0]) == [([""], ["pods"], ["list"])] + PLACEMENT_RULES, str(rules_of(place[0])))
    if place_b:
        check("...bound to the ServiceAccount",
              place and place_b[0]["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                                  "name": place[0]["metadata"]["name"]} and
              place_b[0]["subjects"] == [{"kind": "ServiceAccount", "name": sa_name, "namespace": ns}],
              str(place_b[0].get("subjects")))
    bindings = [b for b in by_kind.get("RoleBinding", []) + by_kind.get("ClusterRoleBinding", []) if own(b)]
    if bindings:
        b = bindings[0]
        check("the binding grants it to the ServiceAccount",
              b["roleRef"]["kind"] == role_kind and roles and b["roleRef"]["name"] == roles[0]["metadata"]["name"] and
              b["subjects"] == [{"kind": "ServiceAccount", "name": sa_name, "namespace": ns}], str(b.get("subjects")))
    else:
        check("a binding for the controller's role", False)
    le = [r for r in by_kind.get("Role", []) if r["metadata"]["name"].endswith("-leader-election")]
    check("a leader-election Role exactly when electing", bool(le) == elect)
    if le:
        check("...granting only the Lease verbs", rules_of(le[0]) == LEASE_RULES, str(rules_of(le[0])))
        check("...in the release namespace", le[0]["metadata"].get("namespace") == ns)
    leases = by_kind.get("Lease", [])
    check("the release's Lease exactly when electing", len(leases) == (1 if elect else 0), str(len(leases)))
    if leases:
        check("...named as --lease-name, in the release namespace, with no spec (the controller's)",
              "--lease-name=" + leases[0]["metadata"]["name"] in args and
              leases[0]["metadata"].get("namespace") == ns and not leases[0].get("spec"),
              str(leases[0]["metadata"]))
    if watch:
        check("--namespace is the watched namespace", "--namespace=" + watch in args, str(args))
    else:
        check("watches all namespaces", not any(a.startswith("--namespace") for a in args), str(args))

    svc = by_kind.get("Service", [])
    want_svc = params.get("service", "true") == "true"
    check("metrics Service %s" % ("present" if want_svc else "absent"), bool(svc) == want_svc)
    if svc:
        sp = svc[0]["spec"]
        check("the Service selects the pods and targets http",
              all(pod_labels.get(k) == v for k, v in sp.get("selector", {}).items()) and
              sp["ports"][0].get("targetPort") == "http" and sp["ports"][0].get("name") == "metrics", str(sp))

    ttl = "86400" if profile == "namespaced" else "0"
    check("finished AjJobs deleted after %s s (0: kept)" % ttl,
          "--ttl-seconds-after-finished=" + ttl in args, str(args))
    if profile == "aks":
        ann = sas[0]["metadata"].get("annotations", {}) if sas else {}
        check("ServiceAccount annotated with the workload identity client id",
              ann.get("azure.workload.identity/client-id") == params["client_id"], str(ann))
        check("...and its tenant", ann.get("azure.workload.identity/tenant-id") == params["tenant_id"], str(ann))
        check("...keeping the user's annotations", ann.get("example.com/owner") == "ml-platform", str(ann))
        check("pods labelled azure.workload.identity/use=true", pod_labels.get("azure.workload.identity/use") == "true", str(pod_labels))
        check("image from the registry", c.get("image") == "myregistry.azurecr.io/aj:0.1.0", c.get("image"))
        pdb = by_kind.get("PodDisruptionBudget", [])
        check("PodDisruptionBudget with maxUnavailable 1",
              len(pdb) == 1 and pdb[0]["spec"].get("maxUnavailable") == 1 and "minAvailable" not in pdb[0]["spec"])
        sm = by_kind.get("ServiceMonitor", [])
        check("ServiceMonitor scraping the metrics port",
              len(sm) == 1 and sm[0]["spec"]["endpoints"][0]["port"] == "metrics" and
              sm[0]["metadata"]["labels"].get("release") == "prometheus")
        check("privileged pods only in the namespaces listed",
              "--privileged-namespaces=training,research" in args, str(args))
        check("Azure forwarding: default workspace",
              "--azure-workspace=00000000-1111-2222-3333-444444444444/ml-rg/ml-ws" in args, str(args))
        check("...and the namespace rules, one per namespace",
              "--azure-allow=training=workspace:00000000-1111-2222-3333-444444444444/ml-rg/ml-ws,vc:*/vc-rg/*;"
              "research=vc:00000000-1111-2222-3333-444444444444/vc-rg/vc-a" in args, str(args))
        check("...polled every 15 s", "--azure-poll=15" in args, str(args))
        check("storage SAS live 12 h", "--storage-sas-lifetime=43200" in args, str(args))
        check("...from the sovereign cloud's blob endpoint",
              "--azure-blob-endpoint=https://{account}.blob.core.usgovcloudapi.net" in args, str(args))
    else:
        check("no workload identity label", "azure.workload.identity/use" not in pod_labels)
        check("no privileged namespaces and no Azure forwarding",
              not any(a.startswith(("--privileged-namespaces", "--azure-")) for a in args), str(args))
        check("storage SAS live 24 h", "--storage-sas-lifetime=86400" in args, str(args))
        check("no PodDisruptionBudget or ServiceMonitor", not by_kind.get("PodDisruptionBudget") and not by_kind.get("ServiceMonitor"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
