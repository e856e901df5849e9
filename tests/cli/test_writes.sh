#!/usr/bin/env bash
# A write the node's sysfs refuses fails the writer, whatever writes it: bash's builtins through
# a redirection (echo, printf, `exec 3>` then `echo >&3`), the programs bash execs with the
# number (/bin/echo, /usr/bin/printf), tee, dash, dd, Python's file objects and print, static
# busybox (the seccomp route) and bash on the seccomp route. Each exits non-zero (or raises)
# with the kernel's errno, at the write, not as a line from the shim afterwards; and each one's
# valid write still reads back and reaches the engine as a joulie.sim.write.accepted event.
# Usage: test_writes.sh HWEMU_BINARY   (run from the source tree)
#
# Where the expected values come from:
#  - the errno: powercap's store_constraint_power_limit_uw (drivers/powercap/powercap_sys.c)
#    parses with kstrtoull, which refuses "abc" with -EINVAL; kernfs_fop_write_iter returns the
#    store's error from write(2), so every writer sees EINVAL, "Invalid argument";
#  - the messages are the programs' own: bash's sh_chkwrite/sh_wrerror (builtins/common.c,
#    "<builtin>: write error: <strerror>"), coreutils' close_stdout (gnulib closeout.c, "write
#    error: <strerror>") and tee.c ("<file>: <strerror>"), dd.c ("error writing <file>:
#    <strerror>"), CPython's OSError ("[Errno 22] Invalid argument"), busybox's sh ("write
#    error: <strerror>"); dash and busybox's tee say "I/O error" whatever the errno, so only
#    their exit status is checked;
#  - a valid value (a multiple of the 125000 uW power unit, within the zone's range) is stored
#    as written, and `hwemu write` and the events are documented in docs/shim.md and
#    docs/telemetry.md.
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
port=$(free_port)
url=http://127.0.0.1:$port
serve_start "$url" "$tmp/err" --spec tests/specs/shim.yaml --root "$tmp/r" --addr 127.0.0.1:$port --tick 200ms ||
    { bad "serve: $(cat "$tmp/err")"; finish; }
Z=/sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw
py=/usr/bin/python3
# Python's stdout buffered, as it is by default (with PYTHONUNBUFFERED print's "\n" is a write,
# and a store, of its own, which the kernel refuses too)
unset PYTHONUNBUFFERED
busybox=$(command -v busybox)
[ -n "$busybox" ] && file -L "$busybox" | grep -q "statically linked" ||
    bad "busybox-static is needed (scripts/install-deps.sh): $busybox"

# refused HOW EXPECT CMD...: CMD (run under `hwemu exec --node intel-0 HOW`) writes "abc" to $Z;
# it must exit non-zero, its stderr must hold EXPECT (when not empty), and no store may be left
# for later (the shim's "hwemu-shim: ...: write error" line would say one was).
refused() {
    local how=$1 expect=$2
    shift 2
    local err rc
    err=$("$hwemu" exec --root "$tmp/r" --node intel-0 $how -- "$@" 2>&1 >/dev/null); rc=$?
    if [ $rc -eq 0 ]; then bad "$how $*: exit 0 on a refused write ($err)"; return; fi
    if [ -n "$expect" ] && ! grep -qF -- "$expect" <<<"$err"; then bad "$how $*: no '$expect' in: $err"; return; fi
    if grep -q "hwemu-shim:\|hwemu exec:" <<<"$err"; then bad "$how $*: the store was left for later: $err"; return; fi
    ok
}
values=()
# stored HOW VALUE CMD...: CMD writes VALUE to $Z; it must exit 0 and $Z must read VALUE back.
stored() {
    local how=$1 v=$2
    shift 2
    local err got
    err=$("$hwemu" exec --root "$tmp/r" --node intel-0 $how -- "$@" 2>&1 >/dev/null) ||
        { bad "$how $*: a valid write failed: $err"; return; }
    got=$("$hwemu" exec --root "$tmp/r" --node intel-0 -- cat $Z)
    [ "$got" = "$v" ] && ok || bad "$how $*: wrote $v, reads $got ($err)"
    values+=("$v")
}

for how in "" "--intercept=seccomp"; do
    base=$([ -z "$how" ] && echo 100 || echo 120)
    refused "$how" "echo: write error: Invalid argument" bash -c "echo abc > $Z"
    refused "$how" "write error: Invalid argument" bash -c "/bin/echo abc > $Z"
    refused "$how" "printf: write error: Invalid argument" bash -c "printf abc > $Z"
    refused "$how" "write error: Invalid argument" bash -c "/usr/bin/printf abc > $Z"
    refused "$how" "echo: write error: Invalid argument" bash -c "exec 3> $Z; echo abc >&3"
    refused "$how" "$Z': Invalid argument" bash -c "echo abc | tee $Z"
    refused "$how" "" dash -c "echo abc > $Z"
    refused "$how" "error writing '$Z': Invalid argument" bash -c "echo abc | dd of=$Z status=none"
    refused "$how" "OSError: [Errno 22] Invalid argument" "$py" -c "
with open('$Z', 'w') as f:
    f.write('abc')"
    refused "$how" "OSError: [Errno 22] Invalid argument" bash -c "$py -c 'print(\"abc\")' > $Z"
    stored "$how" ${base}000000 bash -c "echo ${base}000000 > $Z"
    stored "$how" $((base + 1))000000 bash -c "/bin/echo $((base + 1))000000 > $Z"
    stored "$how" $((base + 2))000000 bash -c "printf $((base + 2))000000 > $Z"
    stored "$how" $((base + 3))000000 bash -c "/usr/bin/printf $((base + 3))000000 > $Z"
    stored "$how" $((base + 4))000000 bash -c "exec 3> $Z; echo $((base + 4))000000 >&3"
    stored "$how" $((base + 5))000000 bash -c "echo $((base + 5))000000 | tee $Z"
    stored "$how" $((base + 6))000000 dash -c "echo $((base + 6))000000 > $Z"
    stored "$how" $((base + 7))000000 bash -c "echo $((base + 7))000000 | dd of=$Z status=none"
    stored "$how" $((base + 8))000000 "$py" -c "
with open('$Z', 'w') as f:
    f.write('$((base + 8))000000')"
    stored "$how" $((base + 9))000000 bash -c "$py -c 'print($((base + 9))000000)' > $Z"
done
# Static busybox: `hwemu exec` takes the seccomp route for it (docs/shim.md).
if [ -n "$busybox" ]; then
    refused "" "write error: Invalid argument" "$busybox" sh -c "echo abc > $Z"
    refused "" "" "$busybox" sh -c "printf abc > $Z"
    refused "" "write error: Invalid argument" "$busybox" sh -c "exec 3> $Z; echo abc >&3"
    refused "" "" "$busybox" sh -c "echo abc | tee $Z"
    refused "" "Invalid argument" "$busybox" sh -c "echo abc | dd of=$Z"
    stored "" 140000000 "$busybox" sh -c "echo 140000000 > $Z"
    stored "" 141000000 "$busybox" sh -c "exec 3> $Z; echo 141000000 >&3"
    stored "" 142000000 "$busybox" sh -c "echo 142000000 | tee $Z"
    stored "" 143000000 "$busybox" sh -c "printf 143000000 | dd of=$Z"
fi

# Every valid value reached the engine: one joulie.sim.write.accepted event each (drained at
# the engine's next tick), and every refused "abc" is a joulie.sim.write.rejected one.
for _ in $(seq 100); do
    missing=$(curl -s "$url/debug/events?node=intel-0&limit=1000" | "$py" -c '
import json, sys
ev = json.load(sys.stdin)["events"]
got = {e["attributes"].get("written") for e in ev if e["event"] == "joulie.sim.write.accepted"}
print(" ".join(v for v in sys.argv[1:] if v not in got))' "${values[@]}")
    [ -z "$missing" ] && break
    sleep 0.1
done
[ -z "$missing" ] && ok || bad "valid writes that never reached the engine: $missing"
n=$(curl -s "$url/debug/events?node=intel-0&limit=1000" | "$py" -c '
import json, sys
print(sum(1 for e in json.load(sys.stdin)["events"]
          if e["event"] == "joulie.sim.write.rejected" and e["attributes"].get("written") == "abc"))')
[ "$n" -ge 25 ] && ok || bad "only $n joulie.sim.write.rejected events for the 25 refused writes"
finish
