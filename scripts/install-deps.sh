#!/usr/bin/env bash
# Install the Debian packages aj needs to build and test. Safe to re-run:
# it only calls apt-get when something is missing.
# Usage: scripts/install-deps.sh [--test | --node]
#   --test  also what the tests use (this includes --node)
#   --node  also what the local cluster's real node uses (scripts/demo.sh)
set -euo pipefail

pkgs=(build-essential cmake ninja-build pkg-config git openssl ca-certificates
      libyaml-dev libcjson-dev curl libcurl4-openssl-dev libssl-dev libarchive-dev
      libwebsockets-dev libcmocka-dev)
if [ "${1:-}" = "--test" ]; then
  # libclang-rt-dev: the sanitizer and libFuzzer runtimes, which clang only recommends;
  # libtsan2: gcc's ThreadSanitizer runtime (build-essential brings it on amd64, named here).
  pkgs+=(libtsan2 clang libclang-rt-dev valgrind cppcheck iproute2 golang-go python3 python3-venv python3-yaml zsh groff-base man-db buildah)
fi
if [ "${1:-}" = "--test" ] || [ "${1:-}" = "--node" ]; then
  # the local cluster's real node: container runtime, CNI plugins, images from Debian's packages
  pkgs+=(containerd runc containernetworking-plugins mmdebstrap iproute2 iptables python3)
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Go is often installed outside Debian's packages; any go on PATH will do.
if command -v go >/dev/null 2>&1; then
  missing=("${missing[@]/golang-go}")
fi
missing=($(printf '%s\n' "${missing[@]}" | sed '/^$/d' | sort -u))
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
