#!/usr/bin/env bash
# Runs once per node before the job command (environment.setup).
set -euo pipefail
python -m pip install --upgrade pip
python -m pip install -e .
