# Shared helpers for the control-plane scripts (sourced, not executed).

cp_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# Version to use: explicit argument, else $AJ_K8S_VERSION, else the pinned default.
cp_version() {
  local v=${1:-${AJ_K8S_VERSION:-}}
  [[ -n $v ]] || v=$(tr -d '[:space:]' <"$cp_here/VERSION")
  echo "$v"
}

# Cache root for built binaries, keyed by version below it.
cp_cache_root() {
  echo "${AJ_CONTROLPLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aj/controlplane}"
}

cp_bin_dir() { echo "$(cp_cache_root)/$1/bin"; }
