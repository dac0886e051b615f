#!/usr/bin/env bash
# kwok's container logs for the local cluster: writes one log file per role into DIR and prints the
# ClusterLogs that serves them (kwok reads them through the API server's pods/log, as a kubelet's).
# kwok matches a log to a container by name, and aj names each pod's container after its role:
#   master   DIR/master.log   (and DIR/master-previous.log for --previous)
#   worker   DIR/worker.log
#   others   DIR/task.log     (heterogeneous tasks, helper pods)
# The files are in the CRI log format the kubelet reads ("TIME STREAM F|P TEXT"); follow keeps a
# stream open for lines appended later (tests append to these files).
#
# Usage: tests/controlplane/cluster/logs.sh DIR >kwok-logs.yaml
set -euo pipefail
dir=${1:?usage: logs.sh DIR}
mkdir -p "$dir"
line() { printf '%s %s F %s\n' "$1" "$2" "$3"; }
{
  line 2024-05-01T12:00:00.000000000Z stdout "master: starting rank 0"
  line 2024-05-01T12:00:01.000000000Z stdout "master: step 1 loss 2.31"
  line 2024-05-01T12:00:02.000000000Z stderr "master: warning: slow step"
  line 2024-05-01T12:00:03.000000000Z stdout "master: done"
} >"$dir/master.log"
{
  line 2024-05-01T11:00:00.000000000Z stdout "master: previous run"
  line 2024-05-01T11:00:01.000000000Z stderr "master: previous run crashed"
} >"$dir/master-previous.log"
{
  line 2024-05-01T12:00:00.500000000Z stdout "worker: starting"
  line 2024-05-01T12:00:01.500000000Z stdout "worker: step 1"
  line 2024-05-01T12:00:03.500000000Z stdout "worker: done"
} >"$dir/worker.log"
{
  line 2024-05-01T12:00:00.000000000Z stdout "task: starting"
  line 2024-05-01T12:00:01.000000000Z stdout "task: done"
} >"$dir/task.log"
cat <<YAML
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata: {name: aj-roles}
spec:
  logs:
  - {containers: [master], logsFile: "$dir/master.log", previousLogsFile: "$dir/master-previous.log", follow: true}
  - {containers: [worker], logsFile: "$dir/worker.log", previousLogsFile: "$dir/worker.log", follow: true}
  - {logsFile: "$dir/task.log", previousLogsFile: "$dir/task.log", follow: true}
YAML
