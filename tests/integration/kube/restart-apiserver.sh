#!/usr/bin/env bash
# Crash and restart the control plane's kube-apiserver (for the watch restart test).
source "$(dirname "$0")/../lib.sh"
restart_apiserver
