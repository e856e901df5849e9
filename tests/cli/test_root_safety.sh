#!/usr/bin/env bash
# The root directory against another local user (docs/security.md): `nobody` creates the root
# first (with an events.jsonl symlink to a victim file) and a root-run engine refuses it; an
# events.jsonl symlink in the engine's own root, a symbolic link as the root, a world-writable
# root and a world-writable non-sticky parent are refused; the victim file is never written.
# An engine run as nobody (setpriv) refuses root's root, and runs on its own. A setgid root
# with a group lets an agent of another user (nobody, in that group) read its segment.
# Usage: test_root_safety.sh HWEMU_BINARY   (run from the source tree, as root: setpriv/runuser)
set -u
hwemu=$(realpath "$1")
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! id nobody >/dev/null 2>&1; then
    echo "SKIP: needs root, setpriv (util-linux) and the user nobody"
    finish
fi
# Under /dev/shm as the default root is, in a sticky world-writable folder of our own.
base=$(mktemp -d /dev/shm/hwemu-rootsafety.XXXXXX)
chmod 1777 "$base"
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$base"' EXIT
victim=$base/victim
echo "precious" >"$victim"
chmod 0644 "$victim"
nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
# refused ROOT PATTERN WHAT [RUNNER...]: serve exits 1 with the pattern on stderr and nothing started
refused() {
    local root=$1 pat=$2 what=$3
    shift 3
    "$@" "$hwemu" serve --root "$root" --addr 127.0.0.1:0 --tick 100ms >"$base/out" 2>"$base/err" &
    local p=$! rc
    for _ in $(seq 100); do kill -0 $p 2>/dev/null || break; sleep 0.05; done
    kill -9 $p 2>/dev/null && { bad "$what: the engine started: $(cat "$base/err")"; wait $p; return; }
    wait $p
    rc=$?
    [ $rc = 1 ] && grep -q "$pat" "$base/err" && ok || bad "$what: exit $rc, $(cat "$base/err")"
}
victim_intact() { [ "$(cat "$victim")" = precious ] && ok || bad "$1: the victim file changed: $(cat "$victim")"; }

# 1. nobody creates the root first, with events.jsonl pointing at the victim.
runuser -u nobody -- mkdir "$base/r1"
runuser -u nobody -- ln -s "$victim" "$base/r1/events.jsonl"
refused "$base/r1" "is owned by user [0-9]* (nobody), not by this engine's user 0 (root).*remove it" \
    "a root created by nobody"
victim_intact "root created by nobody"
[ ! -e "$base/r1/intel-0.seg" ] && ok || bad "a segment was created in nobody's root"

# 2. Our own root, but events.jsonl is a symbolic link (or a FIFO).
mkdir "$base/r2"
ln -s "$victim" "$base/r2/events.jsonl"
refused "$base/r2" "events.jsonl is a symbolic link or not a regular file: refused" "a symlinked events.jsonl"
victim_intact "symlinked events.jsonl"
mkdir "$base/r2b"
mkfifo "$base/r2b/events.jsonl"
refused "$base/r2b" "events.jsonl is a symbolic link or not a regular file" "a FIFO as events.jsonl"

# 3. A symbolic link as the root (to a directory root owns that nobody can write).
mkdir "$base/real"
ln -s "$base/real" "$base/r3"
refused "$base/r3" "is a symbolic link" "a symlinked root"
[ -z "$(ls "$base/real")" ] && ok || bad "files written through the symlinked root: $(ls "$base/real")"

# 4. A root others can write into, and a parent others can write into without the sticky bit.
mkdir -m 0777 "$base/r4"
refused "$base/r4" "has mode 0777: other users can create files in it.*chmod go-w" "a world-writable root"
mkdir -m 0775 "$base/r4g"
refused "$base/r4g" "has mode 0775" "a group-writable root"
mkdir -m 0777 "$base/open"
refused "$base/open/r5" "parent $base/open is writable by other users and not sticky" "a world-writable parent"
[ ! -e "$base/open/r5" ] && ok || bad "the root was created under a world-writable parent"

# 5. An engine run as nobody: root's root refused; its own root (created by it) works.
mkdir "$base/r6"
refused "$base/r6" "is owned by user 0 (root), not by this engine's user [0-9]* (nobody)" "root's root, engine as nobody" "${nobody[@]}"
"${nobody[@]}" "$hwemu" serve --root "$base/own" --addr 127.0.0.1:0 --tick 100ms 2>"$base/err6" &
pid=$!
for _ in $(seq 200); do [ -e "$base/own/intel-0.seg" ] && grep -q "nodes (0 resumed)" "$base/err6" && break; sleep 0.05; done
[ "$(stat -c %U "$base/own/intel-0.seg" 2>/dev/null)" = nobody ] && ok || bad "engine as nobody on its own root: $(cat "$base/err6")"
kill $pid; wait $pid; pid=

# 6. Agents of another user through a group: a setgid root of group nogroup, mode 2750. The
# segments are made 0660 of that group, so nobody (in nogroup) reads them; others cannot.
mkdir -m 2750 "$base/shared"
chgrp nogroup "$base/shared"
chmod 2750 "$base/shared"
chmod 0755 "$base"
"$hwemu" serve --root "$base/shared" --addr 127.0.0.1:0 --tick 100ms 2>"$base/err7" &
pid=$!
for _ in $(seq 200); do grep -q "nodes (0 resumed)" "$base/err7" && break; sleep 0.05; done
[ "$(stat -c '%a %G' "$base/shared/intel-0.seg" 2>/dev/null)" = "660 nogroup" ] && ok \
    || bad "segment in a setgid root: $(stat -c '%a %G' "$base/shared/intel-0.seg" 2>&1) $(cat "$base/err7")"
v=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$hwemu" cat --root "$base/shared" --node intel-0 \
    /sys/class/powercap/intel-rapl:0/name 2>&1)
[ "$v" = package-0 ] && ok || bad "nobody in the root's group cannot read its segment: $v"
v=$(setpriv --reuid=nobody --regid=65533 --clear-groups "$hwemu" cat --root "$base/shared" --node intel-0 \
    /sys/class/powercap/intel-rapl:0/name 2>&1)
[ "$v" != package-0 ] && ok || bad "a user outside the group read the segment"
kill $pid; wait $pid; pid=
chmod 1777 "$base"
finish
