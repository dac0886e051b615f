#!/usr/bin/env bash
# Build (or reuse) the pinned helm from the Go module proxy.
#
# Usage: tests/helm/build-helm.sh [--no-build] [v3.X.Y]   (default: tests/helm/HELM_VERSION)
#   --no-build   only print the path of an existing build; fail if there is none
# Output: <control-plane cache>/helm/<version>/bin/helm, next to the control plane
#         binaries (root: AJ_CONTROLPLANE_CACHE, else $XDG_CACHE_HOME/aj/controlplane).
#         Prints the helm path last. Nothing is rebuilt when it exists.
# helm's go.mod has no replace lines, so `go install module@version` builds it, and
# go.sum plus the checksum database pin every dependency.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../controlplane/lib.sh"

no_build=0
if [[ ${1:-} == --no-build ]]; then no_build=1; shift; fi
ver=${1:-$(tr -d '[:space:]' <"$here/HELM_VERSION")}
fail() { echo "build-helm.sh: $*; retry: tests/helm/build-helm.sh $ver" >&2; exit 1; }
[[ $ver =~ ^v3\.[0-9]+\.[0-9]+$ ]] || fail "'$ver' is not a helm 3 release tag like v3.21.4"

out=$(cp_cache_root)/helm/$ver
bin=$out/bin/helm
up_to_date() { [[ -x $bin ]] && "$bin" version --short 2>/dev/null | grep -q "^$ver"; }
cp_use_cached build-helm.sh "helm $ver" "$bin" "$no_build" "tests/helm/build-helm.sh $ver"
command -v go >/dev/null || fail "go is not installed"
mkdir -p "$out"
log=$out/build.log
cp_go_lock "helm $ver" "$log"
if up_to_date; then echo "$bin"; exit 0; fi

stage=$(mktemp -d "$out/.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
# The Kubernetes version helm assumes without a cluster (helm template, helm lint) is
# set at link time; name the one its client-go release speaks. --kube-version still wins.
k8s_minor=36
ld="-s -w -X helm.sh/helm/v3/internal/version.version=$ver -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  ld+=" -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$k8s_minor"
done
start=$(date +%s)
echo "build-helm.sh: building helm $ver (log: $log)" >&2
: >"$log"
GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOBIN=$stage \
  cp_run_logged "$log" "compiling helm" go install -trimpath -ldflags "$ld" "helm.sh/helm/v3/cmd/helm@$ver" ||
  fail "go install failed: $(grep -m1 -v '^go: downloading' "$log" | cut -c1-200) (full log: $log)"
got=$("$stage/helm" version --short) || fail "the built helm does not run"
[[ $got == "$ver"* ]] || fail "the built helm reports '$got', expected $ver"
mkdir -p "$out/bin"
mv "$stage/helm" "$bin"
echo "build-helm.sh: built helm $ver in $(($(date +%s) - start)) s" >&2
echo "$bin"
