# Helpers for the chart and packaging tests (sourced); the cases and their
# verdict come from tests/lib/expect.sh.
set -uo pipefail
helm_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$helm_dir/../.." && pwd)
chart=$repo_root/charts/aj-controller

source "$repo_root/tests/lib/expect.sh"

# The helm binary: $AJ_HELM, else the cached build (never built here: a test
# must not spend minutes compiling; scripts/test.sh builds it first).
helm_bin() {
  if [[ -n ${AJ_HELM:-} ]]; then echo "$AJ_HELM"; return 0; fi
  "$helm_dir/build-helm.sh" --no-build | tail -n 1
}
