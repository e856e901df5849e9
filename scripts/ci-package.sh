#!/usr/bin/env bash
# CI's package step (.ci/run, after ./test.sh): builds the Debian package of BUILD (cpack -G DEB,
# cmake/install.cmake), installs it with apt-get as a user would, runs /usr/bin/hwemu as a user
# first does (scripts/check-installed.sh: serve, exec, a run; `man hwemu-serve` finds its page) and
# removes the package again, whatever happened. Changes the machine: CI only, never ./test.sh.
# Usage: scripts/ci-package.sh BUILD     (as root, from the source tree)
set -euo pipefail
build=$1
out=$(mktemp -d)
installed=
cleanup() {
    [ -z "$installed" ] || DEBIAN_FRONTEND=noninteractive apt-get purge -y -q hwemu >/dev/null
    rm -rf "$out"
}
trap cleanup EXIT
if dpkg-query -W -f='${Status}' hwemu 2>/dev/null | grep -q "install ok installed"; then
    echo "ci-package: a hwemu package is installed already; not replacing it" >&2
    exit 1
fi
cpack --config "$build/CPackConfig.cmake" -G DEB -B "$out" >"$out/cpack.log" || { cat "$out/cpack.log"; exit 1; }
deb=$(ls "$out"/hwemu_*.deb)
echo "== package: $(basename "$deb"), Depends: $(dpkg-deb -f "$deb" Depends)"
installed=yes
DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$deb"
[ "$(command -v hwemu)" = /usr/bin/hwemu ] || { echo "ci-package: hwemu on PATH is $(command -v hwemu), not /usr/bin/hwemu" >&2; exit 1; }
scripts/check-installed.sh /usr/bin/hwemu
man -w hwemu-serve | grep -qx /usr/share/man/man1/hwemu-serve.1.gz ||
    { echo "ci-package: man -w hwemu-serve: $(man -w hwemu-serve 2>&1)" >&2; exit 1; }
echo "== package: installed, ran from /usr/bin, removed"
