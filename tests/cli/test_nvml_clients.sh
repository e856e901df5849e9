#!/usr/bin/env bash
# NVML clients no one here wrote, on the node's NVML under `hwemu exec`:
# - nvidia-ml-py 12.535.161 (PyPI, `import pynvml`) in a venv under the build tree
#   (tests/nvml/pynvml_client.py),
# - Debian's nvml-wrapper 0.9 (librust-nvml-wrapper-dev), built offline against
#   /usr/share/cargo/registry (tests/nvml/rust-client),
# - NVIDIA's go-nvml v0.13.4-1 (the Go module proxy; tests/nvml/go-client), the binding Kepler
#   uses: a Go binary, so `hwemu exec` runs it under the seccomp supervisor,
# - Debian's nvtop 3.0.1 (contrib, scripts/fetch-nvidia-smi.sh) in tmux, its screen captured
#   (3.0.1 has no snapshot mode).
# Each reads power, energy and limits (equal to what fakesmi's nvidia-smi reads from the same
# files) and sets a limit, with the errors the profile implies: out of range InvalidArgument,
# without root (HWEMU_UNPRIVILEGED=1) NoPermission, a fieldSupport token NotSupported.
# Usage: test_nvml_clients.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
build=$(cd "$(dirname "$hwemu")" && pwd)
fakesmi=${HWEMU_FAKESMI:-$build/fakesmi}
root=$(mktemp -d)
pid=
tmux_sock=hwemu-nvml-$$
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; tmux -L $tmux_sock kill-server 2>/dev/null; rm -rf "$root"' EXIT

cat >"$root/spec.yaml" <<'EOF'
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: nvml-clients}
spec:
  defaults:
    baseLoad: {cpuUtil: 0.5, gpuUtil: 1.0, memoryIntensity: 0.2, gpuClass: gpu.compute_bound}
  pools:
  - {name: sxm, profile: nvidia-h100-sxm-8gpu, count: 1}
  - {name: l40s, profile: nvidia-l40s-4gpu, count: 1}
  - {name: fs, profile: nvidia-h100-nvl-8gpu, count: 1, overrides: {gpus: {fieldSupport: {power.min_limit: "[N/A]"}}}}
EOF
port=$(free_port)
serve_start http://127.0.0.1:$port "$root/serve.err" --spec "$root/spec.yaml" --root "$root/r" \
    --addr 127.0.0.1:$port --tick 200ms || { bad "serve did not come up: $(cat "$root/serve.err")"; finish; }

# field NODE GPU FIELD: one --query-gpu value of fakesmi, without unit.
field() { HWEMU_ROOT=$root/r HWEMU_NODE=$1 "$fakesmi" nvidia-smi -i "$2" --query-gpu="$3" --format=csv,noheader,nounits; }
# mw WATTS: "300.00" -> 300000
mw() { awk -v w="$1" 'BEGIN { printf "%d\n", w * 1000 + 0.5 }'; }
# client NAME NODE ARGS...: runs a client under hwemu exec, key=value lines into $out.
client() {
    local what=$1 node=$2
    shift 2
    out=$("$hwemu" exec --root "$root/r" --node "$node" -- "$@" 2>"$root/err")
    rc=$?
    [ $rc = 0 ] || bad "$what on $node exited $rc: $out $(cat "$root/err")"
}
# key NAME: a value of the last client's output.
key() { sed -n "s/^$1=//p" <<<"$out"; }
# check_client WHAT CMD...: the checks every client passes (the GPU-1 limit, power, energy,
# setting, refusals), CMD being the client's command line without its arguments.
check_client() {
    local what=$1
    shift
    client "$what" sxm-0 "$@" 1
    [ "$(key count)" = 8 ] && [ "$(key limit_mw)" = "$(mw "$(field sxm-0 1 power.limit)")" ] &&
        [ "$(key default_mw)" = 700000 ] && [ "$(key constraints_mw)" = 200000,700000 ] && ok ||
        bad "$what: limits $out"
    local p e1 e2
    p=$(key power_usage_mw) e1=$(key energy_mj)
    [[ $p =~ ^[0-9]+$ ]] && [ "$p" -gt 0 ] && [ "$p" -le 700000 ] && ok || bad "$what: power $p mW"
    sleep 0.5
    client "$what" sxm-0 "$@" 1
    e2=$(key energy_mj)
    [[ $e1 =~ ^[0-9]+$ ]] && [[ $e2 =~ ^[0-9]+$ ]] && [ "$e2" -gt "$e1" ] && ok || bad "$what: energy $e1 -> $e2 mJ"
    client "$what" sxm-0 "$@" 1 350000 100000
    [ "$(key set_350000)" = ok ] && [ "$(key limit_after_mw)" = 350000 ] && [ "$(field sxm-0 1 power.limit)" = 350.00 ] &&
        ok || bad "$what: set 350 W: $out"
    case "$(key set_100000)" in
    err:InvalidArg | err:NVMLError_InvalidArgument | "err:Invalid Argument") ok ;;
    *) bad "$what: set 100 W: $out" ;;
    esac
    out=$(HWEMU_UNPRIVILEGED=1 "$hwemu" exec --root "$root/r" --node sxm-0 -- "$@" 1 400000 2>&1)
    case "$(key set_400000)" in
    err:NoPermission | err:NVMLError_NoPermission | "err:Insufficient Permissions") ok ;;
    *) bad "$what: unprivileged: $out" ;;
    esac
    [ "$(field sxm-0 1 power.limit)" = 350.00 ] && ok || bad "$what: the refused set wrote"
    client "$what" fs-0 "$@" 0 300000
    case "$(key constraints_mw) $(key set_300000)" in
    "err:NotSupported err:NotSupported" | "err:NVMLError_NotSupported err:NVMLError_NotSupported" | \
        "err:Not Supported err:Not Supported") ok ;;
    *) bad "$what: fieldSupport node: $out" ;;
    esac
    client "$what" l40s-0 "$@" 2
    [ "$(key name)" = "NVIDIA L40S" ] || [ "$(key name)" = '"NVIDIA L40S"' ] && [ "$(key constraints_mw)" = 100000,350000 ] &&
        ok || bad "$what: L40S: $out"
}

# Python: nvidia-ml-py from PyPI, in a venv of the build tree (made once).
venv=$build/nvml-venv
if nvml_venv "$build" "$root/pip.log"; then
    check_client pynvml "$venv/bin/python" tests/nvml/pynvml_client.py
    client pynvml l40s-0 "$venv/bin/python" tests/nvml/pynvml_client.py 0
    [ "$(key processes)" = "[]" ] && [ "$(key error_string_4)" = "Insufficient Permissions" ] &&
        [ "$(key memory_total_mib)" = 46068 ] && ok || bad "pynvml extras: $out"
else
    bad "cannot install nvidia-ml-py into $venv: $(tail -5 "$root/pip.log")"
fi

# Rust: Debian's nvml-wrapper 0.9, offline. It loads "libnvidia-ml.so" (the lib dir has it).
cargo=$(command -v cargo || echo "$HOME/.cargo/bin/cargo")
registry=/usr/share/cargo/registry
if [ ! -d $registry/nvml-wrapper-0.9.0 ]; then
    bad "no $registry/nvml-wrapper-0.9.0: apt-get install librust-nvml-wrapper-dev"
elif ! CARGO_TARGET_DIR=$build/nvml-rust-client CARGO_HOME=$build/cargo-home "$cargo" build --offline --release -q \
    --manifest-path tests/nvml/rust-client/Cargo.toml --config 'source.crates-io.replace-with="debian"' \
    --config "source.debian.directory=\"$registry\"" >"$root/cargo.log" 2>&1; then
    bad "cargo build of tests/nvml/rust-client failed: $(tail -15 "$root/cargo.log")"
else
    check_client nvml-wrapper "$build/nvml-rust-client/release/hwemu-nvml-rust-client"
fi

# Go: go-nvml (cgo; it dlopens libnvidia-ml.so.1 itself), built once per build tree.
gobin=$build/nvml-go-client
(
    flock 9
    [ "$gobin" -nt tests/nvml/go-client/main.go ] && exit 0
    cd tests/nvml/go-client && CGO_ENABLED=1 go build -o "$gobin" .
) 9>"$build/.nvml-go.lock" >"$root/gobuild.log" 2>&1
if [ -x "$gobin" ]; then
    check_client go-nvml "$gobin"
    client go-nvml l40s-0 "$gobin" 0
    [ "$(key processes)" = 0 ] && ok || bad "go-nvml processes: $out"
else
    bad "go build of tests/nvml/go-client failed: $(grep -v warning "$root/gobuild.log" | tail -10)"
fi

# nvtop: every GPU with its clocks, temperature, power draw / enforced limit and utilisation.
if ! scripts/fetch-nvidia-smi.sh "$build/nvidia-tools"; then
    bad "cannot fetch Debian's nvtop (scripts/fetch-nvidia-smi.sh)"
elif ! command -v tmux >/dev/null; then
    bad "tmux is needed (apt-get install tmux)"
else
    tmux -L $tmux_sock -f /dev/null new-session -d -x 170 -y 45 \
        "TERM=xterm LANG=C.UTF-8 $hwemu exec --root $root/r --node l40s-0 -- $build/nvidia-tools/nvtop/usr/bin/nvtop -d 2 2>$root/nvtop.err; sleep 60"
    screen=
    for _ in $(seq 50); do
        sleep 0.2
        screen=$(tmux -L $tmux_sock capture-pane -p -t 0 2>/dev/null)
        [ "$(grep -oE 'POW +[0-9]+ / 350 W' <<<"$screen" | wc -l)" = 4 ] && break
    done
    tmux -L $tmux_sock kill-server 2>/dev/null
    echo "$screen" >"$root/nvtop.txt"
    for g in 0 1 2 3; do
        grep -q "Device $g \[NVIDIA L40S\]" <<<"$screen" && ok || bad "nvtop: no device $g: $screen $(cat "$root/nvtop.err")"
    done
    # two GPUs a line: count matches, not lines
    [ "$(grep -oE 'GPU +[0-9]+MHz +MEM +[0-9]+MHz +TEMP +[0-9]+.C +FAN +N/A% +POW +[0-9]+ / 350 W' <<<"$screen" | wc -l)" = 4 ] &&
        [ "$(grep -oE 'GPU\[[| ]*[0-9]+%\] +MEM\[[| ]*[0-9.]+Gi/44.988Gi\]' <<<"$screen" | wc -l)" = 4 ] && ok ||
        bad "nvtop rows: $screen"
fi

finish
