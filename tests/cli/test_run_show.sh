#!/usr/bin/env bash
# What `hwemu run` shows: on a terminal (util-linux's `script` gives it one) a progress line on
# stderr rewritten in place (emulated time, jobs by state, energy, time left) and a readable
# summary; not on a terminal no progress at all, the readable summary on stdout, and with --json
# the run's status object (the output `hwemu run` always had). Usage: test_run_show.sh hwemu
set -uo pipefail
hwemu=$1
source "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# 40 logical workloads (52 job records with seed 3), a few hours of emulated time at --speed max
"$hwemu" trace generate --jobs 40 --seed 3 --out "$tmp/t.jsonl" 2>/dev/null || bad "trace generate"

# 1. a terminal: stdin, stdout and stderr are script's pseudo-terminal, everything in one stream
script -q -e -c "'$hwemu' run --trace '$tmp/t.jsonl' --root '$tmp/r1' --speed max" "$tmp/tty.typescript" \
    >"$tmp/tty.out" 2>&1 </dev/null && ok || bad "run on a terminal failed: $(tail -c 600 "$tmp/tty.out" | cat -v)"
# "\rhwemu run: 1h56m01s emulated; jobs 21 waiting, 8 running, 23 completed, 0 stalled of 52; 22.284 MJ; about 1s left\033[K"
re='hwemu run: ([0-9]+h)?([0-9]+m)?[0-9]+s emulated; jobs [0-9]+ waiting, [0-9]+ running, [0-9]+ completed, [0-9]+ stalled of 52; [0-9.]+ [kMG]?J; (about ([0-9]+[hm])*[0-9]+s left|time left unknown)'
grep -aqE "$re" "$tmp/tty.out" && ok || bad "no progress line on the terminal: $(head -c 600 "$tmp/tty.out" | cat -v)"
grep -aq $'\r' "$tmp/tty.out" && grep -aq $'\033\[K' "$tmp/tty.out" && ok || bad "the progress line is not rewritten in place"
d1=$(ls -d "$tmp"/r1/runs/*/ | head -1)
grep -aq "completed after .* emulated (makespan" "$tmp/tty.out" && grep -aq "outputs   ${d1}" "$tmp/tty.out" && ok ||
    bad "no readable summary on the terminal: $(tail -c 600 "$tmp/tty.out" | cat -v)"
# the completed counts shown only grow and never exceed the total
python3 - "$tmp/tty.out" <<'PY' && ok || bad "progress counts go back"
import re, sys
c = [int(x) for x in re.findall(rb"running, ([0-9]+) completed", open(sys.argv[1], "rb").read())]
print("progress lines:", len(c), "completed counts:", c[:3], "...", c[-3:])
sys.exit(0 if c and c == sorted(c) and c[-1] <= 52 else 1)
PY

# 2. not a terminal: stderr has the start line and nothing of progress; stdout the readable summary
"$hwemu" run --trace "$tmp/t.jsonl" --root "$tmp/r2" --speed max >"$tmp/plain.out" 2>"$tmp/plain.err" && ok ||
    bad "run failed: $(cat "$tmp/plain.err")"
! grep -aq $'\r\|\033\|emulated;' "$tmp/plain.err" "$tmp/plain.out" && ok || bad "progress shown off a terminal: $(cat -v "$tmp/plain.err")"
[ "$(wc -l <"$tmp/plain.err")" = 1 ] && ok || bad "stderr is not the one start line: $(cat "$tmp/plain.err")"
d2=$(ls -d "$tmp"/r2/runs/*/ | head -1)
# the summary's figures are summary.json's (rounded as printed: 3 significant decimals of kJ/MJ)
python3 - "$d2/summary.json" "$tmp/plain.out" <<'PY' && ok || bad "readable summary vs summary.json: $(cat "$tmp/plain.out")"
import json, re, sys
s, out = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
print(out)
def j(v):
    for u in ["J", "kJ", "MJ", "GJ"]:
        if v < 1000 or u == "GJ":
            return ("%.1f %s" if u == "J" else "%.3f %s") % (v, u)
        v /= 1000
want = ["run %s completed after" % s["runId"], "(makespan %.1f s)" % s["makespanSec"],
        "jobs      %d: %d completed, %d stalled" % (s["jobs"]["total"], s["jobs"]["completed"], s["jobs"]["stalled"]),
        "energy    %s, mean power %.1f W" % (j(s["energyJoules"]["nodes"]), s["meanPowerWatts"]),
        "idle %s" % j(s["energyJoules"]["idle"]), "(PUE %.2f)" % s["facility"]["pue"]]
miss = [w for w in want if w not in out]
print("missing:", miss)
sys.exit(1 if miss else 0)
PY

# 3. --json: the status object, as before (its counts and energy are summary.json's)
"$hwemu" run --trace "$tmp/t.jsonl" --root "$tmp/r3" --speed max --json >"$tmp/json.out" 2>"$tmp/json.err" && ok ||
    bad "run --json failed: $(cat "$tmp/json.err")"
d3=$(ls -d "$tmp"/r3/runs/*/ | head -1)
python3 - "$d3/summary.json" "$tmp/json.out" <<'PY' && ok || bad "--json: $(head -c 400 "$tmp/json.out")"
import json, sys
s, o = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
keys = ["runId", "state", "trace", "placement", "timeSec", "ticks", "jobs", "jobsByClass", "energyJoules"]
bad = [k for k in keys if o.get(k) != s.get(k)]
# the status object has no summary-only fields (makespanSec, nodes, facility, ...)
extra = [k for k in o if k not in keys + ["resumes"]]
print("differ:", bad, "extra:", extra)
sys.exit(1 if bad or extra else 0)
PY
finish
