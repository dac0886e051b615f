#!/usr/bin/env bash
# A Debian image made from Debian's packages alone (mmdebstrap --variant=minbase plus PACKAGE...),
# written as a docker-archive (for `ctr images import`, `buildah pull docker-archive:FILE`,
# `docker load`), cached by content: no engine and no registry.
#
# Usage: scripts/debian-image.sh NAME:TAG [PACKAGE...]
#   Prints the archive's path on the last line of stdout (progress on stderr).
# Environment:
#   AJ_DEBIAN_SUITE     the suite (default: this machine's Debian codename, else bookworm)
#   AJ_DEBIAN_MIRROR    the archive (default http://deb.debian.org/debian)
#   AJ_DEBIAN_SNAPSHOT  build from snapshot.debian.org at this time (YYYYMMDDTHHMMSSZ) instead
# Cache: <aj cache>/images/debian-<key>.tar (override the root with AJ_TOOLS_CACHE), where the key
# is a digest of the name, suite, mirror, snapshot date, architecture, sorted package list and this
# recipe. The snapshot date is AJ_DEBIAN_SNAPSHOT, else the Date of this machine's apt lists of the
# suite (what `apt-get update` last saw; today's date when there are none): a later `apt-get
# update` makes the next image anew, a warm run needs no network.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../tests/controlplane/lib.sh"
die() { echo "debian-image.sh: $*" >&2; exit 1; }

name=${1:?usage: scripts/debian-image.sh NAME:TAG [PACKAGE...]}
shift
[[ $name == *:* ]] || die "image name '$name' has no :TAG"
mapfile -t pkgs < <(printf '%s\n' "$@" | sed '/^$/d' | sort -u)
for p in "${pkgs[@]}"; do
  [[ $p =~ ^[a-z0-9][a-z0-9.+-]*$ ]] || die "'$p' is not a Debian package name"
done
command -v mmdebstrap >/dev/null || die "mmdebstrap is not installed (run: scripts/install-deps.sh --test)"

suite=${AJ_DEBIAN_SUITE:-}
[[ -n $suite ]] || suite=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
[[ -n $suite ]] || suite=bookworm
arch=$(dpkg --print-architecture)
if [[ -n ${AJ_DEBIAN_SNAPSHOT:-} ]]; then
  [[ $AJ_DEBIAN_SNAPSHOT =~ ^[0-9]{8}T[0-9]{6}Z$ ]] || die "AJ_DEBIAN_SNAPSHOT '$AJ_DEBIAN_SNAPSHOT' is not like 20250101T000000Z"
  snapshot=$AJ_DEBIAN_SNAPSHOT
  mirror=https://snapshot.debian.org/archive/debian/$snapshot
else
  mirror=${AJ_DEBIAN_MIRROR:-http://deb.debian.org/debian}
  lists=(/var/lib/apt/lists/*_dists_"${suite}"_InRelease)
  snapshot=
  [[ -f ${lists[0]} ]] && snapshot=$(sed -n 's/^Date: //p' "${lists[0]}" | head -1)
  [[ -n $snapshot ]] && snapshot=$(date -u -d "$snapshot" +%Y%m%dT%H%M%SZ 2>/dev/null || echo "$snapshot")
  [[ -n $snapshot ]] || snapshot=$(date -u +%Y%m%d)
fi

recipe=$(cat "$0" "$here/docker-archive.py" | sha256sum | cut -c1-16)
key=$(printf '%s\n' "$name" "$suite" "$mirror" "$snapshot" "$arch" "$recipe" "${pkgs[@]}" | sha256sum | cut -c1-16)
dir=$(aj_cache_root)/images
out=$dir/debian-$key.tar
mkdir -p "$dir"
exec 9>>"$dir/debian-$key.lock"
flock 9
if [[ -s $out ]]; then
  echo "debian-image.sh: $name ($suite of $snapshot: ${pkgs[*]:-minbase}) up to date in $out" >&2
  echo "$out"
  exit 0
fi

log=$dir/debian-$key.log
stage=$(mktemp -d "$dir/.debian-$key.XXXXXX")
trap 'rm -rf "$stage"' EXIT
t0=$(date +%s)
echo "debian-image.sh: making $name from Debian $suite ($mirror, $snapshot) with: ${pkgs[*]:-minbase only} (log: $log)" >&2
include=()
((${#pkgs[@]})) && include=("--include=$(IFS=,; echo "${pkgs[*]}")")
# Documentation, manuals and translations are left out: nothing in a container reads them.
if ! mmdebstrap --variant=minbase "${include[@]}" --format=tar \
     --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
     --dpkgopt='path-exclude=/usr/share/info/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
     --aptopt='Acquire::Languages "none"' \
     "$suite" "$stage/rootfs.tar" "$mirror" >"$log" 2>&1; then
  why=$(grep -m1 -E 'Failed to fetch|Could not resolve|Temporary failure|Connection failed|Unable to connect|Unable to locate package|has no installation candidate|E: ' "$log" ||
        tail -n 1 "$log")
  die "could not make $name from Debian's packages at $mirror: ${why:0:240} (log: $log)"
fi
python3 "$here/docker-archive.py" "$stage/image.tar" "$name" "$stage/rootfs.tar" --cmd /bin/bash ||
  die "could not write the docker-archive of $name"
mv "$stage/image.tar" "$out"
echo "debian-image.sh: made $name in $(($(date +%s) - t0)) s: $(du -m "$out" | cut -f1) MB" >&2
echo "$out"
