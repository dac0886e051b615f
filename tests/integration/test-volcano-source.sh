#!/usr/bin/env bash
# Where build-cluster.sh takes Volcano's source from, in a copy of the repository with no ../shared
# beside it: a GitHub-shaped archive through AJ_VOLCANO_URL=file://, the copy cached by commit, the
# content digest that refuses anything else, the one line when nothing is reachable. Only the
# source is fetched and checked (build-cluster.sh volcano-src), and the build step runs with a
# stand-in `go`, so no Volcano is compiled. GitHub itself cannot be reached from the test machines:
# only file:// URLs are tested.
set -uo pipefail
repo_root=$(cd "$(dirname "$0")/../.." && pwd)
source "$repo_root/tests/lib/expect.sh"
cpd=$repo_root/tests/controlplane
work=$(mktemp -d "${TMPDIR:-/tmp}/aj-it-vsrc.XXXXXX")
trap 'rm -rf "$work" "$t_out"' EXIT
pin() { sed -n "s/^$1=//p" "$cpd/VOLCANO"; }
commit=$(pin commit)

# The pinned source as this repository finds it (shared archive, cache or download): the subset of
# the paths Volcano is built from, at the archive's top.
if ! subset=$("$cpd/build-cluster.sh" volcano-src 2>"$t_out" | awk '{print $2}') || [[ ! -f $subset ]]; then
  cat "$t_out"
  echo "FAIL - Volcano's source is not reachable from this repository (see above)"
  exit 1
fi

# A GitHub-shaped archive: everything under volcano-<commit>/, with files outside the pinned paths
# that the digest must ignore.
gh=$work/gh/volcano-$commit
mkdir -p "$gh/docs" "$gh/hack" "$gh/.github"
tar -xzf "$subset" -C "$gh"
echo "# Volcano" >"$gh/README.md"
echo "design notes" >"$gh/docs/design.md"
printf '#!/bin/sh\n' >"$gh/hack/build.sh"
echo "on: push" >"$gh/.github/ci.yaml"
tar -czf "$work/github.tar.gz" -C "$work/gh" "volcano-$commit"
# archive_with NAME CHANGE: a GitHub-shaped archive after running CHANGE in a copy of its tree.
archive_with() {
  rm -rf "$work/t" && cp -a "$work/gh" "$work/t"
  (cd "$work/t/volcano-$commit" && eval "$2")
  tar -czf "$work/$1.tar.gz" -C "$work/t" "volcano-$commit"
}
archive_with tampered "echo '// changed' >>go.mod"
archive_with extra "echo 'package main' >cmd/scheduler/extra.go"
archive_with short "rm -rf third_party"

# A fresh clone: the repository's files with nothing beside it.
clone=$work/fresh/aj
mkdir -p "$clone"
git -C "$repo_root" ls-files -z | tar -C "$repo_root" --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -C "$clone" -xf -
bc=$clone/tests/controlplane/build-cluster.sh
expect_ok "the copy has the build script and no ../shared" test -x "$bc" -a ! -e "$work/fresh/shared"

run() { env AJ_TOOLS_CACHE="$work/tools" "$@"; }
cached=$work/tools/volcano/src/$commit.tar.gz
expect_eq "a fresh clone takes the GitHub-shaped archive from AJ_VOLCANO_URL=file://" "volcano-src $cached" \
  run AJ_VOLCANO_URL="file://$work/github.tar.gz" "$bc" volcano-src
# top-level entries of an archive
tops() { tar -tzf "$1" | cut -d/ -f1 | sort -u | tr '\n' ' '; }
expect_eq "...and caches the pinned paths alone by commit" "LICENSE cmd config go.mod go.sum installer pkg staging third_party " \
  tops "$cached"
expect_eq "...config/crd and installer/volcano-development.yaml alone of their folders" "" \
  bash -c "set -o pipefail; tar -tzf '$cached' | grep -E '^(config|installer)/' | { grep -vE '^config/(crd/.*)?$|^installer/(volcano-development.yaml)?$' || true; }"
expect_ok "with the URL unreachable the cached copy serves" \
  bash -c "AJ_TOOLS_CACHE='$work/tools' AJ_VOLCANO_URL='file://$work/none.tar.gz' '$bc' volcano-src 2>&1 | grep >/dev/null 'from the cached'"

# The build takes the checked tree (a stand-in go writes the three binaries if it runs there).
mkdir -p "$work/go"
cat >"$work/go/go" <<'EOF'
#!/bin/sh
case "$1 $2" in
  "env GOVERSION") echo go1.26.0 ;;
  "mod download") test -f go.mod ;;
  "build -trimpath")
    out=; while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
    test -f cmd/scheduler/main.go -a -f staging/src/volcano.sh/apis/go.mod || exit 1
    mkdir -p "$out" && for b in controller-manager scheduler webhook-manager; do
      printf '#!/bin/sh\n' >"$out$b" && chmod +x "$out$b"; done ;;
  *) echo "stand-in go: $*" >&2; exit 1 ;;
esac
EOF
chmod +x "$work/go/go"
ver=$(pin version)
expect_eq "the fresh clone builds Volcano from the cached source" "volcano $work/tools/volcano/$ver" \
  run PATH="$work/go:$PATH" AJ_VOLCANO_URL="file://$work/none.tar.gz" "$bc" volcano
expect_ok "...with its binaries, CRDs and installer" test -f "$work/tools/volcano/$ver/bin/vc-scheduler" \
  -a -f "$work/tools/volcano/$ver/crd/volcano/batch.volcano.sh_jobs.yaml" \
  -a -f "$work/tools/volcano/$ver/installer/volcano-development.yaml"
expect_eq "...stamped with the content digest" "$(pin content)" cat "$work/tools/volcano/$ver/stamp"
expect_ok "...and a second run is up to date" \
  bash -c "AJ_TOOLS_CACHE='$work/tools' '$bc' volcano 2>&1 | grep >/dev/null 'up to date'"

# Anything but the pinned content is refused, naming why.
digest_msg="expected $(pin content)"
expect_fail "a tampered archive is refused" "$digest_msg" \
  run AJ_VOLCANO_SRC="$work/tampered.tar.gz" "$bc" volcano-src
expect_fail "a file added under a pinned path is refused" "$digest_msg" \
  run AJ_VOLCANO_SRC="$work/extra.tar.gz" "$bc" volcano-src
expect_fail "an archive lacking a pinned path is refused" "third_party: Not found in archive" \
  run AJ_VOLCANO_SRC="$work/short.tar.gz" "$bc" volcano-src
expect_fail "a tampered download is refused" "the download of file://$work/tampered.tar.gz is refused" \
  run AJ_TOOLS_CACHE="$work/tools2" AJ_VOLCANO_URL="file://$work/tampered.tar.gz" "$bc" volcano-src
expect_ok "...and not cached" test ! -e "$work/tools2/volcano/src/$commit.tar.gz"
expect_fail "a file that is no archive is refused" "not a tar.gz archive" \
  run AJ_VOLCANO_SRC="$cpd/VOLCANO" "$bc" volcano-src
expect_fail "a missing AJ_VOLCANO_SRC is named" "no Volcano source archive at $work/none.tar.gz" \
  run AJ_VOLCANO_SRC="$work/none.tar.gz" "$bc" volcano-src
echo garbage >"$cached"
expect_ok "a damaged cached copy is discarded and fetched again" \
  bash -c "AJ_TOOLS_CACHE='$work/tools' AJ_VOLCANO_URL='file://$work/github.tar.gz' '$bc' volcano-src 2>&1 | grep >/dev/null 'discarding the cached'"
expect_ok "...and the new copy serves" \
  bash -c "AJ_TOOLS_CACHE='$work/tools' AJ_VOLCANO_URL='file://$work/none.tar.gz' '$bc' volcano-src 2>&1 | grep >/dev/null 'from the cached'"

# Nothing reachable: one line saying what to provide (after the line naming the download tried).
expect_fail "nothing reachable says what to provide" "provide an archive of Volcano commit $commit as AJ_VOLCANO_SRC=FILE or AJ_VOLCANO_URL=URL" \
  run AJ_TOOLS_CACHE="$work/tools3" AJ_VOLCANO_URL="file://$work/none.tar.gz" "$bc" volcano-src
expect_eq "...in one line" "1" bash -c "AJ_TOOLS_CACHE='$work/tools3' AJ_VOLCANO_URL='file://$work/none.tar.gz' '$bc' volcano-src 2>&1 | grep -vc '^build-cluster.sh: downloading'"

# This project's machines: ../shared/volcano/volcano-src.tar.gz beside the clone, the subset shape.
mkdir -p "$work/fresh/shared/volcano"
cp "$subset" "$work/fresh/shared/volcano/volcano-src.tar.gz"
expect_ok "a subset archive at ../shared is taken before the URL" \
  run AJ_TOOLS_CACHE="$work/tools4" AJ_VOLCANO_URL="file://$work/none.tar.gz" "$bc" volcano-src
cp "$work/tampered.tar.gz" "$work/fresh/shared/volcano/volcano-src.tar.gz"
expect_fail "...and refused when it is not the pinned content" "shared/volcano/volcano-src.tar.gz is refused" \
  run AJ_TOOLS_CACHE="$work/tools4" "$bc" volcano-src
finish
