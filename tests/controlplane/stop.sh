#!/usr/bin/env bash
# Stop a control plane started by start.sh and remove its directory.
#
# Usage: tests/controlplane/stop.sh --dir DIR | ENV_FILE
#        tests/controlplane/stop.sh --check ENV_FILE   (exit 0 if it is still running)
# Stopping something already stopped (or never started) is not an error.
set -euo pipefail

check=0
env_file=
while (($#)); do
  case $1 in
    --dir) env_file=$2/env; shift 2 ;;
    --check) check=1; shift ;;
    *) env_file=$1; shift ;;
  esac
done
[[ -n $env_file ]] || { echo "usage: stop.sh --dir DIR | ENV_FILE" >&2; exit 2; }
if [[ ! -f $env_file ]]; then
  ((check)) && exit 1
  echo "stop.sh: no control plane at $(dirname "$env_file") (nothing to stop)"
  exit 0
fi
# shellcheck disable=SC1090
source "$env_file"
source "$(dirname "$0")/lib.sh"
source "$cp_here/node.sh"

# Only signal a pid that is still the process we started (pids get reused).
ours() { # pid binary-name
  [[ -n $1 && -r /proc/$1/cmdline ]] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -q "$2"
}
running=()
ours "${AJ_CP_APISERVER_PID:-}" "kube-apiserver.*127.0.0.1:${AJ_CP_ETCD_PORT}" && running+=("$AJ_CP_APISERVER_PID")
ours "${AJ_CP_ETCD_PID:-}" "etcd.*127.0.0.1:${AJ_CP_ETCD_PORT}" && running+=("$AJ_CP_ETCD_PID")
if ((check)); then
  ((${#running[@]} == 2)) || exit 1
  # and every cluster component still running
  [[ -f $AJ_CP_DIR/components ]] || exit 0
  while read -r name pid _; do
    [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "${name%@*}" || exit 1
  done <"$AJ_CP_DIR/components"
  exit 0
fi

# The cluster's components first (they would only log connection errors once the API server goes).
ncomp=$(cp_stop_components "$AJ_CP_DIR")
# Then what the real node leaves when its daemons stop: containers, shims, mounts, interfaces.
node_down "$AJ_CP_DIR"

# API server first, so it does not log etcd connection errors on the way down. Its graceful
# shutdown can take half a minute after a busy test run; nothing is kept, so 5 s is enough.
killed=0
for pid in "${running[@]}"; do
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null || true
    killed=$((killed + 1))
  fi
done
for pid in "${running[@]}"; do
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
done
[[ -n ${AJ_CP_ETCD_DATA:-} && -d $AJ_CP_ETCD_DATA ]] && rm -rf "$AJ_CP_ETCD_DATA"
if [[ ${AJ_CP_KEEP_DIR:-0} == 1 ]]; then
  rm -f "$env_file"
else
  rm -rf "$AJ_CP_DIR"
fi
echo "stop.sh: stopped control plane in $AJ_CP_DIR ($((${#running[@]} + ncomp)) processes, $killed after a 5 s grace period)"
