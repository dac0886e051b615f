#!/usr/bin/env bash
# Build (or reuse) Prometheus's promtool, the reference parser and linter of the
# exposition format, from the Go module proxy.
#
# Usage: tests/metrics/build-promtool.sh [--no-build] [v0.X.Y]   (default: tests/metrics/PROMTOOL_VERSION)
#   --no-build   only print the path of an existing build; fail if there is none
# Output: <tools cache>/promtool/<version>/bin/promtool (root: AJ_TOOLS_CACHE, else
#         $XDG_CACHE_HOME/aj). Prints the promtool path last. Nothing is rebuilt when it exists.
# Prometheus's Go module versions are v0.<major><minor>.<patch> (v0.316.0 is 3.16.0). Its go.mod
# has replace and exclude lines, so `go install module@version` refuses it: the module is
# downloaded and promtool built inside it, as upstream builds it; go.sum pins the rest.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../controlplane/lib.sh"

no_build=0
if [[ ${1:-} == --no-build ]]; then no_build=1; shift; fi
ver=${1:-$(tr -d '[:space:]' <"$here/PROMTOOL_VERSION")}
fail() { echo "build-promtool.sh: $*; retry: tests/metrics/build-promtool.sh $ver" >&2; exit 1; }
[[ $ver =~ ^v0\.[0-9]+\.[0-9]+$ ]] || fail "'$ver' is not a Prometheus module version like v0.316.0"

out=$(aj_cache_root)/promtool/$ver
bin=$out/bin/promtool
up_to_date() { [[ -x $bin ]] && "$bin" --version 2>/dev/null | grep -q "version $ver "; }
cp_use_cached build-promtool.sh "promtool $ver" "$bin" "$no_build" "tests/metrics/build-promtool.sh $ver"
command -v go >/dev/null || fail "go is not installed"
mkdir -p "$out"
log=$out/build.log
cp_go_lock "promtool $ver" "$log"
if up_to_date; then echo "$bin"; exit 0; fi

# GOWORK=off: the module ships a go.work naming folders its zip leaves out.
export GOTOOLCHAIN=local CGO_ENABLED=0 GOWORK=off GOFLAGS="-mod=readonly -buildvcs=false"
stage=$(mktemp -d "$out/.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
start=$(date +%s)
echo "build-promtool.sh: building promtool $ver (log: $log)" >&2
: >"$log"
mod=$(go mod download -json "github.com/prometheus/prometheus@$ver" 2>>"$log" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') && [[ -d $mod ]] ||
  fail "$(cp_go_cause "$log" 'module download (prometheus)')"
why=$(cp_need_go "$(sed -n 's/^go //p' "$mod/go.mod")" "promtool $ver") || fail "$why"
(cd "$mod" && go mod download) >>"$log" 2>&1 || fail "$(cp_go_cause "$log" 'module download (promtool dependencies)')"
t_dl=$(date +%s)
ld="-s -w -X github.com/prometheus/common/version.Version=$ver -X github.com/prometheus/common/version.Branch=release"
(cd "$mod" && cp_run_logged "$log" "compiling promtool" go build -trimpath -ldflags "$ld" -o "$stage/promtool" ./cmd/promtool) ||
  fail "$(cp_go_cause "$log" 'go build promtool')"
"$stage/promtool" --version 2>&1 | grep -q "version $ver " || fail "the built promtool does not report version $ver"
mkdir -p "$out/bin"
mv "$stage/promtool" "$bin"
end=$(date +%s)
echo "build-promtool.sh: built promtool $ver in $((end - start)) s (downloads $((t_dl - start)) s, compile $((end - t_dl)) s)" >&2
echo "$bin"
