#!/usr/bin/env bash
# The image as a user without a Docker engine or a registry builds it: scripts/build-image.sh makes
# the Dockerfile's base images from Debian's packages (tagged with the FROM lines' names), builds the
# Dockerfile unchanged with buildah and loads the image into a containerd the way `kind load
# docker-image` does. Here that containerd is a throwaway one on a private socket; the image runs
# in it (runc) as uid 10001 and its programs answer. A second build reuses everything. A base image
# that cannot be made is one line, and leaves no image behind.
# Needs root (buildah's chroot isolation, containerd), buildah, mmdebstrap, containerd, runc
# (scripts/install-deps.sh --test) and Debian's mirror.
source "$(dirname "$0")/lib.sh"

[[ $(id -u) == 0 ]] || { echo "test-image.sh: needs root (buildah and containerd)" >&2; exit 1; }
for c in buildah mmdebstrap containerd ctr runc; do
  command -v "$c" >/dev/null || { echo "test-image.sh: $c is not installed (scripts/install-deps.sh --test)" >&2; exit 1; }
done
export STORAGE_DRIVER=vfs BUILDAH_ISOLATION=chroot
build=$repo_root/scripts/build-image.sh
version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$chart/Chart.yaml")
tag=aj-packaging-test:$$
work=$(mktemp -d "${TMPDIR:-/tmp}/aj-image-test.XXXXXX")
ctd_pid=
cleanup() {
  if [[ -n $ctd_pid ]]; then kill "$ctd_pid" 2>/dev/null; wait "$ctd_pid" 2>/dev/null; fi
  buildah rmi "$tag" >/dev/null 2>&1
  rm -rf "$work" "$t_out"
}
trap cleanup EXIT

# --- bad input: no Debian to make the base from ---
AJ_TOOLS_CACHE=$work/empty-cache AJ_DEBIAN_MIRROR=http://127.0.0.1:9/debian \
  "$build" --base local --tag "$tag" >"$work/nobase.out" 2>"$work/nobase.err"
rc=$?
expect_eq "no Debian mirror: the build fails" "1" echo "$rc"
expect_ok "...with one line naming the mirror" bash -c \
  "[[ \$(wc -l <'$work/nobase.err') == 1 ]] && grep -qF \"cannot make the bookworm image: Debian's mirror http://127.0.0.1:9/debian cannot be reached\" '$work/nobase.err'"
expect_fail "...and no image of that name" "image not known" buildah inspect --type image "$tag"
expect_eq "...and nothing half-made in the cache" "" bash -c "ls '$work/empty-cache/debian-images'"
expect_fail "a FROM line that is not Debian's is refused, naming it" \
  "the Dockerfile's FROM python:3.12 cannot be made from Debian's packages" \
  bash -c "mkdir -p '$work/other' && printf 'FROM python:3.12\n' >'$work/other/Dockerfile' &&
           mkdir -p '$work/other/scripts' '$work/other/charts/aj-controller' &&
           cp '$build' '$repo_root/scripts/debian-image.sh' '$repo_root/scripts/docker-archive.py' '$work/other/scripts/' &&
           cp '$chart/Chart.yaml' '$work/other/charts/aj-controller/' &&
           '$work/other/scripts/build-image.sh' --base local"

# --- a throwaway containerd: its own root, state and socket ---
sock=$work/containerd.sock
cat >"$work/containerd.toml" <<EOF
version = 2
root = "$work/ctd-root"
state = "$work/ctd-state"
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "native"
EOF
containerd --config "$work/containerd.toml" >"$work/containerd.log" 2>&1 &
ctd_pid=$!
for _ in $(seq 50); do [[ -S $sock ]] && break; sleep 0.1; done
expect_ok "containerd answers on its private socket" ctr --address "$sock" version

# --- build and load ---
echo "# building the image from the Dockerfile (a few minutes when nothing is cached)"
expect_ok "build-image.sh builds the Dockerfile with buildah from locally made bases and loads it" \
  "$build" --base local --tag "$tag" --load "$sock" --snapshotter native
id1=$(buildah inspect --type image --format '{{.FromImageID}}' "$tag" 2>/dev/null)
expect_ok "the FROM lines' names are the bases made here (debian:bookworm and :bookworm-slim, one image)" bash -c \
  "a=\$(buildah inspect --type image --format '{{.FromImageID}}' docker.io/library/debian:bookworm) &&
   b=\$(buildah inspect --type image --format '{{.FromImageID}}' docker.io/library/debian:bookworm-slim) &&
   [[ -n \$a && \$a == \$b ]] && buildah inspect --type image --format '{{range .OCIv1.History}}{{.CreatedBy}}{{end}}' docker.io/library/debian:bookworm | grep -q mmdebstrap"
ctr() { command ctr --address "$sock" -n k8s.io "$@"; }
expect_ok "the image is in namespace k8s.io under the name a pod's image: $tag resolves to" bash -c \
  "ctr --address '$sock' -n k8s.io images ls -q | grep -qx 'docker.io/library/$tag'"
run() { ctr run --rm --snapshotter native "docker.io/library/$tag" "t$RANDOM" "$@"; }
expect_eq "aj-controller runs in it (containerd, runc)" "aj-controller $version" run /usr/local/bin/aj-controller --version
expect_eq "aj runs in it" "aj $version" run /usr/local/bin/aj --version
expect_eq "as uid and gid 10001" "10001:10001" run sh -c 'echo "$(id -u):$(id -g)"'
expect_eq "the entrypoint is aj-controller" '[/usr/local/bin/aj-controller]' \
  buildah inspect --type image --format '{{.OCIv1.Config.Entrypoint}}' "$tag"

# --- a second build reuses the bases and every layer ---
"$build" --base local --tag "$tag" >"$work/again.out" 2>"$work/again.err"
expect_eq "a second build succeeds" "0" echo "$?"
expect_ok "...importing no base again" bash -c "! grep -q 'importing' '$work/again.err' && ! grep -q 'making the' '$work/again.err'"
expect_eq "...and gives the same image" "$id1" buildah inspect --type image --format '{{.FromImageID}}' "$tag"

finish
