#!/usr/bin/env bash
# Installs the Debian packages hwemu needs to build and test, when any is missing.
# Used by ./run.sh and ./test.sh; safe to run again (does nothing when all are present).
set -euo pipefail
packages=(
  build-essential cmake pkg-config
  libyaml-dev libcjson-dev liburcu-dev libmicrohttpd-dev libcurl4-openssl-dev libseccomp-dev
  libcmocka-dev
  python3 python3-yaml curl prometheus
  powercap-utils linux-cpupower python3-psutil prometheus-node-exporter lm-sensors tlp
  msr-tools likwid ipmitool freeipmi-tools python3-venv tmux librust-nvml-wrapper-dev chromium
  clang-14 libclang-rt-14-dev openssl util-linux
  pciutils hwloc numactl rocm-smi gdb gnuplot-nox busybox-static sysfsutils man-db
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm: Debian's, unless a Node.js with its own npm is there (they conflict).
command -v npm >/dev/null || missing+=(nodejs npm)
# cargo (the Rust NVML client; Scaphandre, scripts/fetch-scaphandre.sh, which needs rustc >= 1.64 and
# so rustup's: with Debian's 1.63 its test is skipped): Debian's, unless a Rust toolchain of its own is there (rustup's).
command -v cargo >/dev/null || [ -x "$HOME/.cargo/bin/cargo" ] || missing+=(cargo)
# Go (the Go agent and benchmarks): the machine's own toolchain when it has one (a newer Go from
# go.dev, first on PATH), else Debian's golang-go.
command -v go >/dev/null || dpkg-query -W -f='${Status}' golang-go 2>/dev/null | grep -q "install ok installed" ||
  missing+=(golang-go)
[ ${#missing[@]} -eq 0 ] && exit 0
echo "hwemu: installing ${missing[*]}" >&2
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
"${sudo[@]}" apt-get update -q
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
