#!/usr/bin/env bash
# What a spec needs, checked before the nodes start (issue 25 item 9, docs/robustness.md
# "Capacity"). On main a spec of 1,000,000 nodes passed `validate` and `serve` died of SIGABRT
# without a message (a failed calloc), and 100,000 nodes on a small root printed one ENOSPC line
# a node (99,747). Now:
# - validate of 1,000,000 nodes says a warning (over 100,000) and exits 0;
# - serve of 1,000,000 nodes exits 1 with one line saying what is short (memory on any machine
#   with less than about 100 GiB available, else the root's space), never a signal;
# - a small root (HWEMU_DEBUG_ROOT_FREE stands in for it: 50,000,000 bytes, less than the pages
#   2,000 new segments hold, about 48 KiB each with segment format 11, seg_image_resident) is one
#   line naming the root, the need, what agents may add and the free space, with no segment
#   written; a resume of segments already there needs no new space;
# - a node holds no descriptor (issue 31: the engine held its segment open, so RLIMIT_NOFILE
#   bounded the node count): 2,000 nodes serve under ulimit -n 256, and the engine's open
#   descriptors stay below 100;
# - nodes that fail one by one (their segment paths taken by directories) print 10 reasons and
#   one count, not a line each;
# - memory counts the segments when the root keeps them in memory (issue 31: a tmpfs root's
#   segments are most of what a node costs, and the check counted only the engine's own part):
#   50 intel-xeon-2s-rapl nodes need about 2 MiB of node state (node_resident_bytes: what a started
#   node touches) and 4 MiB of segments (the pages 50 new files hold, 48 KiB each with segment
#   format 11, and a static file of 1.7 MB), so with HWEMU_DEBUG_MEM_AVAILABLE at 4 MB they are
#   refused on a tmpfs root (/dev/shm), naming both parts and what agents may add, and start on a
#   disk-backed one; at 1 MB both refuse;
# - more nodes than the kernel's memory maps allow (vm.max_map_count) are one line naming it.
# Usage: test_serve_capacity.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$(realpath "$1")
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d /tmp/hwemu-capacity.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT
spec() { # spec N FILE: N nodes of intel-xeon-2s-rapl
    printf 'apiVersion: sim.joulie.io/v1alpha1\nkind: ClusterSpec\nmetadata: {name: big}\nspec:\n  pools:\n  - {name: intel, profile: intel-xeon-2s-rapl, count: %s}\n' "$1" >"$2"
}
spec 1000000 "$tmp/1m.yaml"
spec 2000 "$tmp/2k.yaml"
spec 50 "$tmp/50.yaml"

# 1. validate warns, exit 0
out=$(timeout 120 "$hwemu" clusterspec validate --spec "$tmp/1m.yaml" 2>&1)
rc=$?
[ $rc = 0 ] && grep -q 'warning: 1000000 nodes, more than 100000' <<<"$out" && ok || bad "validate 1M: rc $rc $out"
out=$("$hwemu" clusterspec validate --spec "$tmp/2k.yaml" 2>&1)
[ $? = 0 ] && [ -z "$out" ] && ok || bad "validate 2,000 nodes is not silent: $out"

# 2. serve of 1,000,000 nodes: exit 1, one line
# (HWEMU_DEBUG_ROOT_FREE: 1 GB, so that a machine with the memory for it is
# still refused, by the root's space, instead of writing 194 GB)
HWEMU_DEBUG_ROOT_FREE=1000000000 timeout 300 "$hwemu" serve --spec "$tmp/1m.yaml" --root "$tmp/r1" \
    --addr 127.0.0.1:0 >/dev/null 2>"$tmp/e1a"
rc=$?
grep -v 'HWEMU_DEBUG_ROOT_FREE' "$tmp/e1a" >"$tmp/e1"
[ $rc = 1 ] && [ "$(wc -l <"$tmp/e1")" = 1 ] && \
    grep -qE '1000000 nodes need about [0-9.]+ GiB of memory|the root .* needs [0-9]+ MiB for 1000000 node segments' "$tmp/e1" \
    && ok || bad "serve 1M: rc $rc $(head -c 600 "$tmp/e1")"
[ -z "$(ls "$tmp/r1" | grep '\.seg$')" ] && ok || bad "serve 1M wrote segments"

# 3. a small root: one line with the root, the need and the free space
HWEMU_DEBUG_ROOT_FREE=50000000 timeout 120 "$hwemu" serve --spec "$tmp/2k.yaml" --root "$tmp/r2" \
    --addr 127.0.0.1:0 >/dev/null 2>"$tmp/e2"
rc=$?
grep -v 'HWEMU_DEBUG_ROOT_FREE' "$tmp/e2" >"$tmp/e2b"
[ $rc = 1 ] && [ "$(wc -l <"$tmp/e2b")" = 1 ] && \
    grep -qE "the root $tmp/r2 needs [0-9]+ MiB for 2000 node segments \(the pages new segments hold; agents' writes and counter reads may add up to [0-9]+ MiB later\) and its file system has 48 MiB free" "$tmp/e2b" \
    && ok || bad "small root: rc $rc $(cat "$tmp/e2")"
[ -z "$(ls "$tmp/r2" | grep -E '\.seg|\.static')" ] && ok || bad "the small root got files: $(ls "$tmp/r2" | head)"
# a resume needs no new space: 50 nodes started for real, then again with 5 MB "free" (their
# segments are there; only the static file, 1.4 MiB, is counted again)
port=$(free_port)
serve_start "http://127.0.0.1:$port" "$tmp/e3" --spec "$tmp/50.yaml" --root "$tmp/r3" --addr 127.0.0.1:$port \
    && ok || bad "50 nodes: $(cat "$tmp/e3")"
kill $pid; wait $pid; pid=
HWEMU_DEBUG_ROOT_FREE=5000000 serve_start "http://127.0.0.1:$port" "$tmp/e4" --spec "$tmp/50.yaml" --root "$tmp/r3" \
    --addr 127.0.0.1:$port && grep -q '50 nodes (50 resumed)' "$tmp/e4" && ok || bad "resume on a full root: $(cat "$tmp/e4")"
kill $pid; wait $pid; pid=
HWEMU_DEBUG_ROOT_FREE=5000000 timeout 60 "$hwemu" serve --spec "$tmp/2k.yaml" --root "$tmp/r3" --addr 127.0.0.1:0 \
    >/dev/null 2>"$tmp/e5"
[ $? = 1 ] && grep -q 'needs [0-9]* MiB for 2000 node segments' "$tmp/e5" && ok || bad "1,950 new nodes on a full root: $(cat "$tmp/e5")"

# 4. descriptors: 2,000 nodes under ulimit -n 256 (soft and hard; the rest of the test needs no
# more); the engine serves the last node and holds fewer than 100 descriptors
ulimit -n 256
port=$(free_port)
serve_wait=120 serve_start "http://127.0.0.1:$port" "$tmp/e6" --spec "$tmp/2k.yaml" --root "$tmp/r4" \
    --addr 127.0.0.1:$port && ok || bad "2,000 nodes under ulimit -n 256: $(head -c 600 "$tmp/e6")"
curl -sf "http://127.0.0.1:$port/telemetry/intel-1999" | grep -q '"node": *"intel-1999"' && ok ||
    bad "2,000 nodes under ulimit -n 256: no telemetry of intel-1999"
nfd=$(ls /proc/$pid/fd | wc -l)
[ "$nfd" -lt 100 ] && ok || bad "the engine of 2,000 nodes holds $nfd descriptors: $(ls -l /proc/$pid/fd | tail -5)"
kill $pid && wait $pid
pid=

# 5. 50 nodes failing one by one: 10 reasons and a count
mkdir -p "$tmp/r5"
for i in $(seq 0 49); do mkdir "$tmp/r5/intel-$i.seg"; done
timeout 60 "$hwemu" serve --spec "$tmp/50.yaml" --root "$tmp/r5" --addr 127.0.0.1:0 >/dev/null 2>"$tmp/e7"
rc=$?
[ $rc = 1 ] && [ "$(grep -c 'intel-[0-9]*\.seg' "$tmp/e7")" = 10 ] && \
    grep -q '^hwemu serve: 50 nodes could not start (the first 10 said why above)' "$tmp/e7" && [ "$(wc -l <"$tmp/e7")" = 11 ] \
    && ok || bad "50 failing nodes: rc $rc $(head -c 1500 "$tmp/e7")"

# 6. the segments of a tmpfs root are memory
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
    shm=$(mktemp -d /dev/shm/hwemu-capacity.XXXXXX)
    trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp" "$shm"' EXIT
    HWEMU_DEBUG_MEM_AVAILABLE=4000000 timeout 60 "$hwemu" serve --spec "$tmp/50.yaml" --root "$shm/r" \
        --addr 127.0.0.1:0 >/dev/null 2>"$tmp/e8a"
    rc=$?
    grep -v 'HWEMU_DEBUG_MEM_AVAILABLE: the machine' "$tmp/e8a" >"$tmp/e8"
    [ $rc = 1 ] && [ "$(wc -l <"$tmp/e8")" = 1 ] && grep -qE "^hwemu serve: 50 nodes need about [5-7] MiB of memory \\([1-3] MiB of node state in the engine, [3-5] MiB of segments in the root $shm/r, a tmpfs, which keeps them in memory; .* up to [0-9]+ MiB more\\)" "$tmp/e8" \
        && grep -q 'choose a --root (SIM_HWEMU_ROOT) on a disk-backed file system' "$tmp/e8" \
        && ok || bad "50 nodes on a tmpfs root with 4 MB: rc $rc $(cat "$tmp/e8a")"
    [ -z "$(ls "$shm/r" | grep -E '\.seg|\.static')" ] && ok || bad "the refused tmpfs root got files: $(ls "$shm/r" | head)"
else
    echo "skipped: /dev/shm is not a tmpfs here"
fi
if [ "$(stat -f -c %T "$tmp")" != tmpfs ]; then
    port=$(free_port)
    HWEMU_DEBUG_MEM_AVAILABLE=4000000 serve_start "http://127.0.0.1:$port" "$tmp/e9" --spec "$tmp/50.yaml" \
        --root "$tmp/r6" --addr 127.0.0.1:$port && ok || bad "50 nodes on a disk root with 4 MB: $(cat "$tmp/e9")"
    kill $pid; wait $pid; pid=
    HWEMU_DEBUG_MEM_AVAILABLE=1000000 timeout 60 "$hwemu" serve --spec "$tmp/50.yaml" --root "$tmp/r7" \
        --addr 127.0.0.1:0 >/dev/null 2>"$tmp/e10"
    [ $? = 1 ] && grep -qE '^hwemu serve: 50 nodes need about [1-3] MiB of memory \(node state in the engine once started, each node with its job cgroup slots; not a run.s trace and jobs\) and this machine has 1 MiB available \(HWEMU_DEBUG_MEM_AVAILABLE' "$tmp/e10" \
        && ok || bad "50 nodes on a disk root with 1 MB: $(cat "$tmp/e10")"
else
    echo "skipped: $tmp is a tmpfs here"
fi

# 7. memory maps: the engine maps each node's segment once (seg_map), and the kernel bounds a
# process's maps (vm.max_map_count, 65,530 by default): more nodes than it allows are one line
# naming the limit and both remedies, before any file is written (where the limit is below 70,000)
max=$(cat /proc/sys/vm/max_map_count 2>/dev/null || echo 0)
if [ "$max" -gt 0 ] && [ "$max" -lt 70000 ]; then
    spec 70000 "$tmp/70k.yaml"
    HWEMU_DEBUG_MEM_AVAILABLE=1000000000000 timeout 300 "$hwemu" serve --spec "$tmp/70k.yaml" --root "$tmp/r8" \
        --addr 127.0.0.1:0 >/dev/null 2>"$tmp/e11a"
    rc=$?
    grep -v 'HWEMU_DEBUG_MEM_AVAILABLE: the machine' "$tmp/e11a" >"$tmp/e11"
    [ $rc = 1 ] && [ "$(wc -l <"$tmp/e11")" = 1 ] && grep -qE "^hwemu serve: 70000 nodes need about 70[0-9]+ memory maps \(one a node's segment\) and this process may have [0-9]+ more \(vm.max_map_count is $max, /proc/sys/vm/max_map_count\): start fewer nodes \(split the spec across engines with --shard.* sysctl -w vm.max_map_count=" "$tmp/e11" \
        && ok || bad "70,000 nodes over vm.max_map_count $max: rc $rc $(head -c 600 "$tmp/e11a")"
    [ -z "$(ls "$tmp/r8" 2>/dev/null | grep -E '\.seg|\.static')" ] && ok || bad "the refused root got files: $(ls "$tmp/r8" | head)"
else
    echo "skipped: vm.max_map_count is $max here"
fi
finish
