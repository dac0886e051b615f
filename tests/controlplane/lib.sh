# Shared helpers for the control-plane and cluster scripts (sourced, not executed).

cp_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# Version to use: explicit argument, else $AJ_K8S_VERSION, else the pinned default.
cp_version() {
  local v=${1:-${AJ_K8S_VERSION:-}}
  [[ -n $v ]] || v=$(tr -d '[:space:]' <"$cp_here/VERSION")
  echo "$v"
}

# Root of every cached build (control plane, Volcano, kwok), each keyed by version below it.
aj_cache_root() { echo "${AJ_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aj}"; }

# Cache root for the control plane's binaries, keyed by version below it.
cp_cache_root() { echo "${AJ_CONTROLPLANE_CACHE:-$(aj_cache_root)/controlplane}"; }

cp_bin_dir() { echo "$(cp_cache_root)/$1/bin"; }

# Go builds each want every core: one at a time on this machine, whoever starts them. A caller
# that has to wait says whose build it waits for, and again every minute.
# Usage: cp_go_lock "what I build" LOG   (holds the lock on fd 8 until the script exits)
cp_go_lock() {
  local root lock waited=0
  root=$(aj_cache_root)
  mkdir -p "$root"
  lock=$root/go-build.lock
  exec 8>>"$lock"
  if ! flock -n 8; then
    echo "waiting for another Go build to finish: $(cat "$lock.owner" 2>/dev/null || echo unknown)" >&2
    until flock -w 60 8; do
      waited=$((waited + 1))
      echo "still waiting for $(cat "$lock.owner" 2>/dev/null || echo 'another Go build') ($waited min so far)" >&2
    done
  fi
  echo "$1 (pid $$, log $2, since $(date -u +%H:%M:%SZ))" >"$lock.owner"
}

# The build scripts of cached tools (helm, promtool, the test venv) start with this: when the
# caller's up_to_date function says the cached one is current, print PATH and exit 0; else with
# NO_BUILD non-zero, exit 1 saying how to make it. Usage: cp_use_cached SCRIPT WHAT PATH NO_BUILD HOW
cp_use_cached() {
  if up_to_date; then
    echo "$1: $2 up to date" >&2
    echo "$3"
    exit 0
  fi
  if (($4)); then
    echo "$1: $2 is not there; run: $5" >&2
    exit 1
  fi
}

# Run a long command with its output in LOG, printing a line a minute so a caller knows what it
# waits for. Usage: cp_run_logged LOG "what" cmd...
cp_run_logged() {
  local log=$1 what=$2 pid t0 rc=0
  shift 2
  t0=$(date +%s)
  "$@" >>"$log" 2>&1 &
  pid=$!
  while ! wait_for_pid "$pid" 60; do
    echo "  still $what ($((($(date +%s) - t0) / 60)) min so far; log: $log)" >&2
  done
  wait "$pid" || rc=$?
  return "$rc"
}
# 0 once PID has exited, 1 after SECONDS while it still runs.
wait_for_pid() {
  local i
  for ((i = 0; i < $2 * 2; i++)); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.5
  done
  ! kill -0 "$1" 2>/dev/null
}

# The likely cause of a failed go command, from its log (one line).
cp_go_cause() { # log what
  local line
  if line=$(grep -m1 -E 'dial tcp|no such host|connection refused|i/o timeout|TLS handshake|lookup disabled by GOPROXY' "$1"); then
    echo "module download failed (${line:0:200}); check network access to GOPROXY=$(go env GOPROXY)"
  elif line=$(grep -m1 -E ': (403|404|410) |not found|unknown revision|invalid version' "$1"); then
    echo "a module is not served by $(go env GOPROXY): ${line:0:200}"
  elif line=$(grep -m1 -E 'requires go >= |go.mod requires go|toolchain' "$1"); then
    echo "Go too old: ${line:0:200}"
  else
    line=$(grep -m1 -vE '^go: downloading' "$1")
    echo "$2 failed: ${line:0:200} (full log: $1)"
  fi
}

# Fail unless the installed Go is at least NEED. Usage: cp_need_go NEED what
cp_need_go() {
  local have
  command -v go >/dev/null || { echo "go is not installed (need Go >= $1 for $2)"; return 1; }
  have=$(go env GOVERSION); have=${have#go}; have=${have%%[-+ ]*}
  if [[ $(printf '%s\n%s\n' "$1" "$have" | sort -V | head -1) != "$1" ]]; then
    echo "$2 needs Go >= $1 but go is $have (install a newer Go)"
    return 1
  fi
}

# SIGTERM, then SIGKILL after 5 s.
stop_pid() {
  kill "$1" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$1" 2>/dev/null || true
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Start a daemon detached from our stdio (so callers such as ctest do not wait on it).
spawn() { # log cmd...
  local log=$1; shift
  setsid "$@" </dev/null >"$log" 2>&1 &
  echo $!
}

# Stop the components cluster-up.sh recorded in DIR/components, newest first, each only if its pid
# is still the process that was started (pids get reused). Prints how many ran.
cp_stop_components() { # dir
  local f=$1/components n=0 name pid url log
  [[ -f $f ]] || { echo 0; return 0; }
  # (NAME@NODE: program NAME of node NODE)
  while read -r name pid url log; do
    [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "${name%@*}" || continue
    stop_pid "$pid"
    n=$((n + 1))
  done < <(tac "$f")
  echo "$n"
}
