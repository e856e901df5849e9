#!/usr/bin/env bash
# `cpu MHz` in /proc/cpuinfo of idle and busy CPUs under intel_pstate in active mode (the view's
# idle marker, engine/segment/seg_view.h SEG_VIEW_CPUINFO), through both routes (preload and
# seccomp), read by grep and by python3-psutil 5.9.4 (cpu_freq per CPU takes cpuinfo's `cpu MHz`
# when there is one line per policy, psutil/_pslinux.py).
# Where the expectations come from: Linux 6.12.117 arch/x86/kernel/cpu/proc.c prints
# arch_freq_get_on_cpu(); arch/x86/kernel/cpu/aperfmperf.c returns the APERF/MPERF frequency only
# when the CPU took a tick sample in the last HZ/50 jiffies (20 ms), which an idle CPU has not, and
# otherwise cpufreq_quick_get() (drivers/cpufreq/cpufreq.c): intel_pstate has setpolicy and no
# get(), so policy->cur, which intel_pstate_set_policy sets to policy->min ("policy->cur is
# never updated with the intel_pstate driver"). So an idle CPU shows its policy's
# scaling_min_freq even with the performance governor or a raised minimum; a busy one its
# running frequency (here scaling_cur_freq).
# Usage: test_cpuinfo_idle.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT
/usr/bin/python3 -c 'import psutil' 2>/dev/null || { bad "python3-psutil is not installed"; finish; }
port=$(free_port)
serve_start "http://127.0.0.1:$port" "$tmp/err" --spec tests/specs/cpu-kernel-state.yaml --root "$tmp/r" \
    --addr 127.0.0.1:$port --tick 200ms || { bad "serve did not come up: $(cat "$tmp/err")"; finish; }
X() { local node=$1; shift; "$hwemu" exec --root "$tmp/r" --node "$node-0" ${route:+--intercept $route} -- "$@"; }
P=/sys/devices/system/cpu/cpufreq
mhz() { X "$1" grep '^cpu MHz' /proc/cpuinfo | sed -n "$(($2 + 1))p" | sed 's/.*: //'; }
# waits (5 s at most) until policy $2 of node $1 runs above its minimum: the physics answered the write
running_above_min() {
    local i cur min
    for i in $(seq 50); do
        cur=$(X "$1" cat $P/policy$2/scaling_cur_freq) min=$(X "$1" cat $P/policy$2/scaling_min_freq)
        [ "$cur" -gt "$min" ] && return 0
        sleep 0.1
    done
    return 1
}

# the writes (through the preload route; every route reads the same segment)
for node in clxidle:1000000 gnridle:800000 clx:1000000; do
    n=${node%%:*}
    X "$n" sh -c "echo performance > $P/policy0/scaling_governor && echo 2000000 > $P/policy1/scaling_min_freq" ||
        bad "$n: the writes failed"
    running_above_min "$n" 0 && ok || bad "$n: policy0 never ran above its minimum after performance was set"
done

for route in preload seccomp; do
    # idle CPUs: the policy's minimum, whatever the physics runs (policy0 performance, policy1 min 2 GHz)
    for node in clxidle:1000.000 gnridle:800.000; do
        n=${node%%:*} min=${node#*:}
        got="$(mhz $n 0) $(mhz $n 1) $(mhz $n 2)"
        [ "$got" = "$min 2000.000 $min" ] && ok ||
            bad "$route: cpu MHz of idle CPUs 0-2 on $n: $got (want $min 2000.000 $min; scaling_cur_freq of policy0: $(X $n cat $P/policy0/scaling_cur_freq))"
    done
    out=$(X clxidle /usr/bin/python3 -c '
import psutil
f = psutil.cpu_freq(percpu=True)
print(len(f), f[0].current, f[1].current, f[2].current)' 2>&1)
    [ "$out" = "96 1000.0 2000.0 1000.0" ] && ok || bad "$route: psutil cpu_freq on the idle 8260 node: $out"
    # a busy CPU (baseLoad 0.5): its running frequency, the value scaling_cur_freq shows. One
    # process reads scaling_cur_freq, cpu MHz, scaling_cur_freq again: a tick (200 ms) may fall
    # between two reads (the sanitizer build's are slow), so cpu MHz must be one of the two, and
    # the whole is tried again when the frequency moved twice in between.
    as_mhz() { echo "$(($1 / 1000)).$(printf %03d $(($1 % 1000)))"; }
    for i in $(seq 10); do
        read -r cur got cur2 < <(X clx sh -c "cat $P/policy0/scaling_cur_freq; grep -m1 '^cpu MHz' /proc/cpuinfo | sed 's/.*: //'; cat $P/policy0/scaling_cur_freq" | tr '\n' ' ')
        [ "$got" = "$(as_mhz "$cur")" ] || [ "$got" = "$(as_mhz "$cur2")" ] && break
    done
    { [ "$got" = "$(as_mhz "$cur")" ] || [ "$got" = "$(as_mhz "$cur2")" ]; } && [ "$cur" -gt 1000000 ] && ok ||
        bad "$route: cpu MHz of busy CPU 0 on clx: $got, scaling_cur_freq $cur before and $cur2 after"
done
finish
