#!/usr/bin/env bash
# Build (or reuse) the cluster's peers beside the control plane: Volcano's vc-controller-manager,
# vc-scheduler and vc-webhook-manager from Volcano's source, and kwok (simulated nodes and pods)
# and Kueue (the queue manager for batch/v1 Jobs) from the Go module proxy. Each is cached by
# version; Go builds run one at a time.
#
# Usage: tests/controlplane/build-cluster.sh [volcano] [kwok] [kueue] [volcano-src]
#        (default: volcano kwok kueue); volcano-src only fetches and checks the source (no Go build).
# Output: $XDG_CACHE_HOME/aj/volcano/<version>/{bin,crd,installer}, $XDG_CACHE_HOME/aj/kwok/<version>/bin
#         and $XDG_CACHE_HOME/aj/kueue/<version>/{bin,crd,webhook}
#         (root override: AJ_TOOLS_CACHE). Prints "name dir" for each on stdout (volcano-src: the
#         checked source archive, cached as volcano/src/<commit>.tar.gz).
# Volcano's source, the first there of: $AJ_VOLCANO_SRC (an archive); ../shared/volcano/volcano-src.tar.gz
# beside the repository (this project's machines); the copy cached by commit; a download of
# $AJ_VOLCANO_URL (default: GitHub's archive of the pinned commit). Whichever it is must have the
# content digest pinned in tests/controlplane/VOLCANO.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
root=$(cd "$cp_here/../.." && pwd)

fail() { echo "build-cluster.sh: $*" >&2; exit 1; }
stage=   # the build in progress, removed on exit
tree=    # Volcano's checked source tree, removed on exit
dl=      # a download in progress, removed on exit
trap 'rm -rf "$stage" "$tree" "$dl"' EXIT
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

pin() { sed -n "s/^$1=//p" "$cp_here/VOLCANO"; }

# volcano_unpack ARCHIVE: extract the pinned paths of ARCHIVE (at its top, or under GitHub's
# volcano-<commit>/) into a fresh $tree and check their content digest; on failure set why.
volcano_unpack() {
  local a=$1 commit first prefix= strip=0 p err members=()
  commit=$(pin commit)
  first=$(tar -tzf "$a" 2>/dev/null | head -1 || true)
  [[ -n $first ]] || { why="not a tar.gz archive"; return 1; }
  [[ $first == "volcano-$commit/"* ]] && prefix=volcano-$commit/ strip=1
  for p in $(pin paths); do members+=("$prefix$p"); done
  rm -rf "$tree"
  tree=$(mktemp -d "$(aj_cache_root)/volcano/src/.tree.XXXXXX")
  if ! err=$(tar -xzf "$a" -C "$tree" --strip-components=$strip "${members[@]}" 2>&1); then
    why="not Volcano's source tree of commit $commit ($(head -1 <<<"$err"))"
    return 1
  fi
  # shellcheck disable=SC2046 # the pinned paths are words
  p=$(cd "$tree" && find $(pin paths) ! -type f ! -type d | head -1)
  [[ -z $p ]] || { why="it holds $p, which is not a regular file"; return 1; }
  # shellcheck disable=SC2046
  p=$(cd "$tree" && find $(pin paths) -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
  [[ $p == "$(pin content)" ]] ||
    { why="its content digest is $p, expected $(pin content) (Volcano commit $commit, tests/controlplane/VOLCANO)"; return 1; }
}

# volcano_source: leave the pinned source in $tree, taken from the first of the places the header
# names, and keep a copy by commit for the next run. One line on failure.
volcano_source() {
  local commit cached shared url why
  commit=$(pin commit)
  cached=$(aj_cache_root)/volcano/src/$commit.tar.gz
  shared=$root/../shared/volcano/volcano-src.tar.gz
  url=${AJ_VOLCANO_URL:-https://github.com/volcano-sh/volcano/archive/$commit.tar.gz}
  mkdir -p "$(dirname "$cached")"
  if [[ -n ${AJ_VOLCANO_SRC:-} ]]; then
    [[ -f $AJ_VOLCANO_SRC ]] || fail "no Volcano source archive at $AJ_VOLCANO_SRC (AJ_VOLCANO_SRC)"
    volcano_unpack "$AJ_VOLCANO_SRC" || fail "$AJ_VOLCANO_SRC (AJ_VOLCANO_SRC) is refused: $why"
  elif [[ -f $shared ]]; then
    volcano_unpack "$shared" || fail "$shared is refused: $why"
  elif [[ -f $cached ]] && volcano_unpack "$cached"; then
    echo "build-cluster.sh: Volcano's source from the cached $cached" >&2
    return
  else
    if [[ -f $cached ]]; then
      echo "build-cluster.sh: discarding the cached $cached: $why" >&2
      rm -f "$cached"
    fi
    echo "build-cluster.sh: downloading Volcano's source from $url" >&2
    dl=$(mktemp "$(dirname "$cached")/.download.XXXXXX")
    why=$(curl -fsSL --connect-timeout 30 --retry 2 -o "$dl" "$url" 2>&1) ||
      fail "no Volcano source: no ../shared/volcano/volcano-src.tar.gz, no cached copy, and $url failed (${why:0:160}); provide an archive of Volcano commit $commit as AJ_VOLCANO_SRC=FILE or AJ_VOLCANO_URL=URL"
    volcano_unpack "$dl" || fail "the download of $url is refused: $why"
    rm -f "$dl"
  fi
  # The cached copy holds the checked paths alone, in a reproducible archive.
  # shellcheck disable=SC2046
  (cd "$tree" && tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - $(pin paths)) |
    gzip -n >"$cached.tmp.$$" && mv "$cached.tmp.$$" "$cached"
}

volcano_src() {
  volcano_source
  echo "volcano-src $(aj_cache_root)/volcano/src/$(pin commit).tar.gz"
}

volcano() {
  local ver want out
  ver=$(pin version)
  want=$(pin content)
  out=$(aj_cache_root)/volcano/$ver
  # A stamp holds the content digest built from (or, before it existed, the subset archive's sha256).
  if [[ -x $out/bin/vc-controller-manager && -x $out/bin/vc-scheduler && -x $out/bin/vc-webhook-manager ]] &&
     grep -qxF -e "$want" -e "$(pin sha256)" "$out/stamp" 2>/dev/null; then
    echo "build-cluster.sh: Volcano $ver up to date in $out" >&2
    echo "volcano $out"
    return
  fi
  volcano_source
  begin "Volcano $ver" "$out"
  (cd "$tree" && go mod download) >>"$log" 2>&1 || fail "$(cp_go_cause "$log" 'module download (Volcano)')"
  echo "build-cluster.sh: compiling vc-controller-manager, vc-scheduler, vc-webhook-manager (log: $log)" >&2
  local v=volcano.sh/volcano/pkg/version
  (cd "$tree" && cp_run_logged "$log" "compiling Volcano" go build -trimpath -o "$stage/out/" \
      -ldflags "-s -w -X $v.Version=$ver -X $v.GitSHA=$(pin commit) -X $v.Built=1970-01-01T00:00:00Z" \
      ./cmd/controller-manager ./cmd/scheduler ./cmd/webhook-manager) ||
    fail "$(cp_go_cause "$log" 'go build Volcano')"
  rm -rf "$out/crd" "$out/installer"
  mkdir -p "$out/crd"
  cp -r "$tree/config/crd/volcano/bases" "$out/crd/volcano"
  cp -r "$tree/config/crd/jobflow/bases" "$out/crd/jobflow"
  mkdir -p "$out/installer"
  cp "$tree/installer/volcano-development.yaml" "$out/installer/"
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
    volcano-src) volcano_src ;;
    *) fail "unknown component '$w' (volcano, kwok, kueue, volcano-src)" ;;
  esac
done
