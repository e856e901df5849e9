#!/usr/bin/env bash
# The MSR tools nobody here wrote, on an Intel and an AMD node (docs/interfaces.md "MSR devices"):
#   turbostat (Debian linux-cpupower 6.1)   Busy%, Avg_MHz, Bzy_MHz, PkgWatt, and CPU%c6,
#                                           Pkg%pc6, RAMWatt (Intel) or CorWatt, C1%, C2% (AMD: a
#                                           Zen 4 and a Zen 3 node), the median of three 5 s intervals,
#                                           against the engine's /telemetry/<node> and counters
#                                           of the same steady state
#   likwid-powermeter (Debian likwid 5.2.2) each socket's package and DRAM (Intel) or package
#                                           and core (the Zen 3 node) power through its access
#                                           daemon and in direct mode (-M 0), on both nodes
#   lspci -n                                the Intel node's uncore functions (the memory
#                                           controller's, which likwid's direct mode looks for)
#   env -i, posix_spawn, subprocess         a program started with an emptied environment stays
#                                           on its node
# CPUID is the node's by faulting (hosts with cpuid_fault) or by patching (others): the route the
# host offers, said on the output's first line.
# turbostat asks for RLIMIT_NOFILE 32768, above this sandbox's hard limit: a one-call stub
# (built here) lets that setrlimit succeed. Where each expected value comes from is said at each
# check. Bounded: two engines, one after the other (the Zen 3 node in the second), ~130 s.
# Usage: test_msr_tools.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
for tool in turbostat likwid-powermeter rdmsr lspci curl gcc; do
    command -v $tool >/dev/null ||
        { bad "$tool is missing (scripts/install-deps.sh: linux-cpupower likwid msr-tools pciutils curl gcc)"; finish; }
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
root=$tmp/r
X() { "$hwemu" exec --root "$root" --node "$@"; }

# within A B PCT: A is within PCT % of B
within() { python3 -c "import sys; a, b, p = map(float, sys.argv[1:]); sys.exit(0 if abs(a - b) <= p / 100 * abs(b) else 1)" "$@"; }
# col TEXT NAME: the median over the summary rows of column NAME in turbostat's tab-separated
# output (three intervals: one a loaded machine stretched between a counter read and turbostat's
# clock read does not decide the check)
col() {
    awk -F'\t' -v n="$2" '$1 == n || (c == 0 && $0 ~ n) { for (i = 1; i <= NF; i++) if ($i == n) c = i; next }
        c && $c ~ /^[0-9.]+$/ { print $c }' <<<"$1" | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}
telem() { curl -sf "$url/telemetry/$1"; }
tj() { python3 -c "import json, sys; d = json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"; }
# steady NODE: waits (60 s at most) until the packages' frequency and power read the same twice
# a second apart: the frequency ramps to the governor's target after the start, and every
# expected value below is the engine's steady state over the tool's interval
steady() {
    local a b
    for _ in $(seq 60); do
        a=$(telem $1 | tj '[(p["frequencyKHz"], round(p["powerWatts"], 3)) for p in d["packages"]]')
        sleep 1
        b=$(telem $1 | tj '[(p["frequencyKHz"], round(p["powerWatts"], 3)) for p in d["packages"]]')
        [ "$a" = "$b" ] && return 0
    done
    bad "$1 never reached a steady state: $b"
}
# uj NODE ZONE: the energy_uj of powercap zone ZONE (e.g. intel-rapl:0:0) and the time (s)
uj() { X $1 -- sh -c "cat /sys/class/powercap/$2/energy_uj; date +%s.%N" | tr '\n' ' '; }

# turbostat decides what the machine is from CPUID (vendor, family/model, leaf 6's APERF bit),
# which the shim makes the node's by faulting it where the host has the cpuid_fault flag, else by
# rewriting turbostat's CPUID instructions into a trapping UD2 (cpufault.c, cpuidpatch.c;
# docs/interfaces.md "MSR devices"). With CPUID the host's, turbostat would see the host's
# processor and print no Busy% (a firecracker guest: "CPUID(6): No-APERF"). Both routes need an
# x86-64 host; the same arithmetic is also checked below with tscmath.c.
if grep -qw cpuid_fault /proc/cpuinfo; then route=fault; else route=patch; fi
if [ "$(uname -m)" = x86_64 ]; then nodes="intel-0 amd-0" && echo "CPUID route: $route"; else
    nodes= && echo "SKIP: turbostat and likwid-powermeter (no CPUID route on $(uname -m))"; fi
# turbostat_node NODE: turbostat's median of three 5 s intervals against the engine's truth
turbostat_node() {
    local node=$1
    steady $node
    c0=$(uj $node intel-rapl:0:0) c1=$(uj $node intel-rapl:1:0)
    out=$(X $node --cpuid $route -- env LD_PRELOAD="$tmp/rl.so $shim" turbostat --quiet -S -n 3 -i 5 2>"$tmp/ts.err" | grep -v '^turbostat')
    d0=$(uj $node intel-rapl:0:0) d1=$(uj $node intel-rapl:1:0)
    t=$(telem $node)
    [ -n "$(col "$out" Busy%)" ] || { bad "$node: turbostat printed no summary: $(head -c 600 "$tmp/ts.err") $out"; return; }
    # Busy% = 100 ΔMPERF/ΔTSC: the engine's utilisation (the spec's baseLoad cpuUtil 0.5, /telemetry cpu.utilization)
    util=$(tj 'd["cpu"]["utilization"] * 100' <<<"$t")
    within "$(col "$out" Busy%)" "$util" 1 && ok || bad "$node Busy% $(col "$out" Busy%) vs the engine's $util"
    # Avg_MHz = ΔAPERF/interval: utilisation x the packages' running frequency (/telemetry packages[].frequencyKHz)
    mhz=$(tj 'sum(p["frequencyKHz"] for p in d["packages"]) / len(d["packages"]) / 1000' <<<"$t")
    avg=$(python3 -c "print($util / 100 * $mhz)")
    within "$(col "$out" Avg_MHz)" "$avg" 1 && ok || bad "$node Avg_MHz $(col "$out" Avg_MHz) vs the engine's $avg"
    # Bzy_MHz: the running frequency. Intel: MSR_PLATFORM_INFO's base x ΔAPERF/ΔMPERF (turbostat
    # 6.1 format_counters, has_base_hz); AMD: TSC_MHz x ΔAPERF/ΔMPERF
    within "$(col "$out" Bzy_MHz)" "$mhz" 1 && ok || bad "$node Bzy_MHz $(col "$out" Bzy_MHz) vs the engine's $mhz"
    if [ $node = intel-0 ]; then
        # TSC_MHz = ΔRDTSC / interval: turbostat's RDTSC counts at the node's TSC clock, the base
        # frequency (the profile's cpufreq.baseKHz 2400000, "published:ark8260"), not the host's;
        # within 5 % of the wall clock's interval (the engine's lag, as tscmath's check below says)
        within "$(col "$out" TSC_MHz)" 2400 5 && ok || bad "$node TSC_MHz $(col "$out" TSC_MHz) vs the node's base 2400"
    fi
    # PkgWatt: the sum of the packages' power (/telemetry packages[].powerWatts, steady)
    pw=$(tj 'sum(p["powerWatts"] for p in d["packages"])' <<<"$t")
    within "$(col "$out" PkgWatt)" "$pw" 1 && ok || bad "$node PkgWatt $(col "$out" PkgWatt) vs the engine's $pw"
    if [ $node != intel-0 ]; then
        # CorWatt (AMD: the per-core registers summed): the core sub-zones' power, from their
        # energy_uj counters read around turbostat's run (the engine's counters, steady power)
        cw=$(python3 -c "a, b, c, d = '$c0'.split(), '$c1'.split(), '$d0'.split(), '$d1'.split()
print((int(c[0]) - int(a[0])) / (float(c[1]) - float(a[1])) / 1e6 + (int(d[0]) - int(b[0])) / (float(d[1]) - float(b[1])) / 1e6)")
        within "$(col "$out" CorWatt)" "$cw" 1 && ok || bad "$node CorWatt $(col "$out" CorWatt) vs the core zones' $cw"
        # C1% and C2% (AMD: no core C-state counters, turbostat shows the cpuidle files' time,
        # acpi_idle's states): the idle share (100 - utilisation) x each state's share of idle
        # time the cpuidle files give (render_cpuidle's EPYC table: C1 200, C2 795 permille)
        for st in C1:0.200 C2:0.795; do
            e=$(python3 -c "print((100 - $util) * ${st#*:})")
            within "$(col "$out" ${st%:*}%)" "$e" 1 && ok || bad "$node ${st%:*}% $(col "$out" ${st%:*}%) vs $e"
        done
    fi
    if [ $node = intel-0 ]; then
        # RAMWatt: the DRAM power (/telemetry cpu.dramPowerWatts)
        rw=$(tj 'd["cpu"]["dramPowerWatts"]' <<<"$t")
        within "$(col "$out" RAMWatt)" "$rw" 1 && ok || bad "$node RAMWatt $(col "$out" RAMWatt) vs the engine's $rw"
        # CPU%c6: the idle share (100 - utilisation) x the C6 share of idle time the cpuidle files
        # give (render_cpuidle: 695 permille on Cascade Lake); every CPU equally loaded, so the
        # package's PC6 is the same
        c6=$(python3 -c "print((100 - $util) * 0.695)")
        within "$(col "$out" CPU%c6)" "$c6" 1 && ok || bad "$node CPU%c6 $(col "$out" CPU%c6) vs $c6"
        within "$(col "$out" Pkg%pc6)" "$c6" 1 && ok || bad "$node Pkg%pc6 $(col "$out" Pkg%pc6) vs $c6"
        # CPU%c1 (turbostat: what is neither busy nor C6): the rest of the idle time, the cpuidle
        # files' POLL, C1 and C1E (305 permille)
        c1=$(python3 -c "print((100 - $util) * 0.305)")
        within "$(col "$out" CPU%c1)" "$c1" 1 && ok || bad "$node CPU%c1 $(col "$out" CPU%c1) vs $c1"
    fi
}
for node in $nodes; do turbostat_node $node; done

# tscmath.c: turbostat 6.1's arithmetic (get_counters, format_counters) over the node's MSR
# device and RDTSC, 3 s apart (each end the tightest of 16 reads): Busy% = 100 ΔMPERF/ΔTSC, Bzy_MHz = base x ΔAPERF/ΔMPERF (Intel:
# MSR_PLATFORM_INFO 15:8 x 100 MHz) or ΔTSC/interval x ΔAPERF/ΔMPERF (AMD), TSC_MHz =
# ΔTSC/interval (gettimeofday inside each end's bracket); then the program starts a child with system() and one with
# fork+execv, which must run (the kernel keeps RDTSC's fault across exec: tsctrap.c).
cat >"$tmp/tscmath.c" <<'C'
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>
static int fd;
static uint64_t msr(unsigned r) { uint64_t v = 0; return pread(fd, &v, 8, r) == 8 ? v : 0; }
struct end { uint64_t tsc, aperf, mperf, reg10; double up, wall; };
/* one end: the tightest of 16 (RDTSC, the wall clock, APERF, MPERF, MSR 0x10, the node's
 * /proc/uptime, RDTSC), as turbostat retries a read a preemption split, the TSC taken as the
 * middle; the wall clock is read inside the bracket, so a preemption outside it (a loaded host)
 * does not stretch the interval the TSC's rate is computed over */
static struct end sample(void)
{
    struct end e = {0}, t;
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 16; i++) {
        uint64_t a = __rdtsc();
        struct timeval w;
        gettimeofday(&w, NULL);
        t.wall = w.tv_sec + w.tv_usec / 1e6;
        t.aperf = msr(0xE8), t.mperf = msr(0xE7), t.reg10 = msr(0x10);
        FILE *f = fopen("/proc/uptime", "r");
        if (!f || fscanf(f, "%lf", &t.up) != 1)
            t.up = 0;
        if (f)
            fclose(f);
        uint64_t b = __rdtsc();
        if (b - a < best)
            best = b - a, t.tsc = a + (b - a) / 2, e = t;
    }
    return e;
}
int main(int argc, char **argv)
{
    int intel = argc > 1 && argv[1][0] == 'i';
    fd = open("/dev/cpu/0/msr", O_RDONLY);
    if (fd < 0) { perror("open /dev/cpu/0/msr"); return 1; }
    double base = intel ? (double)(msr(0xCE) >> 8 & 0xFF) * 100 : 0;
    struct end e0 = sample();
    sleep(3);
    struct end e1 = sample();
    double iv = e1.wall - e0.wall, tsc = (double)(e1.tsc - e0.tsc);
    double ap = (double)(e1.aperf - e0.aperf), mp = (double)(e1.mperf - e0.mperf);
    printf("Busy%% %.3f\nBzy_MHz %.1f\nTSC_MHz %.1f\nRDTSC/MSR %.6f\nTSC_MHz_node %.1f\n", 100 * mp / tsc,
           intel ? base * ap / mp : tsc / 1e6 * ap / mp / iv, tsc / 1e6 / iv, tsc / (double)(e1.reg10 - e0.reg10),
           tsc / 1e6 / (e1.up - e0.up));
    fflush(stdout);
    if (system("echo system-ran") != 0)
        return 1;
    pid_t p = fork();
    if (!p) { execl("/bin/echo", "echo", "exec-ran", (char *)NULL); _exit(127); }
    int st;
    waitpid(p, &st, 0);
    return !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
C
gcc -O2 -o "$tmp/tscmath" "$tmp/tscmath.c" || bad "tscmath.c build"
for node in intel-0 amd-0; do
    steady $node
    out=$(X $node -- "$tmp/tscmath" ${node%%-*} 2>&1)
    t=$(telem $node)
    v() { awk -v k="$1" '$1 == k { print $2 }' <<<"$out"; }
    util=$(tj 'd["cpu"]["utilization"] * 100' <<<"$t")
    mhz=$(tj 'sum(p["frequencyKHz"] for p in d["packages"]) / len(d["packages"]) / 1000' <<<"$t")
    # the engine's utilisation and the packages' running frequency (/telemetry), as above
    within "$(v Busy%)" "$util" 1 && ok || bad "$node tscmath Busy% $(v Busy%) vs the engine's $util: $out"
    within "$(v Bzy_MHz)" "$mhz" 1 && ok || bad "$node tscmath Bzy_MHz $(v Bzy_MHz) vs the engine's $mhz: $out"
    # Intel: RDTSC is register 0x10's clock (ΔRDTSC / ΔMSR 1 within 0.1 %) and counts at the
    # node's base frequency (the profile's cpufreq.baseKHz 2400000, "published:ark8260") of the
    # node's time (its /proc/uptime, the engine's elapsed time: 10 ms steps, 0.3 % of 3 s), within
    # 1 %. (Against the wall clock the node's time drifts by the engine's lag: a late tick holds
    # the counters at its horizon and the next catches up, 2272-2456 MHz over 3 s on this machine
    # at load 30-45; the host's RDTSC, before tsctrap.c, read 2596.) AMD: the host's RDTSC,
    # untouched (its rate measured by tsc.c below)
    if [ $node = intel-0 ]; then
        within "$(v TSC_MHz_node)" 2400 1 && ok || bad "$node tscmath ΔRDTSC/Δuptime $(v TSC_MHz_node) MHz vs the node's base 2400"
        within "$(v RDTSC/MSR)" 1 0.1 && ok || bad "$node tscmath ΔRDTSC/ΔMSR 0x10 $(v RDTSC/MSR), not 1"
    fi
    grep -qx system-ran <<<"$out" && grep -qx exec-ran <<<"$out" && ok || bad "$node: children of an RDTSC-faulting process: $out"
done

# turbostat running a command (it forks and execs it: the child starts with the host's RDTSC, as
# its dynamic loader reads the TSC before any handler exists) and timing it with gettimeofday (the
# vDSO's RDTSC answered with the host's TSC): the command runs, and the interval turbostat
# prints ("N.NNNNNN sec", from gettimeofday) is at least the command's 1 s and at most the wall
# time this script measured around the whole turbostat run (on a loaded host the fork, exec and
# sleep take longer than 1 s; a wrong time scale would leave that bracket)
if [ -n "$nodes" ]; then
    w0=$(date +%s%N)
    out=$(X intel-0 --cpuid $route -- env LD_PRELOAD="$tmp/rl.so $shim" turbostat --quiet -S sh -c 'sleep 1; echo child-ran' 2>&1)
    w1=$(date +%s%N)
    sec=$(sed -n 's/^\([0-9.]*\) sec$/\1/p' <<<"$out")
    grep -qx child-ran <<<"$out" && [ -n "$sec" ] &&
        python3 -c "import sys; s = float(sys.argv[1]); sys.exit(not 0.999 <= s <= float(sys.argv[2]) / 1e9)" "$sec" $((w1 - w0)) && ok ||
        bad "turbostat with a command: ${sec:-no} sec (wall around it: $(( (w1 - w0) / 1000000 )) ms): $(head -c 600 <<<"$out")"
fi

# likwid-powermeter through its access daemon (likwid-accessD, which likwid starts with a
# cleared environment), against the engine's steady state: on the Intel node each socket's PKG
# and DRAM power against /telemetry's packages[].powerWatts and cpu.dramPowerWatts / sockets; on
# the Zen 3 node (EPYC 7763, family 0x19 model 0x01, a model likwid 5.2.2 knows) each socket's
# PKG against packages[].powerWatts and its CORE, which likwid sums over the socket's cores'
# registers 0xC001029A (likwid-powermeter.lua), against the socket's core zone: the package's
# power x physics.cpu.coreFraction, the share the physics counts there. (On the Zen 4 node Debian's likwid 5.2.2
# stops at "Unsupported AMD Zen Processor": it knows no Zen 4; docs/interfaces.md.)
# likwid's access daemon allows a register by the processor it reads with CPUID: the node's by
# either route (with the host's: "Cannot gather values from MSR_PLATFORM_INFO" on a Zen 4 host).
# likwid divides the energy by a runtime it times with RDTSC at a TSC rate it calibrates over
# 500 ms of nanosleep at start (src/timer.c getCpuSpeed, printed as "CPU clock"), which a loaded
# machine skews by several per cent: its power is taken back to the true interval with the TSC
# rate measured here (tsc.c: RDTSC against CLOCK_MONOTONIC_RAW over 500 ms, tightest pairs),
# P x the TSC rate / its clock, and checked to 1 %. Its RDTSC is the host's, at the rate
# measured here (tsc.c), through the access daemon (likwid's own process opens no MSR device)
# and in direct mode on the AMD node (whose RDTSC stays the host's: tsctrap.c); in direct mode
# on the Intel node likwid opens the node's MSR devices before it calibrates, so its RDTSC is
# the node's, at the node's base frequency (2.4 GHz: the profile's cpufreq.baseKHz 2400000,
# "published:ark8260"; docs/interfaces.md "MSR devices").
cat >"$tmp/tsc.c" <<'C'
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>
static void pair(uint64_t *c, double *t)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 64; i++) {
        struct timespec ts;
        uint64_t a = __rdtsc();
        clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
        uint64_t b = __rdtsc();
        if (b - a < best)
            best = b - a, *c = a + (b - a) / 2, *t = ts.tv_sec + ts.tv_nsec / 1e9;
    }
}
int main(void)
{
    uint64_t c0, c1;
    double t0, t1;
    pair(&c0, &t0);
    struct timespec d = {0, 500000000};
    nanosleep(&d, NULL);
    pair(&c1, &t1);
    printf("%.6f\n", (c1 - c0) / (t1 - t0) / 1e9); /* GHz */
}
C
gcc -O2 -o "$tmp/tsc" "$tmp/tsc.c" || bad "tsc.c build"
ghz=$("$tmp/tsc")
# likwid_run NODE[/M0]: likwid-powermeter over 3 s on NODE (/M0: in direct mode, -M 0) against
# the engine's truth. Each node runs twice: through the access daemon (the default) and in
# direct mode (likwid opens the node's MSR devices itself; on the Cascade Lake node it first
# finds each socket's memory controller bus by its 8086:2042 function, through hwloc's PCI
# objects, and stops at "Cannot get access to RAPL counters" without one; on AMD it wants no
# PCI device: docs/interfaces.md "MSR devices").
likwid_run() {
    local run=$1 node=${1%/*} mode=
    case $run in */M0) mode="-M 0" ;; esac
    if [ $node = intel-0 ]; then doms="PKG DRAM"; else doms="PKG CORE"; fi
    steady $node
    out=$(X $node --cpuid $route -- likwid-powermeter $mode -s 3s 2>&1)
    t=$(telem $node)
    clock=$(awk -F'\t' '/^CPU clock:/ { print $2 + 0; exit }' <<<"$out")
    # the rate of likwid's RDTSC (above): the node's base on the Intel node in direct mode
    rate=$ghz
    [ "$run" = intel-0/M0 ] && rate=2.4
    # the processor likwid took from CPUID (the node's, by faulting or patching)
    if [ $node = milan-0 ]; then
        grep -q "^CPU type:.*(Zen3)" <<<"$out" && grep -q "^CPU name:.*AMD EPYC 7763 64-Core Processor" <<<"$out" && ok ||
            bad "$run: likwid-powermeter did not see the node's Zen 3 EPYC 7763: $(head -5 <<<"$out")"
    fi
    for k in 0 1; do
        for dom in $doms; do
            lw=$(awk -v k=$k -v dom=$dom '/Measure for socket/ { s = ($4 == k) } s && $0 == "Domain " dom ":" { p = 1 }
                p && /Power consumed/ { print $3; exit }' <<<"$out")
            case $dom in
            PKG) e=$(tj "d['packages'][$k]['powerWatts']" <<<"$t") ;;
            DRAM) e=$(tj 'd["cpu"]["dramPowerWatts"] / 2' <<<"$t") ;;
            CORE) # socket k's core zone: the physics counts physics.cpu.coreFraction of the
                # package's power in it (physics_cpu.c), steady as PKG
                cf=$("$hwemu" profiles show amd-epyc-7763-2s-energy-only | awk '$1 == "physics.cpu.coreFraction" { print $3 }')
                e=$(tj "d['packages'][$k]['powerWatts'] * ${cf:-0}" <<<"$t") ;;
            esac
            [ -n "$lw" ] && [ -n "$clock" ] && within "$(python3 -c "print($lw * $rate / $clock)")" "$e" 1 && ok ||
                bad "$run likwid-powermeter socket $k $dom ${lw:-none} W at its clock ${clock:-none} GHz (TSC $rate GHz) vs the engine's $e W: $(tail -5 <<<"$out")"
        done
    done
}
if [ -n "$nodes" ]; then
    likwid_run intel-0
    likwid_run intel-0/M0
fi

# lspci -n on the Intel node: each socket's memory controller functions, as lspci -nnk printed
# them on a two-socket HPE ProLiant DL380 Gen10 at the Cascade Lake revision 07 (linux-raid list,
# 19 Dec 2021; profiles/intel-xeon-2s-rapl.yaml source dl380g10): buses 0x36 and 0xae, class 0880,
# M2M 08.0 and 09.0 (2066), the channels' 0a.0-0a.7 and 0c.0-0c.7 (2040-2047), 0b.0-0b.3 and
# 0d.0-0d.3 (2048-204b)
want=
for bus in 36 ae; do
    for f in 08.0:2066 09.0:2066 0a.0:2040 0a.1:2041 0a.2:2042 0a.3:2043 0a.4:2044 0a.5:2045 0a.6:2046 0a.7:2047 \
        0b.0:2048 0b.1:2049 0b.2:204a 0b.3:204b 0c.0:2040 0c.1:2041 0c.2:2042 0c.3:2043 0c.4:2044 0c.5:2045 \
        0c.6:2046 0c.7:2047 0d.0:2048 0d.1:2049 0d.2:204a 0d.3:204b; do
        want+="$bus:${f%:*} 0880: 8086:${f#*:} (rev 07)"$'\n'
    done
done
got=$(X intel-0 -- lspci -n 2>&1 | grep -E '^(36|ae):')
[ "$got" = "${want%$'\n'}" ] && ok || bad "lspci -n uncore functions on intel-0: $(diff <(echo "${want%$'\n'}") <(echo "$got") | head -8)"

# env -i: the child of an emptied environment still reads the node (96 CPUs, its RAPL unit 0xa0e03)
[ "$(X intel-0 -- env -i /bin/sh -c 'nproc; rdmsr 0x606')" = "96
a0e03" ] && ok || bad "env -i: $(X intel-0 -- env -i /bin/sh -c 'nproc; rdmsr 0x606' 2>&1)"
# posix_spawn with an empty environment (Python's os.posix_spawn) and Python's subprocess with
# env={} (fork, then execve): both children count the node's 96 CPUs (nproc: sched_getaffinity)
out=$(X intel-0 -- python3 -c '
import os, subprocess
pid = os.posix_spawn("/usr/bin/nproc", ["nproc"], {})
os.waitpid(pid, 0)
print(subprocess.run(["/usr/bin/nproc"], env={}, capture_output=True, text=True).stdout, end="")' 2>&1)
[ "$out" = "96
96" ] && ok || bad "posix_spawn / subprocess with an empty environment: $out"

# The Zen 3 node (amd-epyc-7763-2s-energy-only: EPYC 7763, family 0x19 model 0x01, the AMD model
# Debian 12's likwid 5.2.2 knows) runs in an engine of its own, started once the first has
# stopped: in one engine with the others its 256 CPUs made the ticks late on this 2-core machine
# under load (counters then lag the wall clock by part of a tick: 1.7 % low over turbostat's
# 5 s at load 10), and each node's checks here want the engine on time.
if [ -n "$nodes" ]; then
    kill $pid && wait $pid 2>/dev/null
    port=$(free_port)
    url=http://127.0.0.1:$port root=$tmp/r2
    if serve_start "$url" "$tmp/err" --spec tests/specs/msr_tools_zen3.yaml --root "$root" --addr 127.0.0.1:$port --tick 200ms; then
        turbostat_node milan-0
        likwid_run milan-0
        likwid_run milan-0/M0
    else
        bad "serve (Zen 3): $(cat "$tmp/err")"
    fi
fi
finish
