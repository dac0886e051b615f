#!/usr/bin/env bash
# The control plane itself: version, readiness, the credentials in the env file.
source "$(dirname "$0")/lib.sh"

git_version() { "$@" | sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p' | head -1; }
expect_eq "server /version reports the pinned release" "$AJ_K8S_VERSION" git_version k get --raw /version
expect_eq "kubectl is the same release" "$AJ_K8S_VERSION" git_version k version --client -o json
expect_eq "/readyz with the admin client certificate" "ok" k get --raw /readyz
anon=("$AJ_KUBECTL" --kubeconfig=/dev/null --server "$AJ_KUBE_SERVER" --certificate-authority "$AJ_KUBE_CA")
expect_eq "bearer token from the env file is an admin" "yes" "${anon[@]}" --token "$AJ_KUBE_TOKEN" auth can-i '*' '*'
# Raw HTTPS without credentials (kubectl would ask for a password).
anonymous_get() {
  printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$1" |
    timeout 10 openssl s_client -quiet -verify_return_error -CAfile "$AJ_KUBE_CA" \
      -connect "127.0.0.1:$AJ_CP_APISERVER_PORT" 2>/dev/null | head -1 | tr -d '\r'
}
expect_eq "anonymous requests are forbidden" "HTTP/1.0 403 Forbidden" anonymous_get /api/v1/namespaces
# /proc/net/tcp{,6}: local address hex "0100007F:PORT" is 127.0.0.1; state 0A is LISTEN.
listen_addrs() { # port
  local hexport
  hexport=$(printf '%04X' "$1")
  awk -v p="$hexport" 'FNR > 1 && $4 == "0A" { split($2, a, ":"); if (a[2] == p) print a[1] }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null | sort -u | tr '\n' ' ' | sed 's/ $//'
}
expect_eq "API server listens on 127.0.0.1 only" "0100007F" listen_addrs "$AJ_CP_APISERVER_PORT"
expect_eq "etcd listens on 127.0.0.1 only" "0100007F" listen_addrs "$AJ_CP_ETCD_PORT"
ns=$(new_namespace sa)
expect_ok "service account token via TokenRequest" bash -c \
  "'$AJ_KUBECTL' create serviceaccount -n '$ns' ctl >/dev/null && '$AJ_KUBECTL' create token -n '$ns' ctl --duration=10m | grep -q '^ey'"
finish
