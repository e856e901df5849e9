#!/usr/bin/env bash
# The runs directory and a run's files (docs/security.md "The runs directory"):
#   A  the runs directory is held to the root's rules: under a world-writable non-sticky directory,
#      world-writable itself, a symbolic link (<root>/runs -> elsewhere), or (as root) owned by
#      another user: the engine refuses to start, with the remedy; as root, `nobody` cannot plant a
#      link in an accepted runs directory (the attack of issue 25 item 7)
#   B  a suspended run whose directory or jobs.jsonl was swapped for a symbolic link is not resumed
#      (never followed: the link's target is not written), and the reason is said
#   C  phantom runs: 4 rounds of 4 concurrent POST /runs: one 201 and three 409 per round, and every
#      run directory left is a run GET /runs lists (a loser leaves none)
set -u
hwemu=$(realpath "${1:-build/hwemu}")
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
command -v curl >/dev/null || { echo "SKIP: curl not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
spec=tests/runs/cluster.yaml
"$hwemu" trace generate --jobs 24 --seed 7 --time-scale 4 --out "$tmp/trace.jsonl" 2>/dev/null || { bad "trace"; finish; }
args=(run --spec "$spec" --trace "$tmp/trace.jsonl" --speed max --batch 1)

# refused ROOT RUNSDIR PATTERN: `hwemu run` refuses with a message matching PATTERN, exit 1
refused() {
    "$hwemu" "${args[@]}" --root "$1" --runs-dir "$2" >/dev/null 2>"$tmp/err"
    local rc=$?
    if [ $rc -eq 1 ] && grep -q "$3" "$tmp/err"; then ok; else bad "A: $2: exit $rc, $(cat "$tmp/err")"; fi
}
# ---- A ----------------------------------------------------------------------------------------
mkdir -p "$tmp/open" && chmod 0777 "$tmp/open"
refused "$tmp/r1" "$tmp/open/runs" "runs directory .*parent .* writable by other users"
mkdir -p "$tmp/r2/runs" && chmod 0777 "$tmp/r2/runs"
refused "$tmp/r2" "$tmp/r2/runs" "runs directory .* has mode 0777"
mkdir -p "$tmp/r3" "$tmp/elsewhere" && ln -s "$tmp/elsewhere" "$tmp/r3/runs"
refused "$tmp/r3" "$tmp/r3/runs" "runs directory .* symbolic link"
[ -z "$(ls "$tmp/elsewhere")" ] && ok || bad "A: the engine wrote through the runs directory's link"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
    mkdir -p "$tmp/r4/runs" && chown nobody "$tmp/r4/runs"
    refused "$tmp/r4" "$tmp/r4/runs" "runs directory .* is owned by user [0-9]* (nobody)"
    # an accepted runs directory: nobody cannot put anything in it
    mkdir -p "$tmp/r5/runs"
    chmod 0755 "$tmp" # let nobody reach it
    if setpriv --reuid nobody --regid nogroup --clear-groups ln -s /tmp "$tmp/r5/runs/run-20990101T000000Z-1" 2>/dev/null; then
        bad "A: nobody planted a link in the runs directory"
    else ok; fi
    chmod 0700 "$tmp"
else
    echo "A: not root: the owner check and the attack as nobody are skipped"
fi

# ---- B: a swapped run directory or file is never followed --------------------------------------
# suspend ROOT: a run suspended by SIGTERM in ROOT; prints its directory
suspend() {
    "$hwemu" "${args[@]}" --root "$1" >/dev/null 2>"$tmp/s.err" &
    local p=$!
    for _ in $(seq 500); do grep -q " on [0-9]* nodes from " "$tmp/s.err" && break; sleep 0.01; done
    sleep 0.5
    kill -TERM $p
    wait $p
    [ $? -eq 3 ] || return 1
    ls -d "$1"/runs/run-*
}
mkdir -p "$tmp/victim"
: >"$tmp/victim/jobs.jsonl"
if d=$(suspend "$tmp/b1"); then
    mv "$d/jobs.jsonl" "$tmp/b1-jobs" && ln -s "$tmp/victim/jobs.jsonl" "$d/jobs.jsonl"
    "$hwemu" "${args[@]}" --root "$tmp/b1" >/dev/null 2>"$tmp/b1.err"
    grep -q "cannot resume: cannot continue $d/jobs.jsonl: it is a symbolic link: refused" "$tmp/b1.err" && ok ||
        bad "B: jobs.jsonl as a link: $(cat "$tmp/b1.err")"
    [ ! -s "$tmp/victim/jobs.jsonl" ] && ok || bad "B: the engine wrote through jobs.jsonl's link"
else
    bad "B: the run was not suspended"
fi
if d=$(suspend "$tmp/b2"); then
    cp -r "$d" "$tmp/victim/run" && mv "$d" "$tmp/b2-moved" && ln -s "$tmp/victim/run" "$d"
    before=$(find "$tmp/victim/run" -type f -exec md5sum {} + | sort)
    "$hwemu" "${args[@]}" --root "$tmp/b2" >/dev/null 2>"$tmp/b2.err"
    grep -q "run $d failed: not a directory (a symbolic link?): refused, never followed" "$tmp/b2.err" && ok ||
        bad "B: the run directory as a link: $(cat "$tmp/b2.err")"
    [ "$before" = "$(find "$tmp/victim/run" -type f -exec md5sum {} + | sort)" ] && ok ||
        bad "B: the engine wrote into the link's target"
else
    bad "B: the run was not suspended"
fi

# ---- C: phantom runs ----------------------------------------------------------------------------
port=$(free_port)
url=http://127.0.0.1:$port
root=$tmp/c
serve_start "$url" "$tmp/c.err" --spec "$spec" --root "$root" --addr 127.0.0.1:$port --speed max --batch 1 ||
    { bad "C: serve: $(cat "$tmp/c.err")"; finish; }
# a trace of 2,000 workloads: each submission parses it for a while, so the four overlap
"$hwemu" trace generate --jobs 2000 --seed 7 --out "$tmp/big.jsonl" 2>/dev/null || bad "C: trace"
for round in 1 2 3 4; do
    for k in 1 2 3 4; do
        curl -s -o "$tmp/c.$k" -w '%{http_code}\n' --data-binary @"$tmp/big.jsonl" "$url/runs" >"$tmp/c.code.$k" &
    done
    wait $(jobs -p | grep -v "^$pid$") 2>/dev/null
    codes=$(cat "$tmp"/c.code.* | sort | tr '\n' ' ')
    [ "$codes" = "201 409 409 409 " ] && ok || bad "C: round $round: $codes"
    id=$(cat "$tmp"/c.[1-4] | jq -r 'select(.state == "running") | .runId' | head -1)
    curl -s -X POST "$url/runs/$id/stop" >/dev/null
    for _ in $(seq 100); do curl -s "$url/runs/$id" | grep -q '"state":"stopped"\|"state":"completed"' && break; sleep 0.05; done
done
listed=$(curl -s "$url/runs" | jq -r '.runs[].runId' | sort | tr '\n' ' ')
ondisk=$(ls "$root/runs" | sort | tr '\n' ' ')
[ "$listed" = "$ondisk" ] && ok || bad "C: run directories $ondisk, GET /runs lists $listed"
grep -l '"state":[[:space:]]*"running"' "$root"/runs/*/summary.json 2>/dev/null && bad "C: a summary.json says running" || ok
kill $pid; wait $pid 2>/dev/null
finish
