#!/usr/bin/env bash
# cpufreq/stats of a table-driver policy (acpi-cpufreq on the EPYC 9654 node of
# tests/specs/whole-dyn.yaml; docs/whole-node.md "cpufreq/stats"), through both routes:
#   - the files' formats (drivers/cpufreq/cpufreq_stats.c 6.x show_time_in_state "%u %llu\n",
#     show_total_trans "%u\n", show_trans_table's header and "%9u" columns, `*` on the current
#     entry): one time_in_state line per scaling_available_frequencies entry, in that order;
#     total_trans = the sum of trans_table's counts; reset is 0200 (a read is EACCES, as kernfs
#     refuses to open an attribute without show() for reading)
#   - Debian's cpupower 6.1 (linux-cpupower) `frequency-info -s -m` prints the shares of the
#     entries and total_trans in parentheses, computed from those files (utils/cpufreq-info.c
#     get_freq_stats)
#   - throttling (scaling_max_freq = the lowest entry, written as an agent writes it) moves the
#     time to 1500000 kHz, stops the old entry's time and adds transitions; on the seccomp
#     route too
#   - reset (written through the seccomp route) clears the counts and times at the next tick
#   - the times never go back between reads nor across an engine restart
#   - the intel_pstate node has no stats directory (no frequency table: the kernel makes none)
# Usage: test_cpufreq_stats.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
command -v cpupower >/dev/null || { bad "cpupower is not installed (linux-cpupower; scripts/install-deps.sh installs it)"; finish; }
port=$(free_port)
url=http://127.0.0.1:$port
start() {
    serve_start "$url" "$tmp/err" --spec tests/specs/whole-dyn.yaml --root "$tmp/r" --addr 127.0.0.1:$port --tick 200ms ||
        { bad "serve: $(cat "$tmp/err")"; finish; }
}
start
X() { "$hwemu" exec --root "$tmp/r" --node amd-0 -- "$@"; }
S() { "$hwemu" exec --root "$tmp/r" --node amd-0 --intercept seccomp -- "$@"; }
cf=/sys/devices/system/cpu/cpufreq
sleep 1.2 # a few ticks: the policies ramp from their start into an entry

# formats (preload route), checked by a reader of the kernel's format
X /usr/bin/python3 - "$cf/policy5" >"$tmp/f" 2>&1 <<'PY' || bad "formats: $(cat "$tmp/f")"
import re, sys
d = sys.argv[1]
table = open(d + "/scaling_available_frequencies").read().split()
tis = open(d + "/stats/time_in_state").read()
assert re.fullmatch(r"(\d+ \d+\n)+", tis), repr(tis)
rows = [l.split() for l in tis.splitlines()]
assert [r[0] for r in rows] == table, (rows, table)
tt = open(d + "/stats/trans_table").read().splitlines()
assert tt[0] == "   From  :    To", tt
assert tt[1] == "         : " + "".join("%9s " % f for f in table), tt
counts = 0
stars = 0
for i, f in enumerate(table):
    line = tt[2 + i]
    assert re.fullmatch(r"[ *]" + "%9s: " % f + r"( {0,8}\d+ ){%d}" % len(table), line), line
    stars += line[0] == "*"
    counts += sum(int(x) for x in line[11:].split())
assert len(tt) == 2 + len(table) and stars == 1, tt
total = int(open(d + "/stats/total_trans").read())
assert total == counts and total >= 1, (total, counts)
try:
    open(d + "/stats/reset").read()
    raise SystemExit("reset was readable")
except PermissionError:
    pass
print("ok")
PY
[ "$(tail -1 "$tmp/f")" = ok ] && ok

# cpupower's statistics (both routes): every entry and total_trans
for route in X S; do
    $route cpupower -c 5 frequency-info -s -m >"$tmp/cp" 2>&1
    total=$($route cat $cf/policy5/stats/total_trans)
    grep -Eq "^2\.40 GHz:[0-9.]+%, 1\.90 GHz:[0-9.]+%, 1\.50 GHz:[0-9.]+%  \($total\)$" "$tmp/cp" &&
        ok || bad "cpupower frequency-info -s -m ($route, total_trans $total): $(cat "$tmp/cp")"
done

# throttle policy 7 through the shim, policy 9 through the seccomp supervisor: the time goes to
# the lowest entry, the old entry stops, transitions grow
t7=$(X cat $cf/policy7/stats/total_trans)
t9=$(S cat $cf/policy9/stats/total_trans)
# the time the policies already spent at the lowest entry (the start begins there)
low7=$(X awk '$1 == 1500000 {print $2}' $cf/policy7/stats/time_in_state)
low9=$(X awk '$1 == 1500000 {print $2}' $cf/policy9/stats/time_in_state)
X sh -c "echo 1500000 > $cf/policy7/scaling_max_freq" || bad "write scaling_max_freq (preload)"
S sh -c "echo 1500000 > $cf/policy9/scaling_max_freq" || bad "write scaling_max_freq (seccomp)"
for p in 7 9; do
    eval "low0=\$low$p"
    low=0
    for _ in $(seq 100); do # 200 ms more there: the ramp down has reached it
        low=$(X awk '$1 == 1500000 {print $2}' $cf/policy$p/stats/time_in_state)
        [ "${low:-0}" -ge $((low0 + 20)) ] && break
        sleep 0.1
    done
    a=$(X cat $cf/policy$p/stats/time_in_state)
    sleep 0.5
    b=$(S cat $cf/policy$p/stats/time_in_state)
    tn=$(X cat $cf/policy$p/stats/total_trans)
    eval "t0=\$t$p"
    hi_a=$(echo "$a" | awk '$1 == 2400000 {print $2}') hi_b=$(echo "$b" | awk '$1 == 2400000 {print $2}')
    lo_a=$(echo "$a" | awk '$1 == 1500000 {print $2}') lo_b=$(echo "$b" | awk '$1 == 1500000 {print $2}')
    [ "${low:-0}" -ge $((low0 + 20)) ] && [ "$hi_a" = "$hi_b" ] && [ "$lo_b" -ge $((lo_a + 30)) ] && [ "$tn" -gt "$t0" ] &&
        ok || bad "policy$p throttled: $a / $b, total_trans $t0 -> $tn"
    X grep -q '^\*  1500000: ' $cf/policy$p/stats/trans_table && ok || bad "policy$p: $(X cat $cf/policy$p/stats/trans_table)"
done

# reset through the seccomp route: cleared at the next tick, the current entry counting again
S sh -c "echo 1 > $cf/policy9/stats/reset" || bad "write reset (seccomp)"
for _ in $(seq 50); do
    [ "$(X cat $cf/policy9/stats/total_trans)" = 0 ] && break
    sleep 0.1
done
X cat $cf/policy9/stats/time_in_state >"$tmp/r9"
X cat $cf/policy9/stats/trans_table | sed 1,2d | cut -c12- >"$tmp/m9"
[ "$(X cat $cf/policy9/stats/total_trans)" = 0 ] && ! grep -q '[1-9]' "$tmp/m9" &&
    awk '$1 != 1500000 && $2 != 0 {bad = 1} $1 == 1500000 && $2 > 150 {bad = 1} END {exit bad}' "$tmp/r9" &&
    ok || bad "reset: total_trans $(X cat $cf/policy9/stats/total_trans), $(cat "$tmp/r9" "$tmp/m9")"

# the times never go back: two reads, then across a restart; nor do the transition counts of
# policy 7, throttled above (packed 12 to a value since segment format 9: resumed from them)
X cat $cf/policy11/stats/time_in_state >"$tmp/b1"
X cat $cf/policy11/stats/time_in_state >"$tmp/b2"
X cat $cf/policy7/stats/trans_table | sed 1,2d | cut -c12- >"$tmp/c1"
kill $pid; wait $pid 2>/dev/null; pid=
start
sleep 0.5
X cat $cf/policy11/stats/time_in_state >"$tmp/b4"
for _ in $(seq 50); do # a loaded machine may not have ticked the restarted engine yet
    X cat $cf/policy7/stats/trans_table 2>/dev/null | sed 1,2d | cut -c12- >"$tmp/c2"
    [ "$(wc -l <"$tmp/c2")" = 3 ] && break
    sleep 0.2
done
paste "$tmp/b1" "$tmp/b2" "$tmp/b4" | awk '!($1 == $3 && $3 == $5 && $4 >= $2 && $6 >= $4) {bad = 1} END {exit bad}' &&
    [ "$(wc -l <"$tmp/b4")" = 3 ] && ok || bad "time_in_state went back: $(paste "$tmp/b1" "$tmp/b2" "$tmp/b4")"
paste "$tmp/c1" "$tmp/c2" | awk '{for (i = 1; i <= 3; i++) {if ($(i + 3) < $i) bad = 1; sum += $i}} END {exit bad || !sum}' &&
    [ "$(wc -l <"$tmp/c2")" = 3 ] && ok || bad "policy7's transitions went back across a restart: $(paste "$tmp/c1" "$tmp/c2")"

# no stats on intel_pstate
"$hwemu" exec --root "$tmp/r" --node intel-0 -- ls $cf/policy0/stats >/dev/null 2>&1 && bad "intel_pstate has stats/" || ok
finish
