#!/usr/bin/env bash
# Installs the PyPI clients of AMD's SMI libraries that tests/cli/test_amdsmi.sh runs against the
# node's libraries: a venv DIR with amdsmi 7.0.2 (AMD's Python bindings of libamd_smi.so) and
# pyrsmi 1.1.0 (on those bindings), and pyrsmi 0.2.0 (the last on librocm_smi64.so) in
# DIR/pyrsmi02, a directory for PYTHONPATH. pip's cache is ~/.cache/hwemu/pip (outside the clone),
# so a second build tree installs from it without the network.
#   scripts/fetch-amdsmi-clients.sh DIR
# Prints nothing and does nothing when DIR is ready; safe to run concurrently (a lock beside DIR).
set -euo pipefail
dir=${1:?usage: fetch-amdsmi-clients.sh DIR}
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9
[ -f "$dir/.ready" ] && exit 0
export PIP_CACHE_DIR=${PIP_CACHE_DIR:-$HOME/.cache/hwemu/pip} PIP_DISABLE_PIP_VERSION_CHECK=1
rm -rf "$dir"
/usr/bin/python3 -m venv "$dir"
"$dir/bin/pip" install -q amdsmi==7.0.2 pyrsmi==1.1.0
"$dir/bin/pip" install -q --no-deps --target "$dir/pyrsmi02" pyrsmi==0.2.0
touch "$dir/.ready"
