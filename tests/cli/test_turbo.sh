#!/usr/bin/env bash
# Turning turbo off as tools do (tee into intel_pstate/no_turbo and cpufreq/boost), read back at
# once with linux-cpupower's `cpupower frequency-info` and cat: cpuinfo_max_freq falls to the base
# frequency and scaling_max_freq to at most that at the write, long before the engine's next tick
# (10 s here); the physics follows from that tick on. Expected values: intel-xeon-2s-rapl (turbo
# 3.9 GHz, base 2.4 GHz: ark8260) and amd-epyc-2s-hsmp (boost 4.5 GHz, base 2.6 GHz: amd9655); the
# kernel's rules in docs/whole-node.md "cpufreq" (intel_pstate: cpuinfo_max_freq the base while
# no_turbo is 1, the verify clamping policy->max and keeping the request; amd_pstate_set_boost:
# the nominal frequency while boost is off).
# Usage: test_turbo.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
command -v cpupower >/dev/null || { echo "SKIP: cpupower (Debian: linux-cpupower) is not installed"; exit 77; }
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
port=$(free_port)
url=http://127.0.0.1:$port
serve_start "$url" "$tmp/err" --spec tests/specs/turbo.yaml --root "$tmp/r" --addr 127.0.0.1:$port --tick 10s ||
    { bad "serve: $(cat "$tmp/err")"; finish; }
X() { "$hwemu" exec --root "$tmp/r" --node "$@"; }
P=/sys/devices/system/cpu/cpufreq
limits() { X "$1" -- cpupower -c "$2" frequency-info 2>&1 | grep -E 'hardware limits|current policy'; }

# intel_pstate: no_turbo 1 at the write.
out=$(limits intel-0 0)
grep -q 'hardware limits: 1000 MHz - 3.90 GHz' <<<"$out" && ok || bad "intel before: $out"
X intel-0 -- sh -c 'echo 1 | tee /sys/devices/system/cpu/intel_pstate/no_turbo' >/dev/null && ok || bad "tee no_turbo"
out=$(limits intel-0 0)
grep -q 'hardware limits: 1000 MHz - 2.40 GHz' <<<"$out" && grep -q 'within 1000 MHz and 2.40 GHz' <<<"$out" &&
    ok || bad "intel after no_turbo 1: $out"
[ "$(X intel-0 -- cat $P/policy95/cpuinfo_max_freq $P/policy95/scaling_max_freq)" = $'2400000\n2400000' ] &&
    ok || bad "policy95 after no_turbo 1: $(X intel-0 -- cat $P/policy95/cpuinfo_max_freq $P/policy95/scaling_max_freq)"
# a request above the base while turbo is off shows the base, and shows again with turbo back on
X intel-0 -- cpupower -c 0 frequency-set -u 3GHz >/dev/null 2>&1 && ok || bad "frequency-set -u 3GHz"
[ "$(X intel-0 -- cat $P/policy0/scaling_max_freq)" = 2400000 ] && ok || bad "3 GHz request while turbo is off"
X intel-0 -- sh -c 'echo 0 | tee /sys/devices/system/cpu/intel_pstate/no_turbo' >/dev/null && ok || bad "tee no_turbo 0"
[ "$(X intel-0 -- cat $P/policy0/cpuinfo_max_freq $P/policy0/scaling_max_freq $P/policy1/scaling_max_freq)" = \
    $'3900000\n3000000\n3900000' ] && ok || bad "intel after no_turbo 0: $(X intel-0 -- cat $P/policy0/scaling_max_freq)"

# amd-pstate-epp: boost 0 at the write.
out=$(limits amd-0 5)
grep -q 'hardware limits: 1.50 GHz - 4.50 GHz' <<<"$out" && ok || bad "amd before: $out"
X amd-0 -- sh -c "echo 0 | tee $P/boost" >/dev/null && ok || bad "tee boost 0"
out=$(limits amd-0 5)
grep -q 'hardware limits: 1.50 GHz - 2.60 GHz' <<<"$out" && grep -q 'within 1.50 GHz and 2.60 GHz' <<<"$out" &&
    ok || bad "amd after boost 0: $out"
[ "$(X amd-0 -- cat $P/policy0/cpuinfo_max_freq $P/policy0/scaling_max_freq)" = $'2600000\n2600000' ] &&
    ok || bad "amd policy0 after boost 0"
# The physics from the next tick on: the performance governor runs at the 2.6 GHz ceiling, a DVFS
# throttle of 100 x (1 - 2.6/4.5) = 42.222222 % (docs/telemetry.md, joulie_sim_node_throttle_pct).
f=
for _ in $(seq 120); do
    f=$(curl -s "$url/telemetry/amd-0" | /usr/bin/python3 -c 'import json,sys; print(max(p["frequencyKHz"] for p in json.load(sys.stdin)["packages"]))')
    [ "$f" = 2600000 ] && break
    sleep 0.5
done
[ "$f" = 2600000 ] && ok || bad "amd-0 runs at $f kHz with boost off"
curl -s "$url/metrics" | grep -qx 'joulie_sim_node_throttle_pct{node="amd-0"} 42.222222' && ok || bad "throttle: $(curl -s "$url/metrics" | grep throttle_pct)"
X amd-0 -- sh -c "echo 1 | tee $P/boost" >/dev/null && ok || bad "tee boost 1"
grep -q 'hardware limits: 1.50 GHz - 4.50 GHz' <<<"$(limits amd-0 5)" && ok || bad "amd after boost 1"
finish
