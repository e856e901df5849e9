#!/usr/bin/env bash
# Set-up command 2: install what is needed, build Release once (build-release/, no tests), then
# build and run the whole test suite twice: a normal build (build/) and an ASan+UBSan build
# (build-asan/), after a short bounded run of the
# libFuzzer targets (tests/fuzz/run.sh, a clang build in build-fuzz/). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh
jobs=$(nproc)
# Release once, the build only (its -O3 and no asserts raise warnings the other types do not, and
# -Werror stops a packager's build at them); the tests run on the two trees below.
echo "== build: Release (build-release, no tests)"
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-release -j"$jobs"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DHWEMU_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
# Scaphandre for tests/cli/test_scaphandre.sh, built here rather than inside the parallel tests
# (a few minutes on both CPUs); without a Rust toolchain the test says what is missing and skips.
echo "== Scaphandre 1.0.0 from crates.io (scripts/fetch-scaphandre.sh build)"
scripts/fetch-scaphandre.sh build >/dev/null || echo "(not built: tests/cli/test_scaphandre.sh will say why)"
# The Kubernetes control plane (etcd, kube-apiserver, kube-scheduler, kube-controller-manager,
# kubectl, KWOK, helm) for the Kubernetes tests, built here from pinned Go modules rather than inside
# the parallel tests (about 25 min of CPU the first time, once per cache: ~/.cache/hwemu/kubernetes);
# without Go >= 1.26 the tests say what is missing and skip.
echo "== Kubernetes control plane from Go modules (scripts/fetch-kubernetes.sh build)"
scripts/fetch-kubernetes.sh build >/dev/null || echo "(not built: the Kubernetes tests will say why)"
echo "== fuzz: every tests/fuzz target for 12 s on its corpus (clang build in build-fuzz)"
tests/fuzz/run.sh 12 build-fuzz
echo "== tests: normal build"
ctest --test-dir build --output-on-failure -j"$jobs"
echo "== tests: ASan+UBSan build"
# the sanitizer tree's Scaphandre test reuses the normal tree's build (scripts/fetch-scaphandre.sh)
HWEMU_SCAPHANDRE=$PWD/build/scaphandre/bin/scaphandre \
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs"
