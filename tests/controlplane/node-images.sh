#!/usr/bin/env bash
# Build (or reuse) the real node's two images as docker-archives, without a registry:
#   pause    Kubernetes' own pause (build/pause/linux/pause.c of the k8s.io/kubernetes module at the
#            control plane's version), compiled statically with cc: the pod sandbox image
#   runtime  a Debian minbase with bash, coreutils, tar and python3 (scripts/debian-image.sh, which
#            caches its root file system by content): what aj's pods on the real nodes run
#            (AJ_LOCAL_IMAGE)
#
# Usage: tests/controlplane/node-images.sh [vX.Y.Z]
# Output: one line per image, "pause NAME ARCHIVE" and "runtime NAME ARCHIVE", under <aj cache>/images.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
root=$(cd "$cp_here/../.." && pwd)
die() { echo "node-images.sh: $*" >&2; exit 1; }

ver=$(cp_version "${1:-}")
dir=$(aj_cache_root)/images
mkdir -p "$dir"

# --- pause: the source file from the module cache (the kubelet's build downloads it anyway) ---
mod=$cp_here/versions/$ver/kubelet
[[ -f $mod/go.mod ]] || die "no wrapper module kubelet for $ver (generate it: tests/controlplane/gen-modules.sh $ver kubelet)"
src=$(cd "$mod" && GOFLAGS=-mod=readonly GOTOOLCHAIN=local go list -m -f '{{.Dir}}' k8s.io/kubernetes 2>/dev/null) || src=
if [[ -z $src || ! -f $src/build/pause/linux/pause.c ]]; then
  src=$(cd "$mod" && GOFLAGS=-mod=readonly GOTOOLCHAIN=local go mod download -json k8s.io/kubernetes 2>&1 |
        sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p') || true
fi
pause_c=${src:+$src/build/pause/linux/pause.c}
[[ -n $pause_c && -f $pause_c ]] ||
  die "cannot get k8s.io/kubernetes $ver's build/pause/linux/pause.c from the Go module proxy ($(go env GOPROXY))"
tag=$(sed -n 's/^TAG ?= *//p' "$src/build/pause/Makefile")
[[ -n $tag ]] || die "no TAG in $src/build/pause/Makefile"
pause_name=localhost/aj/pause:$tag
command -v cc >/dev/null || die "no C compiler (run: scripts/install-deps.sh)"
key=$(cat "$pause_c" "$0" "$root/scripts/docker-archive.py" <(cc --version | head -1) | sha256sum | cut -c1-16)
pause_tar=$dir/pause-$key.tar
if [[ ! -s $pause_tar ]]; then
  stage=$(mktemp -d "$dir/.pause.XXXXXX")
  trap 'rm -rf "$stage"' EXIT
  mkdir -p "$stage/rootfs"
  # The flags of its Makefile: a static binary alone in the image.
  cc -Os -Wall -Werror -static -DVERSION="v$tag-aj" -o "$stage/rootfs/pause" "$pause_c" 2>"$stage/cc.log" ||
    die "cc could not build $pause_c: $(head -n 1 "$stage/cc.log")"
  tar --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$stage/rootfs" -cf "$stage/layer.tar" pause
  python3 "$root/scripts/docker-archive.py" "$stage/image.tar" "$stage/layer.tar" --tag "$pause_name" --cmd /pause ||
    die "could not write the pause image"
  mv "$stage/image.tar" "$pause_tar"
  echo "node-images.sh: built $pause_name from $pause_c" >&2
fi
echo "pause $pause_name $pause_tar"

# --- runtime: Debian with what aj's pod scripts and the tests' programs use ---
suite=${AJ_DEBIAN_SUITE:-$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-bookworm}")}
runtime_name=localhost/aj/runtime:${suite:-bookworm}
runtime_tar=$dir/runtime-${suite:-bookworm}.tar
# (its own file first: clusters starting at once each write one)
"$root/scripts/debian-image.sh" --suite "${suite:-bookworm}" --packages bash,coreutils,tar,python3 \
  --tag "$runtime_name" --out "$runtime_tar.$$" || die "the runtime image could not be made (see the line above)"
mv -f "$runtime_tar.$$" "$runtime_tar"
echo "runtime $runtime_name $runtime_tar"
