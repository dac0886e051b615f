#!/usr/bin/env bash
# A Debian image made from Debian's packages alone (mmdebstrap), for machines with no image registry:
# written as a docker-archive that `docker load`, `buildah pull docker-archive:FILE`, `podman load` and
# `ctr -n k8s.io images import` all read.
#
# Usage: scripts/debian-image.sh --out FILE [--suite bookworm] [--packages a,b,...] [--tag NAME]... [--print-id]
#   --out FILE      the docker-archive to write (one image, one layer)
#   --suite S       Debian suite (default bookworm); its -updates and -security suites are included
#   --packages L    packages on top of the minbase variant (essential packages, apt, bash, coreutils, tar...)
#   --tag NAME      a name the archive gives the image (repeatable; default docker.io/library/debian:SUITE)
#   --print-id      print the image id (sha256:... of its config) on stdout
# The root file system is cached by content under ${XDG_CACHE_HOME:-~/.cache}/aj/debian-images
# (AJ_TOOLS_CACHE replaces .../aj): the suite, the package list, the mirror, this recipe and the Date of
# each suite's Release file (the snapshot of Debian it was made from; SOURCE_DATE_EPOCH makes the tar
# reproducible). A second call reuses it; when the mirror cannot be reached the newest cached one of the
# same suite and packages is used, and said so.
# Mirror: AJ_DEBIAN_MIRROR (default http://deb.debian.org/debian; security: AJ_DEBIAN_SECURITY_MIRROR).
set -euo pipefail
me=debian-image

die() { echo "$me: $*" >&2; exit 1; }
usage() { die "usage: scripts/debian-image.sh --out FILE [--suite S] [--packages a,b] [--tag NAME]... [--print-id]"; }

suite=bookworm packages="" out="" print_id=0 tags=()
while (($#)); do
  case $1 in
    --out) out=${2:?}; shift 2 ;;
    --suite) suite=${2:?}; shift 2 ;;
    --packages) packages=${2?}; shift 2 ;;
    --tag) tags+=("${2:?}"); shift 2 ;;
    --print-id) print_id=1; shift ;;
    *) usage ;;
  esac
done
[[ -n $out ]] || usage
[[ $suite =~ ^[a-z][a-z0-9-]*$ ]] || die "suite '$suite' is not a Debian suite name"
((${#tags[@]})) || tags=("docker.io/library/debian:$suite")
for t in "${tags[@]}"; do
  [[ $t =~ ^[a-z0-9][a-z0-9._/:-]*$ ]] || die "tag '$t' is not an image name"
done
# The package list in one canonical order, so the same set gives the same cache entry.
packages=$(tr ', ' '\n\n' <<<"$packages" | sed '/^$/d' | LC_ALL=C sort -u | paste -sd, -)
[[ -z $packages || $packages =~ ^[a-z0-9][a-z0-9.+,-]*$ ]] || die "package list '$packages' has a name Debian does not allow"
command -v mmdebstrap >/dev/null || die "mmdebstrap is not installed (apt-get install mmdebstrap, or scripts/install-deps.sh --test)"

mirror=${AJ_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${AJ_DEBIAN_SECURITY_MIRROR:-${mirror%/debian}/debian-security}
sources=("deb $mirror $suite main")
# Stable suites have updates and security suites; testing/unstable do not.
case $suite in sid|unstable|testing|experimental) ;; *)
  sources+=("deb $mirror $suite-updates main" "deb $security $suite-security main") ;;
esac

# The Date of each suite's Release file: what "the same Debian" means for the cache.
dates=() reachable=1
for s in "${sources[@]}"; do
  read -r _ uri dist _ <<<"$s"
  if ! release=$(curl -fsS --max-time 15 "$uri/dists/$dist/InRelease" 2>/dev/null); then reachable=0; break; fi
  d=$(sed -n 's/^Date: //p' <<<"$release" | head -n1)
  [[ -n $d ]] || die "$uri/dists/$dist/InRelease has no Date line"
  dates+=("$(date -u -d "$d" +%Y%m%dT%H%M%SZ)")
done

# Documentation, manuals and translations are left out (as in Debian's -slim images): nothing in a
# container reads them. The dpkg setting stays in the image, so packages installed later skip them too.
# No device nodes in the layer: runtimes give containers their own /dev, and an unprivileged engine
# cannot make them when it unpacks the layer.
recipe=(--variant=minbase --skip=output/dev --aptopt='Acquire::Languages "none"'
        --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*'
        --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/info/*'
        --dpkgopt='path-exclude=/usr/share/locale/*')
cache=${AJ_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aj}/debian-images
mkdir -p "$cache"
arch=$(dpkg --print-architecture)
# Entries are SUITE-ARCH-HASH-DATE: HASH covers the recipe, packages and mirrors (and the entry's
# layout: a layer with its created time and history line), DATE the newest Release among them.
what=$(sha256sum <<<"archive|$arch|$packages|${sources[*]}|${recipe[*]}" | cut -c1-12)
if ((reachable)); then
  snapshot=$(printf '%s\n' "${dates[@]}" | sort | tail -n1)
  key=$suite-$arch-$what-$snapshot-$(sha256sum <<<"${dates[*]}" | cut -c1-8)
else
  key=$(cd "$cache" && ls -d "$suite-$arch-$what-"* 2>/dev/null | grep -v '\.tmp' | sort | tail -n1 || true)
  [[ -n $key ]] || die "cannot make the $suite image: Debian's mirror $mirror cannot be reached and nothing is cached (${packages:-minbase only})"
  echo "$me: $mirror cannot be reached; using the cached $key" >&2
fi
entry=$cache/$key

# One builder per entry at a time; a half-made entry is never visible (made in .tmp, then renamed).
exec 9>"$cache/.lock"
flock 9
if [[ ! -f $entry/created-by ]]; then
  tmp=$entry.tmp
  rm -rf "$tmp"
  mkdir -p "$tmp"
  echo "$me: making the $suite image (${packages:-minbase only}) with mmdebstrap (about 20-60 s; log: $tmp/mmdebstrap.log)" >&2
  epoch=$(date -u -d "${snapshot:0:4}-${snapshot:4:2}-${snapshot:6:2} ${snapshot:9:2}:${snapshot:11:2}:${snapshot:13:2}" +%s)
  if ! SOURCE_DATE_EPOCH=$epoch mmdebstrap "${recipe[@]}" ${packages:+--include="$packages"} "$suite" "$tmp/layer.tar" "${sources[@]}" \
      </dev/null >"$tmp/mmdebstrap.log" 2>&1; then
    cause=$(grep -m1 -E '^E: ' "$tmp/mmdebstrap.log" | cut -c1-200 || true)
    die "mmdebstrap could not make the $suite image: ${cause:-see $tmp/mmdebstrap.log}"
  fi
  # What the image's history says made it, and when (the snapshot of Debian).
  date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ >"$tmp/created"
  echo "mmdebstrap --variant=minbase $suite ${packages:+--include=$packages} (${dates[*]})" >"$tmp/created-by"
  mv "$tmp" "$entry"
fi
flock -u 9

# scripts/docker-archive.py writes every image of the project: one layer, Debian's PATH, bash as the
# default command.
ids=$(python3 "$(dirname "$0")/docker-archive.py" "$out" "$entry/layer.tar" "${tags[@]/#/--tag=}" --cmd bash \
        --created "$(cat "$entry/created")" --created-by "$(cat "$entry/created-by")" --print-id) ||
  die "cannot write $out"
((print_id)) && echo "$ids"
exit 0
