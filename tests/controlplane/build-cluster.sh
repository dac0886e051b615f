#!/usr/bin/env bash
# Build (or reuse) the cluster's peers beside the control plane: Volcano's vc-controller-manager,
# vc-scheduler and vc-webhook-manager from the Volcano source archive, and kwok (simulated nodes and
# pods) and Kueue (the queue manager for batch/v1 Jobs) from the Go module proxy. Each is cached by
# version; Go builds run one at a time.
#
# Usage: tests/controlplane/build-cluster.sh [volcano] [kwok] [kueue]      (default: all three)
# Output: $XDG_CACHE_HOME/aj/volcano/<version>/{bin,crd,installer}, $XDG_CACHE_HOME/aj/kwok/<version>/bin
#         and $XDG_CACHE_HOME/aj/kueue/<version>/{bin,crd,webhook}
#         (root override: AJ_TOOLS_CACHE). Prints "name dir" for each on stdout.
# Environment: AJ_VOLCANO_SRC  the archive (default: ../shared/volcano/volcano-src.tar.gz beside the repo)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
root=$(cd "$cp_here/../.." && pwd)

fail() { echo "build-cluster.sh: $*" >&2; exit 1; }
stage=   # the build in progress, removed on exit
trap 'rm -rf "$stage"' EXIT
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-buildvcs=false"

# begin WHAT OUT: take the Go build lock, check Go, and set log, stage (a fresh directory in OUT)
# and t0 for the build that follows.
begin() {
  mkdir -p "$2"
  log=$2/build.log
  cp_go_lock "$1" "$log"
  : >"$log"
  why=$(cp_need_go 1.26.0 "$1") || fail "$why"
  stage=$(mktemp -d "$2/.stage.XXXXXX")
  t0=$(date +%s)
  echo "build-cluster.sh: building $1 into $2 (log: $log)" >&2
}

volcano() {
  local src ver sha want out
  ver=$(sed -n 's/^version=//p' "$cp_here/VOLCANO")
  want=$(sed -n 's/^sha256=//p' "$cp_here/VOLCANO")
  out=$(aj_cache_root)/volcano/$ver
  if [[ -x $out/bin/vc-controller-manager && -x $out/bin/vc-scheduler && -x $out/bin/vc-webhook-manager &&
        $(cat "$out/stamp" 2>/dev/null) == "$want" ]]; then
    echo "build-cluster.sh: Volcano $ver up to date in $out" >&2
    echo "volcano $out"
    return
  fi
  src=${AJ_VOLCANO_SRC:-$root/../shared/volcano/volcano-src.tar.gz}
  [[ -f $src ]] || fail "no Volcano source archive at $src (set AJ_VOLCANO_SRC to volcano-src.tar.gz)"
  sha=$(sha256sum "$src" | cut -d' ' -f1)
  [[ $sha == "$want" ]] || fail "$src has sha256 $sha, expected $want (tests/controlplane/VOLCANO)"
  begin "Volcano $ver" "$out"
  tar -xzf "$src" -C "$stage" || fail "cannot extract $src"
  (cd "$stage" && go mod download) >>"$log" 2>&1 || fail "$(cp_go_cause "$log" 'module download (Volcano)')"
  echo "build-cluster.sh: compiling vc-controller-manager, vc-scheduler, vc-webhook-manager (log: $log)" >&2
  local v=volcano.sh/volcano/pkg/version
  (cd "$stage" && cp_run_logged "$log" "compiling Volcano" go build -trimpath -o "$stage/out/" \
      -ldflags "-s -w -X $v.Version=$ver -X $v.GitSHA=$(sed -n 's/^commit=//p' "$cp_here/VOLCANO") -X $v.Built=1970-01-01T00:00:00Z" \
      ./cmd/controller-manager ./cmd/scheduler ./cmd/webhook-manager) ||
    fail "$(cp_go_cause "$log" 'go build Volcano')"
  rm -rf "$out/crd" "$out/installer"
  mkdir -p "$out/crd"
  cp -r "$stage/config/crd/volcano/bases" "$out/crd/volcano"
  cp -r "$stage/config/crd/jobflow/bases" "$out/crd/jobflow"
  mkdir -p "$out/installer"
  cp "$stage/installer/volcano-development.yaml" "$out/installer/"
  mkdir -p "$stage/bin"
  for b in controller-manager scheduler webhook-manager; do mv "$stage/out/$b" "$stage/bin/vc-$b"; done
  rm -rf "$out/bin"
  mv "$stage/bin" "$out/bin"
  rm -rf "$stage"
  echo "$want" >"$out/stamp"
  echo "build-cluster.sh: built Volcano $ver in $(($(date +%s) - t0)) s" >&2
  echo "volcano $out"
}

kwok() {
  local ver out
  ver=$(tr -d '[:space:]' <"$cp_here/KWOK_VERSION")
  out=$(aj_cache_root)/kwok/$ver
  if [[ -x $out/bin/kwok && $(cat "$out/stamp" 2>/dev/null) == "$ver" ]]; then
    echo "build-cluster.sh: kwok $ver up to date in $out" >&2
    echo "kwok $out"
    return
  fi
  begin "kwok $ver" "$out"
  (cd "$stage" && GOBIN=$stage cp_run_logged "$log" "compiling kwok" \
      go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$ver") ||
    fail "$(cp_go_cause "$log" "go install sigs.k8s.io/kwok/cmd/kwok@$ver")"
  chmod 755 "$stage"
  rm -rf "$out/bin"
  mv "$stage" "$out/bin"
  echo "$ver" >"$out/stamp"
  echo "build-cluster.sh: built kwok $ver in $(($(date +%s) - t0)) s" >&2
  echo "kwok $out"
}

# Kueue's manager from its release module (no replace directives, so `go install mod@version`
# builds it as released), with its CRDs and webhook configurations from the same module.
kueue() {
  local ver out mod
  ver=$(tr -d '[:space:]' <"$cp_here/KUEUE_VERSION")
  out=$(aj_cache_root)/kueue/$ver
  if [[ -x $out/bin/kueue && -f $out/webhook/manifests.yaml && $(cat "$out/stamp" 2>/dev/null) == "$ver" ]]; then
    echo "build-cluster.sh: Kueue $ver up to date in $out" >&2
    echo "kueue $out"
    return
  fi
  begin "Kueue $ver" "$out"
  mod=$(cd "$stage" && GOFLAGS=-mod=mod go mod download -json "sigs.k8s.io/kueue@$ver" 2>>"$log" |
        sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
  [[ -d $mod/config/components/crd/bases ]] || fail "$(cp_go_cause "$log" "module download sigs.k8s.io/kueue@$ver")"
  (cd "$stage" && GOBIN=$stage/bin cp_run_logged "$log" "compiling Kueue" \
      go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kueue/cmd/kueue@$ver") ||
    fail "$(cp_go_cause "$log" "go install sigs.k8s.io/kueue/cmd/kueue@$ver")"
  cp -r "$mod/config/components/crd/bases" "$stage/crd"
  mkdir -p "$stage/webhook"
  cp "$mod/config/components/webhook/manifests.yaml" "$stage/webhook/"
  chmod -R u+w,go-w "$stage"
  rm -rf "$out/bin" "$out/crd" "$out/webhook"
  mv "$stage/bin" "$stage/crd" "$stage/webhook" "$out/"
  rm -rf "$stage"
  echo "$ver" >"$out/stamp"
  echo "build-cluster.sh: built Kueue $ver in $(($(date +%s) - t0)) s" >&2
  echo "kueue $out"
}

what=("$@")
((${#what[@]})) || what=(volcano kwok kueue)
for w in "${what[@]}"; do
  case $w in
    volcano) volcano ;;
    kwok) kwok ;;
    kueue) kueue ;;
    *) fail "unknown component '$w' (volcano, kwok, kueue)" ;;
  esac
done
