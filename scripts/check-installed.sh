#!/usr/bin/env bash
# Runs an installed hwemu the way a user first does, with none of the variables that point at its
# parts (HWEMU_SHIM, HWEMU_FAKESMI, HWEMU_NVML_LIBRARY), so that it must find them relative to
# itself: serves the embedded spec (GET /healthz answers), execs `cat` of a RAPL energy counter
# (the shim), `nvidia-smi -L` (fakesmi) and checks the node's NVML link (the NVML library), then
# runs a generated 3-job trace to its end. Used by tests/cli/test_install.sh (a moved install tree)
# and scripts/ci-package.sh (the Debian package, /usr/bin/hwemu).
# Usage: scripts/check-installed.sh HWEMU      Exits non-zero, saying what failed, on any failure.
set -euo pipefail
hwemu=$1
tmp=$(mktemp -d)
pid=
cleanup() {
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "check-installed: $hwemu: $*" >&2; exit 1; }
unset HWEMU_SHIM HWEMU_AUDIT HWEMU_FAKESMI HWEMU_NVML_LIBRARY SIM_CLUSTER_SPEC SIM_HWEMU_ROOT SIM_ADDR SIM_RUNS_DIR
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$hwemu" serve --root "$tmp/root" --addr "127.0.0.1:$port" --tick 200ms 2>"$tmp/serve.err" &
pid=$!
for _ in $(seq 600); do
    curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || fail "serve exited: $(cat "$tmp/serve.err")"
    sleep 0.05
done
curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || fail "serve never answered /healthz in 30 s: $(cat "$tmp/serve.err")"
echo "serve: $(head -1 "$tmp/serve.err")"

e=$("$hwemu" exec --root "$tmp/root" --node intel-0 -- cat /sys/class/powercap/intel-rapl:0/energy_uj 2>&1) ||
    fail "exec cat energy_uj: $e"
[[ $e =~ ^[0-9]+$ ]] || fail "exec cat energy_uj printed \"$e\", not a counter"
echo "exec: intel-0 energy_uj $e"
# sxm-nopm-0 is an 8-GPU H100 node (specs/smoke.yaml): nvidia-smi there is fakesmi
gpus=$("$hwemu" exec --root "$tmp/root" --node sxm-nopm-0 -- nvidia-smi -L 2>&1) || fail "exec nvidia-smi -L: $gpus"
[ "$(grep -c '^GPU [0-7]: NVIDIA H100' <<<"$gpus")" = 8 ] || fail "nvidia-smi -L: $gpus"
nvml=$(readlink "$tmp/root/sxm-nopm-0.lib/libnvidia-ml.so.1") || fail "no NVML link in the node's .lib"
[ -f "$nvml" ] && [ "$(dirname "$nvml")" = "$(cd "$(dirname "$hwemu")/../lib/hwemu" && pwd)" ] ||
    fail "the node's NVML links to $nvml, not the tree's lib/hwemu"
echo "exec: nvidia-smi -L lists 8 GPUs; NVML $nvml"
kill "$pid"
wait "$pid" || fail "serve did not stop cleanly on SIGTERM: $(cat "$tmp/serve.err")"
pid=

"$hwemu" trace generate --jobs 3 --seed 7 --out "$tmp/trace.jsonl" 2>"$tmp/gen.err" || fail "trace generate: $(cat "$tmp/gen.err")"
"$hwemu" run --json --trace "$tmp/trace.jsonl" --root "$tmp/run-root" --speed max >"$tmp/summary.json" 2>"$tmp/run.err" ||
    fail "run exited $?: $(cat "$tmp/run.err")"
done_jobs=$(/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["state"], d["jobs"]["completed"])' \
    "$tmp/summary.json") || fail "run's summary is not JSON: $(head -c 300 "$tmp/summary.json")"
[ "$done_jobs" = "completed 3" ] || fail "run: state and completed jobs \"$done_jobs\", expected \"completed 3\""
echo "run: 3 jobs completed"
