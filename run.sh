#!/usr/bin/env bash
# Set-up command 1: install what is needed, build, and run `hwemu serve` on the embedded
# default cluster spec (specs/smoke.yaml) until Ctrl-C. Options are passed on to serve
# (./run.sh --addr 127.0.0.1:9000 --root /tmp/hwemu).
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
exec build/hwemu serve "$@"
