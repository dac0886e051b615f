#!/usr/bin/env bash
# The README's main command: build aj and show what it makes of the bundled
# example templates, ending with the Volcano Job for the `volcano` template.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

cmake -S . -B build -G Ninja -DAJ_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target aj >/dev/null

aj=build/src/aj
export AJ_HOME=examples/.azure_jobs

echo "== aj template list"
"$aj" template list
echo
echo "== aj template validate"
"$aj" template validate
echo
echo "== aj render -t volcano --name demo python train.py --epochs 3"
"$aj" render -t volcano --name demo python train.py --epochs 3
