#!/usr/bin/env bash
# The Debian package: `cpack -G DEB` of this build (cmake/install.cmake) makes hwemu_<version>_<arch>.deb
# with the install tree under /usr (bin/hwemu; lib/hwemu/ with the shim, the NVML library and
# fakesmi; the profiles, specs, docs, man pages and bash completion under share/), a Depends line
# dpkg-shlibdeps computed (the libraries hwemu links), and binaries that work where the package is
# unpacked (dpkg-deb -x, then scripts/check-installed.sh). Installing it system-wide and running
# /usr/bin/hwemu is CI's step (scripts/ci-package.sh): a test must not change the machine.
# Usage: test_package.sh HWEMU_BINARY   (run from the source tree; the build tree is the binary's)
set -u
hwemu=$1
build=$(cd "$(dirname "$hwemu")" && pwd)
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cpack --config "$build/CPackConfig.cmake" -G DEB -B "$tmp/out" >"$tmp/cpack.log" 2>&1 || { bad "cpack: $(tail -5 "$tmp/cpack.log")"; finish; }
version=$("$hwemu" --version | cut -d' ' -f2)
deb=$tmp/out/hwemu_${version}_$(dpkg --print-architecture).deb
[ -f "$deb" ] && ok || { bad "no $deb: $(ls "$tmp/out")"; finish; }
dpkg-deb -c "$deb" | awk '{print $6}' >"$tmp/files"
for f in ./usr/bin/hwemu ./usr/lib/hwemu/libhwemu-shim.so ./usr/lib/hwemu/libhwemu-audit.so ./usr/lib/hwemu/libhwemu-nvml.so ./usr/lib/hwemu/fakesmi \
         ./usr/share/man/man1/hwemu.1.gz ./usr/share/man/man1/hwemu-serve.1.gz ./usr/share/bash-completion/completions/hwemu \
         ./usr/share/doc/hwemu/README.md ./usr/share/hwemu/specs/smoke.yaml ./usr/share/hwemu/profiles/intel-xeon-2s-rapl.yaml; do
    grep -qx "$f" "$tmp/files" && ok || bad "the package has no $f"
done
grep -v '^\./usr/' "$tmp/files" | grep -vx '\./' >"$tmp/outside"
[ ! -s "$tmp/outside" ] && ok || bad "the package installs outside /usr: $(head -3 "$tmp/outside")"
[ "$(dpkg-deb -f "$deb" Package Version Architecture | tr '\n' ' ')" = "Package: hwemu Version: $version Architecture: $(dpkg --print-architecture) " ] &&
    ok || bad "control fields: $(dpkg-deb -f "$deb" Package Version Architecture)"
# Depends from dpkg-shlibdeps: the Debian packages of the libraries hwemu links (CMakeLists.txt's pkg-config modules)
depends=$(dpkg-deb -f "$deb" Depends)
for p in libc6 libyaml-0-2 libcjson1 liburcu8 libmicrohttpd12 libcurl4 libseccomp2; do
    grep -q "\b$p\b" <<<"$depends" && ok || bad "Depends lacks $p: $depends"
done
# unpacked anywhere, its hwemu works (stripped binaries, its parts found beside it)
dpkg-deb -x "$deb" "$tmp/root" || bad "dpkg-deb -x"
scripts/check-installed.sh "$tmp/root/usr/bin/hwemu" >"$tmp/check.out" 2>&1 && ok || bad "the unpacked package: $(cat "$tmp/check.out")"
finish
