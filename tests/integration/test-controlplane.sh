#!/usr/bin/env bash
# The control plane itself: version, readiness, the credentials in the env file.
source "$(dirname "$0")/lib.sh"

git_version() { "$@" | sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p' | head -1; }
expect_eq "server /version reports the pinned release" "$AJ_K8S_VERSION" git_version k get --raw /version
expect_eq "kubectl is the same release" "$AJ_K8S_VERSION" git_version k version --client -o json
expect_eq "/readyz with the client certificate" "ok" \
  curl -fsS --cacert "$AJ_KUBE_CA" --cert "$AJ_KUBE_CLIENT_CERT" --key "$AJ_KUBE_CLIENT_KEY" "$AJ_KUBE_SERVER/readyz"
expect_eq "bearer token is an admin" "yes" \
  k --kubeconfig=/dev/null --server "$AJ_KUBE_SERVER" --certificate-authority "$AJ_KUBE_CA" --token "$AJ_KUBE_TOKEN" auth can-i '*' '*'
expect_eq "anonymous requests are forbidden" "403" \
  curl -sS --cacert "$AJ_KUBE_CA" "$AJ_KUBE_SERVER/api/v1/namespaces" -o /dev/null -w '%{http_code}'
expect_eq "listens on 127.0.0.1 only" "127.0.0.1:$AJ_CP_APISERVER_PORT" \
  bash -c "ss -Hltn 'sport = :$AJ_CP_APISERVER_PORT' | awk '{print \$4}' | sort -u"
ns=$(new_namespace sa)
expect_ok "service account token via TokenRequest" bash -c \
  "'$AJ_KUBECTL' create serviceaccount -n '$ns' ctl >/dev/null && '$AJ_KUBECTL' create token -n '$ns' ctl --duration=10m | grep -q '^ey'"
finish
