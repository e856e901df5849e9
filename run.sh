#!/usr/bin/env bash
# Set-up command 1: install what is needed, build, and run hwemu on the embedded default
# cluster spec (specs/smoke.yaml). Until `hwemu serve` exists this lists the smoke cluster.
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
exec build/hwemu clusterspec list --spec specs/smoke.yaml
