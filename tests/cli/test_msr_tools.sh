#!/usr/bin/env bash
# The MSR tools nobody here wrote, on an Intel and an AMD node (docs/interfaces.md "MSR devices"):
#   turbostat (Debian linux-cpupower 6.1)   Busy%, Avg_MHz, Bzy_MHz, CPU%c6, Pkg%pc6, PkgWatt and
#                                           RAMWatt over one 3 s interval, against the engine's
#                                           /telemetry/<node> of the same steady state
#   likwid-powermeter (Debian likwid 5.2.2) the packages' power through its access daemon
#   env -i                                  a program started with an emptied environment stays
#                                           on its node
# turbostat asks for RLIMIT_NOFILE 32768, above this sandbox's hard limit: a one-call stub
# (built here) lets that setrlimit succeed. Where each expected value comes from is said at each
# check. Bounded: one engine, ~40 s.
# Usage: test_msr_tools.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
for tool in turbostat likwid-powermeter rdmsr curl gcc; do
    command -v $tool >/dev/null ||
        { bad "$tool is missing (scripts/install-deps.sh: linux-cpupower likwid msr-tools curl gcc)"; finish; }
done
port=$(free_port)
url=http://127.0.0.1:$port
serve_start "$url" "$tmp/err" --spec tests/specs/msr_tools.yaml --root "$tmp/r" --addr 127.0.0.1:$port --tick 200ms ||
    { bad "serve: $(cat "$tmp/err")"; finish; }
shim=$(cd "$(dirname "$hwemu")" && pwd)/libhwemu-shim.so
cat >"$tmp/rl.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/resource.h>
int setrlimit(__rlimit_resource_t r, const struct rlimit *l)
{
    int (*real)(__rlimit_resource_t, const struct rlimit *) = (int (*)(__rlimit_resource_t, const struct rlimit *))dlsym(RTLD_NEXT, "setrlimit");
    return r == RLIMIT_NOFILE ? 0 : real(r, l);
}
C
gcc -shared -fPIC -o "$tmp/rl.so" "$tmp/rl.c" -ldl || { bad "rlimit stub build"; finish; }
X() { "$hwemu" exec --root "$tmp/r" --node "$@"; }
sleep 2 # the frequency and the power settle at the spec's steady half load

# within A B PCT: A is within PCT % of B
within() { python3 -c "import sys; a, b, p = map(float, sys.argv[1:]); sys.exit(0 if abs(a - b) <= p / 100 * abs(b) else 1)" "$@"; }
# col TEXT NAME: the summary row's value of column NAME in turbostat's tab-separated output
col() { awk -F'\t' -v n="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) c = i; next } c { print $c; exit }' <<<"$1"; }
telem() { curl -sf "$url/telemetry/$1"; }
tj() { python3 -c "import json, sys; d = json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"; }

for node in intel-0 amd-0; do
    out=$(X $node -- env LD_PRELOAD="$tmp/rl.so $shim" turbostat --quiet -S -n 1 -i 3 2>"$tmp/ts.err" | grep -v '^turbostat')
    t=$(telem $node)
    [ -n "$(col "$out" Busy%)" ] || { bad "$node: turbostat printed no summary: $(head -c 600 "$tmp/ts.err") $out"; continue; }
    # Busy% = 100 ΔMPERF/ΔTSC: the engine's utilisation (the spec's baseLoad cpuUtil 0.5, /telemetry cpu.utilization)
    util=$(tj 'd["cpu"]["utilization"] * 100' <<<"$t")
    within "$(col "$out" Busy%)" "$util" 1 && ok || bad "$node Busy% $(col "$out" Busy%) vs the engine's $util"
    # Avg_MHz = ΔAPERF/interval: utilisation x the packages' running frequency (/telemetry packages[].frequencyKHz)
    mhz=$(tj 'sum(p["frequencyKHz"] for p in d["packages"]) / len(d["packages"]) / 1000' <<<"$t")
    avg=$(python3 -c "print($util / 100 * $mhz)")
    within "$(col "$out" Avg_MHz)" "$avg" 1.5 && ok || bad "$node Avg_MHz $(col "$out" Avg_MHz) vs the engine's $avg"
    # Bzy_MHz: on AMD TSC_MHz x ΔAPERF/ΔMPERF = the running frequency; on Intel turbostat scales by
    # MSR_PLATFORM_INFO's base (2400 MHz, the profile) where MPERF counts at the host's TSC rate
    # (TSC_MHz, the RDTSC no shim changes): base / TSC_MHz x the running frequency (docs/interfaces.md)
    if [ $node = intel-0 ]; then bzy=$(python3 -c "print($mhz * 2400 / $(col "$out" TSC_MHz))"); else bzy=$mhz; fi
    within "$(col "$out" Bzy_MHz)" "$bzy" 1.5 && ok || bad "$node Bzy_MHz $(col "$out" Bzy_MHz) vs $bzy"
    if [ $node = intel-0 ]; then
        # PkgWatt: the sum of the packages' power (/telemetry packages[].powerWatts, steady)
        pw=$(tj 'sum(p["powerWatts"] for p in d["packages"])' <<<"$t")
        within "$(col "$out" PkgWatt)" "$pw" 1 && ok || bad "$node PkgWatt $(col "$out" PkgWatt) vs the engine's $pw"
        # RAMWatt: the DRAM power (/telemetry cpu.dramPowerWatts)
        rw=$(tj 'd["cpu"]["dramPowerWatts"]' <<<"$t")
        within "$(col "$out" RAMWatt)" "$rw" 1 && ok || bad "$node RAMWatt $(col "$out" RAMWatt) vs the engine's $rw"
        # CPU%c6: the idle share (100 - utilisation) x the C6 share of idle time the cpuidle files
        # give (render_cpuidle: 695 permille on Cascade Lake); every CPU equally loaded, so the
        # package's PC6 is the same
        c6=$(python3 -c "print((100 - $util) * 0.695)")
        within "$(col "$out" CPU%c6)" "$c6" 1 && ok || bad "$node CPU%c6 $(col "$out" CPU%c6) vs $c6"
        within "$(col "$out" Pkg%pc6)" "$c6" 1 && ok || bad "$node Pkg%pc6 $(col "$out" Pkg%pc6) vs $c6"
    fi
done

# likwid-powermeter through its access daemon (started by likwid with a cleared environment):
# the package power of socket 0 against /telemetry's, steady.
out=$(X intel-0 -- likwid-powermeter -s 2s 2>&1)
t=$(telem intel-0)
lw=$(awk '/Measure for socket 0/ { s = 1 } s && /Domain PKG/ { p = 1 } p && /Power consumed/ { print $3; exit }' <<<"$out")
p0=$(tj 'd["packages"][0]["powerWatts"]' <<<"$t")
[ -n "$lw" ] && within "$lw" "$p0" 5 && ok || bad "likwid-powermeter socket 0 PKG ${lw:-none} W vs the engine's $p0: $(tail -5 <<<"$out")"

# env -i: the child of an emptied environment still reads the node (96 CPUs, its RAPL unit 0xa0e03)
[ "$(X intel-0 -- env -i /bin/sh -c 'nproc; rdmsr 0x606')" = "96
a0e03" ] && ok || bad "env -i: $(X intel-0 -- env -i /bin/sh -c 'nproc; rdmsr 0x606' 2>&1)"
finish
