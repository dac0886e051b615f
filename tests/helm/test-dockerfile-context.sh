#!/usr/bin/env bash
# The Dockerfile's build stage copies enough of the tree: configure the
# project from exactly the paths its COPY lines name, as the image build does,
# and check the install step delivers both programs, kubectl-aj and the man page.
# (Configure only: compiling is what the other tests already do.)
# Usage: test-dockerfile-context.sh DOCKERFILE
source "$(dirname "$0")/lib.sh"
dockerfile=${1:?usage: test-dockerfile-context.sh DOCKERFILE}
src=$(cd "$(dirname "$dockerfile")" && pwd)
ctx=$(mktemp -d "${TMPDIR:-/tmp}/aj-docker-ctx.XXXXXX")
trap 'rm -rf "$ctx" "$t_out"' EXIT

# COPY lines of the first (build) stage without --from: "COPY SRC... DEST".
copies=$(awk '/^FROM /{n++} n == 1 && /^COPY / && !/--from/' "$dockerfile")
expect_ok "the build stage has COPY lines" test -n "$copies"
while read -r _ args; do
  read -ra words <<<"$args"
  dest=${words[-1]}
  # Docker's rules: a directory's contents go into DEST; a file goes into
  # DEST when DEST ends with "/", else becomes DEST.
  for s in "${words[@]:0:${#words[@]}-1}"; do
    s=${s%/}
    if [[ -d $src/$s ]]; then
      mkdir -p "$ctx/src/$dest"
      cp -r "$src/$s/." "$ctx/src/$dest"
    elif [[ $dest == */ ]]; then
      mkdir -p "$ctx/src/$dest"
      cp "$src/$s" "$ctx/src/$dest"
    else
      mkdir -p "$(dirname "$ctx/src/$dest")"
      cp "$src/$s" "$ctx/src/$dest"
    fi
  done
done <<<"$copies"

expect_ok "cmake configures from the copied context alone" \
  cmake -S "$ctx/src" -B "$ctx/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF
for want in 'bin" TYPE EXECUTABLE FILES "[^"]*/aj"' 'bin" TYPE EXECUTABLE FILES "[^"]*/aj-controller"' \
  'kubectl-aj' 'man1" TYPE FILE FILES "[^"]*/docs/aj.1"' 'bash-completion/completions" TYPE FILE RENAME "aj"'; do
  expect_ok "the install step has: $want" bash -c "cat '$ctx'/build/cmake_install.cmake '$ctx'/build/*/cmake_install.cmake 2>/dev/null | grep -qE -- '$want'"
done
finish
