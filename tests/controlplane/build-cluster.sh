#!/usr/bin/env bash
# Build (or reuse) the cluster's peers beside the control plane: Volcano's vc-controller-manager,
# vc-scheduler and vc-webhook-manager from the Volcano source archive, and kwok (simulated nodes and
# pods) from the Go module proxy. Each is cached by version; Go builds run one at a time.
#
# Usage: tests/controlplane/build-cluster.sh [volcano] [kwok]      (default: both)
# Output: $XDG_CACHE_HOME/aj/volcano/<version>/{bin,crd,installer} and $XDG_CACHE_HOME/aj/kwok/<version>/bin
#         (root override: AJ_TOOLS_CACHE). Prints "name dir" for each on stdout.
# Environment: AJ_VOLCANO_SRC  the archive (default: ../shared/volcano/volcano-src.tar.gz beside the repo)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
root=$(cd "$cp_here/../.." && pwd)

fail() { echo "build-cluster.sh: $*" >&2; exit 1; }
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-buildvcs=false"

volcano() {
  local src ver sha want out stage log t0
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
  mkdir -p "$out"
  log=$out/build.log
  cp_go_lock "Volcano $ver" "$log"
  : >"$log"
  why=$(cp_need_go 1.26.0 "Volcano $ver") || fail "$why"
  stage=$(mktemp -d "$out/.stage.XXXXXX")
  trap 'rm -rf "$stage"' EXIT
  t0=$(date +%s)
  echo "build-cluster.sh: building Volcano $ver into $out (log: $log)" >&2
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
  local ver out stage log t0
  ver=$(tr -d '[:space:]' <"$cp_here/KWOK_VERSION")
  out=$(aj_cache_root)/kwok/$ver
  if [[ -x $out/bin/kwok && $(cat "$out/stamp" 2>/dev/null) == "$ver" ]]; then
    echo "build-cluster.sh: kwok $ver up to date in $out" >&2
    echo "kwok $out"
    return
  fi
  mkdir -p "$out"
  log=$out/build.log
  cp_go_lock "kwok $ver" "$log"
  : >"$log"
  why=$(cp_need_go 1.26.0 "kwok $ver") || fail "$why"
  stage=$(mktemp -d "$out/.stage.XXXXXX")
  trap 'rm -rf "$stage"' EXIT
  t0=$(date +%s)
  echo "build-cluster.sh: building kwok $ver into $out (log: $log)" >&2
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

what=("$@")
((${#what[@]})) || what=(volcano kwok)
for w in "${what[@]}"; do
  case $w in
    volcano) volcano ;;
    kwok) kwok ;;
    *) fail "unknown component '$w' (volcano, kwok)" ;;
  esac
done
