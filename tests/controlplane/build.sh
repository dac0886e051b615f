#!/usr/bin/env bash
# Build (or reuse) kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and etcd for one
# pinned Kubernetes release.
#
# Usage: tests/controlplane/build.sh [--kubelet] [vX.Y.Z]     (default: tests/controlplane/VERSION)
# Output: $XDG_CACHE_HOME/aj/controlplane/<version>/bin/{kube-apiserver,kube-controller-manager,
#         kube-scheduler,kubectl,etcd}
#         (override the root with AJ_CONTROLPLANE_CACHE). Prints the bin directory last.
#         With --kubelet: the real node's kubelet, from the wrapper module versions/<version>/kubelet,
#         into $XDG_CACHE_HOME/aj/kubelet/<version>/bin/kubelet (a stamp of its own: building it
#         never relinks the control plane).
# Nothing is rebuilt when the binaries exist and were built from the committed go.mod/go.sum.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

kubelet=0
[[ ${1:-} == --kubelet ]] && { kubelet=1; shift; }
ver=$(cp_version "${1:-}")
retry="retry: tests/controlplane/build.sh $ver"
((kubelet)) && retry="retry: tests/controlplane/build.sh --kubelet $ver"
fail() { echo "build.sh: $*; $retry" >&2; exit 1; }

[[ $ver =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || fail "'$ver' is not a Kubernetes release tag like v1.37.2"
minor=${BASH_REMATCH[1]}
if ((kubelet)); then
  what="kubelet $ver"
  kmod=$cp_here/versions/$ver/kubelet
  emod=
  out=$(aj_cache_root)/kubelet/$ver
  bins=()
else
  what="control plane $ver"
  kmod=$cp_here/versions/$ver/kubernetes
  emod=$cp_here/versions/$ver/etcd
  out=$(cp_cache_root)/$ver
  bins=(etcd)
fi
for m in "$kmod" $emod; do
  [[ -f $m/go.mod && -f $m/go.sum ]] ||
    fail "no wrapper module $(basename "$m") for $ver under tests/controlplane/versions (generate it: tests/controlplane/gen-modules.sh $ver $(basename "$m"))"
done

bin=$out/bin
# Every command in the wrapper's tool block (plus etcd for the control plane).
# (a block, or one `tool X` line as go mod tidy writes a single tool)
mapfile -t kcmds < <(awk '/^tool[[:space:]]*\(/{t=1;next} t&&/^\)/{t=0} t{print $1} /^tool[[:space:]]+[^(]/{print $2}' "$kmod/go.mod")
for c in "${kcmds[@]}"; do bins+=("${c##*/}"); done
stamp_want=$(cat "$kmod/go.mod" "$kmod/go.sum" ${emod:+"$emod/go.mod" "$emod/go.sum"} | sha256sum | cut -c1-16)

up_to_date() {
  local b
  for b in "${bins[@]}"; do [[ -x $bin/$b ]] || return 1; done
  [[ -f $out/stamp ]] &&
    [[ $(cat "$out/stamp") == "$stamp_want" ]]
}

if up_to_date; then
  echo "build.sh: $what up to date in $bin"
  echo "$bin"
  exit 0
fi

mkdir -p "$out"
cp_go_lock "$what" "$out/build.log"
if up_to_date; then
  echo "build.sh: $what up to date in $bin (built by a concurrent run)"
  echo "$bin"
  exit 0
fi
for m in "$kmod" $emod; do
  why=$(cp_need_go "$(sed -n 's/^go //p' "$m/go.mod")" "$(basename "$m") for $ver") || fail "$why"
done

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false"
stage=$(mktemp -d "$out/.stage.XXXXXX")
log=$out/build.log
: >"$log"
trap 'rm -rf "$stage"' EXIT

start=$(date +%s)
echo "build.sh: building $what into $bin (log: $log)" >&2

vpkgs="k8s.io/component-base/version k8s.io/client-go/pkg/version"
ld="-s -w"
for p in $vpkgs; do
  ld+=" -X $p.gitVersion=$ver -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  ld+=" -X $p.buildDate=1970-01-01T00:00:00Z"
done

( cd "$kmod" && go mod download ) >>"$log" 2>&1 || fail "$(cp_go_cause "$log" 'module download (kubernetes)')"
if [[ -n $emod ]]; then
  ( cd "$emod" && go mod download ) >>"$log" 2>&1 || fail "$(cp_go_cause "$log" 'module download (etcd)')"
fi
t_dl=$(date +%s)

if [[ -n $emod ]]; then
  ( cd "$emod" && cp_run_logged "$log" "compiling etcd" go build -trimpath -ldflags "-s -w" -o "$stage/etcd" go.etcd.io/etcd/server/v3 ) ||
    fail "$(cp_go_cause "$log" 'go build etcd')"
fi
names="${kcmds[*]##*/}"
echo "build.sh: compiling $names (the slow step on a cold cache; log: $log)" >&2
( cd "$kmod" && cp_run_logged "$log" "compiling $names" go build -trimpath -ldflags "$ld" -o "$stage/" "${kcmds[@]}" ) ||
  fail "$(cp_go_cause "$log" "go build $names")"

first=${kcmds[0]##*/}
got=$("$stage/$first" --version 2>/dev/null | awk '{print $2}')
[[ $got == "$ver" ]] || fail "built $first reports '$got', expected $ver"

rm -rf "$bin"
chmod 755 "$stage"
mv "$stage" "$bin"
echo "$stamp_want" >"$out/stamp"
end=$(date +%s)
echo "build.sh: built $what in $((end - start)) s (downloads $((t_dl - start)) s, compile $((end - t_dl)) s): $("$bin/${bins[0]}" --version | head -1)" >&2
echo "$bin"
