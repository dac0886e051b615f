#!/usr/bin/env bash
# Build the controller image from the repository's Dockerfile: with `docker build` where a Docker engine
# answers, else with buildah (Debian's package; no daemon, vfs storage, chroot isolation). Optionally
# write it as a docker-archive and load it into a containerd, as `kind load docker-image` does.
#
# Usage: scripts/build-image.sh [--tag NAME] [--base auto|registry|local] [--archive FILE]
#                               [--load SOCKET]... [--snapshotter NAME]
#   --tag NAME         the image name (default aj:APPVERSION, what the Helm chart runs)
#   --base MODE        where the FROM lines' images come from: registry (pull them), local (make them
#                      with scripts/debian-image.sh from Debian's packages, tagged with the FROM names),
#                      auto (default: registry when Docker Hub answers, else local)
#   --archive FILE     also write the image as a docker-archive (for `docker load`, `ctr images import`)
#   --load SOCKET      import it into the containerd at SOCKET, namespace k8s.io (where the kubelet
#                      looks), under the name a pod's `image:` resolves to (aj:0.1.0 is
#                      docker.io/library/aj:0.1.0); repeat it for each node
#   --snapshotter S    the snapshotter to unpack it for (default overlayfs, containerd's default; the
#                      CRI plugin's `snapshotter` setting)
# Engine: AJ_IMAGE_ENGINE=docker|buildah overrides the choice. buildah keeps its images in
# /var/lib/containers/storage (root) with STORAGE_DRIVER=vfs unless set otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
me=build-image
die() { echo "$me: $*" >&2; exit 1; }
usage() { die "usage: scripts/build-image.sh [--tag NAME] [--base auto|registry|local] [--archive FILE] [--load SOCKET]... [--snapshotter S]"; }

version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$root/charts/aj-controller/Chart.yaml")
tag=aj:$version base=auto archive="" snapshotter=overlayfs loads=()
while (($#)); do
  case $1 in
    --tag) tag=${2:?}; shift 2 ;;
    --base) base=${2:?}; shift 2 ;;
    --archive) archive=${2:?}; shift 2 ;;
    --load) loads+=("${2:?}"); shift 2 ;;
    --snapshotter) snapshotter=${2:?}; shift 2 ;;
    *) usage ;;
  esac
done
case $base in auto|registry|local) ;; *) usage ;; esac
[[ $tag =~ ^[a-z0-9][a-z0-9._/-]*(:[A-Za-z0-9_][A-Za-z0-9._-]*)?$ ]] || die "'$tag' is not an image name"
[[ $tag == *:* && ${tag##*/} == *:* ]] || tag=$tag:latest

# Docker's reference rules: a name without a registry host is on docker.io, a single component in
# library/. This is the name a kubelet asks containerd for when a pod says `image: aj:0.1.0`.
full_name() {
  local first=${1%%/*}
  if [[ $1 != */* ]]; then echo "docker.io/library/$1"
  elif [[ $first == *.* || $first == *:* || $first == localhost ]]; then echo "$1"
  else echo "docker.io/$1"; fi
}

engine=${AJ_IMAGE_ENGINE:-}
if [[ -z $engine ]]; then
  if command -v docker >/dev/null && timeout 10 docker info >/dev/null 2>&1; then engine=docker
  elif command -v buildah >/dev/null; then engine=buildah
  else die "no image builder: install buildah (apt-get install buildah, or scripts/install-deps.sh --test) or start a Docker engine"; fi
fi
case $engine in
  docker) timeout 10 docker info >/dev/null 2>&1 || die "AJ_IMAGE_ENGINE=docker but no Docker engine answers (docker info)" ;;
  buildah)
    command -v buildah >/dev/null || die "buildah is not installed (apt-get install buildah, or scripts/install-deps.sh --test)"
    export STORAGE_DRIVER=${STORAGE_DRIVER:-vfs} BUILDAH_ISOLATION=${BUILDAH_ISOLATION:-chroot} ;;
  *) die "AJ_IMAGE_ENGINE must be docker or buildah, not '$engine'" ;;
esac

# The engine's id of a local image (sha256 of its config), empty when it has none of that name.
image_id() {
  local id
  if [[ $engine == docker ]]; then id=$(docker image inspect -f '{{.Id}}' "$1" 2>/dev/null || true)
  else id=$(buildah inspect --type image --format '{{.FromImageID}}' "$1" 2>/dev/null || true); fi
  echo "${id#sha256:}"
}

# The FROM lines' images, without the names of earlier stages.
dockerfile=$root/Dockerfile
mapfile -t froms < <(awk 'toupper($1) == "FROM" {
    for (i = 2; i <= NF; i++) if ($i !~ /^--/) break
    if (!($i in stage)) print $i
    if (toupper($(i + 1)) == "AS") stage[$(i + 2)] = 1
  }' "$dockerfile" | sort -u)
((${#froms[@]})) || die "$dockerfile has no FROM line"

if [[ $base == auto ]]; then
  # Docker Hub answers 401 to an anonymous /v2/: reachable. Anything else: make the bases here.
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 https://registry-1.docker.io/v2/ 2>/dev/null || true)
  if [[ $code == 401 || $code == 200 ]]; then base=registry; else base=local; fi
  echo "$me: base images from the $( [[ $base == registry ]] && echo registry || echo "Debian packages (no registry answers)")" >&2
fi

t0=$(date +%s)
work=$(mktemp -d "${TMPDIR:-/tmp}/aj-build-image.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [[ $base == local ]]; then
  # debian:SUITE and debian:SUITE-slim are both made from SUITE's minbase; other images cannot be.
  declare -A suites=()
  for f in "${froms[@]}"; do
    name=$(full_name "$f")
    [[ $name =~ ^docker\.io/library/debian:([a-z]+)(-slim)?$ ]] ||
      die "the Dockerfile's FROM $f cannot be made from Debian's packages (only debian:SUITE and debian:SUITE-slim can); use --base registry"
    suites[${BASH_REMATCH[1]}]+=" $name"
  done
  for s in "${!suites[@]}"; do
    read -ra names <<<"${suites[$s]}"
    tagargs=()
    for n in "${names[@]}"; do tagargs+=(--tag "$n"); done
    id=$("$root/scripts/debian-image.sh" --suite "$s" "${tagargs[@]}" --out "$work/$s.tar" --print-id) || exit 1
    stale=()
    for n in "${names[@]}"; do [[ $(image_id "$n") == "${id#sha256:}" ]] || stale+=("$n"); done
    ((${#stale[@]})) || continue
    echo "$me: importing $s as ${stale[*]}" >&2
    if [[ $engine == docker ]]; then
      docker load -q -i "$work/$s.tar" >/dev/null || die "docker load of the $s base image failed"
    else
      buildah pull -q "docker-archive:$work/$s.tar:${names[0]}" >/dev/null || die "buildah could not import the $s base image"
      for n in "${names[@]:1}"; do buildah tag "${names[0]}" "$n"; done
    fi
    rm -f "$work/$s.tar"
  done
fi

echo "$me: building $tag from $dockerfile with $engine" >&2
if [[ $engine == docker ]]; then
  pull=()
  [[ $base == local ]] || pull=(--pull)
  docker build "${pull[@]}" -t "$tag" -f "$dockerfile" "$root" >&2 || die "docker build failed (its output is above)"
else
  # --layers: unchanged steps are reused from the previous build. --network host: the apt steps reach
  # Debian's mirror the way this machine does.
  pull=--pull=never
  [[ $base == local ]] || pull=--pull=true
  buildah bud --layers "$pull" --network host -t "$tag" -f "$dockerfile" "$root" >&2 ||
    die "buildah bud failed (its output is above)"
fi
echo "$me: built $tag (image $(image_id "$tag" | cut -c1-12)) in $(($(date +%s) - t0)) s" >&2

if [[ -n $archive ]] || ((${#loads[@]})); then
  name=$(full_name "$tag")
  out=${archive:-$work/image.tar}
  rm -f "$out"
  if [[ $engine == docker ]]; then docker save -o "$out" "$tag" || die "docker save $tag failed"
  else buildah push -q "$tag" "docker-archive:$out:$name" || die "buildah push $tag to $out failed"; fi
  [[ -z $archive ]] || echo "$me: wrote $archive ($name)" >&2
fi
for load in "${loads[@]}"; do
  command -v ctr >/dev/null || die "ctr is not installed (apt-get install containerd)"
  [[ -S $load ]] || die "no containerd socket at $load"
  ctr --address "$load" -n k8s.io images import --snapshotter "$snapshotter" "$out" >/dev/null ||
    die "ctr could not import $name into the containerd at $load"
  echo "$me: loaded $name into the containerd at $load (namespace k8s.io)" >&2
done
