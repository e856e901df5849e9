#!/usr/bin/env bash
# Builds Scaphandre 1.0.0 (the energy exporter of hubblo-org, Rust) from its crates.io crate into
# BUILD_DIR/scaphandre, unmodified, with the features the tests use: the Prometheus exporter
# (`prometheus`) and the JSON exporter (`json`). Not built: `containers` (Docker and Kubernetes API
# clients; hwemu has neither daemon), `riemann`, `warpten`, `prometheuspush` (push clients).
#   scripts/fetch-scaphandre.sh BUILD_DIR
# Leaves BUILD_DIR/scaphandre/bin/scaphandre and prints its path; prints nothing else when it is
# already there (once per build tree). Built with cargo's debug profile (`--debug`): on this 2-CPU
# machine, under load, the release profile took 11 min 11 s (5 min 3 s of CPU) and the debug one
# 7 min 21 s (2 min 39 s of CPU) with a hot download cache (bench/README.md), and the tests need no
# speed from it (a refresh reads a few hundred files). Nothing outside BUILD_DIR changes except cargo's download
# cache in CARGO_HOME (~/.cargo). The crate's own Cargo.lock is used (`--locked`), so the
# dependency versions are the release's.
# Exit status: 0 built or present; 3 no usable Rust toolchain (cargo missing, or rustc older than
# the locked dependencies' minimum 1.64: clap 4.2.4's `rust-version`); 1 the build failed (the
# download from crates.io included), with the log's tail on stderr.
set -euo pipefail
dir=${1:?usage: fetch-scaphandre.sh BUILD_DIR}
version=1.0.0
features=prometheus,json
mkdir -p "$dir/scaphandre"
dir=$(cd "$dir" && pwd)
out=$dir/scaphandre
bin=$out/bin/scaphandre
exec 9>"$out/.fetch.lock"
flock 9
if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q " $version\$"; then
    echo "$bin"
    exit 0
fi

# The toolchain: cargo on PATH, else rustup's in ~/.cargo/bin (CI's PATH may lack it).
cargo=${CARGO:-$(command -v cargo || true)}
[ -z "$cargo" ] && [ -x "$HOME/.cargo/bin/cargo" ] && cargo=$HOME/.cargo/bin/cargo
if [ -z "$cargo" ]; then
    echo "fetch-scaphandre: cargo is missing: install a Rust toolchain >= 1.64 (rustup, https://rustup.rs;" \
         "Debian 12's cargo package brings rustc 1.63, too old for Scaphandre $version's locked dependencies)" >&2
    exit 3
fi
rustc=$(dirname "$cargo")/rustc
[ -x "$rustc" ] || rustc=rustc
rv=$("$rustc" --version 2>/dev/null | awk '{print $2}')
if [ -z "$rv" ] || [ "$(printf '%s\n1.64.0\n' "${rv%%-*}" | sort -V | head -1)" != 1.64.0 ]; then
    echo "fetch-scaphandre: rustc ${rv:-not found} next to $cargo is older than 1.64, the minimum of" \
         "Scaphandre $version's locked dependencies (clap 4.2.4): install a newer toolchain (rustup)" >&2
    exit 3
fi

log=$out/build.log
start=$(date +%s)
# --target-dir in the build tree, removed after: cargo's temporary one would be under TMPDIR.
if ! PATH="$(dirname "$cargo"):$PATH" "$cargo" install --locked --debug --root "$out" --version "$version" \
        --no-default-features --features "$features" --target-dir "$out/target" scaphandre >"$log" 2>&1; then
    echo "fetch-scaphandre: cargo install scaphandre $version failed (log: $log):" >&2
    tail -8 "$log" >&2
    if grep -qiE 'failed to (download|query|get|fetch)|could not resolve|network|timed out|connection' "$log"; then
        echo "fetch-scaphandre: crates.io could not be reached: the build needs the network to crates.io once" \
             "per build tree (cargo's cache in ~/.cargo/registry serves later builds)" >&2
    fi
    exit 1
fi
rm -rf "$out/target"
[ -x "$bin" ] || { echo "fetch-scaphandre: cargo reported success but $bin is missing (log: $log)" >&2; exit 1; }
echo "fetch-scaphandre: built Scaphandre $version ($features, debug profile) in $(( $(date +%s) - start )) s" >>"$log"
echo "$bin"
