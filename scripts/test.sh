#!/usr/bin/env bash
# Build aj and run every test suite: the unit and CLI tests (warnings as
# errors), the unit, CLI, corpus and torture tests again under AddressSanitizer
# + UBSan, the threaded suites (label tsan) under ThreadSanitizer (valgrind,
# the fuzz smoke run and the rest in the plain build), and the
# integration tests on a local cluster built from source: kube-apiserver, etcd,
# kube-controller-manager, kube-scheduler, kwok's simulated nodes and the real Volcano.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh --test
bash scripts/check-toolchain.sh

jobs=$(nproc)
cmake -S . -B build -G Ninja -DAJ_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$jobs"

cmake -S . -B build-asan -G Ninja -DAJ_WERROR=ON -DAJ_SANITIZE=ON \
  -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j "$jobs"

# ThreadSanitizer: the controller and the suites labelled tsan only, to keep CI short.
cmake -S . -B build-tsan -G Ninja -DAJ_WERROR=ON -DAJ_TSAN=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-tsan -j "$jobs" --target aj aj-controller \
  $(cd build-tsan && ctest -N -L tsan | sed -n 's/^ *Test *#[0-9]*: unit\.//p')

# The integration tests' cluster: control plane, then Volcano and kwok (one Go build at a time).
bash tests/controlplane/build.sh
bash tests/controlplane/build-cluster.sh
# The real nodes' kubelet (one more Go build, cached) and their images (pause, the Debian runtime).
bash tests/controlplane/build.sh --kubelet
bash tests/controlplane/node-images.sh >/dev/null
# helm for the chart tests, cached next to the control plane.
bash tests/helm/build-helm.sh
# promtool for the /metrics checks (one Go build, cached), and the test oracles' venv:
# azure-ai-ml's REST models for the Azure bodies, prometheus-client's parser.
bash tests/metrics/build-promtool.sh
bash tests/azure-models/setup-venv.sh

status=0
echo "== sanitizers (ASan + UBSan): unit, CLI, corpus and torture tests =="
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan -L 'unit|cli|torture' --output-on-failure -j "$jobs" || status=1
echo "== ThreadSanitizer: the threaded unit suites, the controller on the control plane =="
ctest --test-dir build-tsan -L tsan --output-on-failure || status=1
echo "== all suites =="
set +e
ctest --test-dir build --output-on-failure -j "$jobs" 2>&1 | tee build/ctest-all.log
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
set -e
# What the integration tests ran on (the cluster fixture's start-up, from ctest's log), then
# ctest's summary again so that it stays the last thing printed.
echo "== the local cluster the integration tests used =="
grep -hE '^(cluster-up|start)\.sh: ' build/Testing/Temporary/LastTest.log | grep -v 'control plane v' || true
echo "== summary of all suites =="
sed -n '/tests passed, .* tests failed out of /,$p' build/ctest-all.log
exit $status
