#!/usr/bin/env bash
# `hwemu serve` shows the progress of a long start on a terminal and nothing of the sort
# elsewhere: 2,000 nodes rendered, then resumed, with stderr a pseudo-terminal (python3's pty
# module), then resumed with stderr a file. Usage: test_progress.sh path/to/hwemu
set -uo pipefail
hwemu=$1
source "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=2000
cat >"$tmp/spec.yaml" <<SPEC
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: progress}
spec:
  pools:
  - {name: n, profile: intel-xeon-2s-rapl, count: $n}
SPEC

# on_pty OUT ARGS...: runs `hwemu serve ARGS...` with stdin, stdout and stderr a pseudo-terminal,
# stops it (SIGTERM) once it says it serves, and writes everything it printed to OUT.
on_pty() {
    local out=$1
    shift
    /usr/bin/python3 - "$out" "$hwemu" serve "$@" <<'PY'
import os, pty, signal, sys, time
out, argv = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)
data, deadline, stopped = b"", time.time() + 60, False
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break  # the child closed the terminal
    if not chunk:
        break
    data += chunk
    if not stopped and b"http://" in data:
        os.kill(pid, signal.SIGTERM)
        stopped = True
    if time.time() > deadline:
        os.kill(pid, signal.SIGKILL)
        break
os.waitpid(pid, 0)
open(out, "wb").write(data)
PY
}

port=$(free_port)
args=(--spec "$tmp/spec.yaml" --root "$tmp/root" --addr 127.0.0.1:$port)
on_pty "$tmp/render.out" "${args[@]}"
# "\rhwemu serve: rendering nodes: 812/2000 (41%), 1234 nodes/s, 1 s left\033[K"
re='hwemu serve: rendering nodes: [0-9]+/'$n' \([0-9]+%\), [0-9]+ nodes/s, [0-9]+ s left'
grep -aqE "$re" "$tmp/render.out" && ok || bad "no render progress on the terminal: $(cat -v "$tmp/render.out" | head -c 600)"
grep -aq $'\r' "$tmp/render.out" && grep -aq $'\033\[K' "$tmp/render.out" && ok || bad "the progress line is not rewritten in place"
grep -aq "hwemu serve: $n nodes (0 resumed)" "$tmp/render.out" && ok || bad "no start line: $(cat -v "$tmp/render.out" | tail -c 300)"
# the counts only grow, and the last one shown is below the total (the line is erased at the end)
counts=$(grep -aoE "rendering nodes: [0-9]+/" "$tmp/render.out" | grep -oE "[0-9]+")
sort -n -c <<<"$counts" 2>/dev/null && ok || bad "progress counts go back: $(tr '\n' ' ' <<<"$counts")"

on_pty "$tmp/resume.out" "${args[@]}"
grep -aqE "hwemu serve: resuming nodes: [0-9]+/$n " "$tmp/resume.out" && ok || bad "no resume progress: $(cat -v "$tmp/resume.out" | head -c 600)"
grep -aq "hwemu serve: $n nodes ($n resumed)" "$tmp/resume.out" && ok || bad "no resume start line"

# stderr not a terminal: the start and stop lines only
"$hwemu" serve "${args[@]}" 2>"$tmp/file.err" &
pid=$!
for _ in $(seq 600); do grep -q "http://" "$tmp/file.err" && break; sleep 0.05; done
kill -TERM $pid
wait $pid
grep -q "hwemu serve: $n nodes ($n resumed)" "$tmp/file.err" && ok || bad "no start line in the file: $(cat "$tmp/file.err")"
! grep -qE "nodes: [0-9]+/|s left" "$tmp/file.err" && ok || bad "progress written to a file: $(cat -v "$tmp/file.err")"
! grep -q $'\r' "$tmp/file.err" && ok || bad "a carriage return in the file"
[ "$(wc -l <"$tmp/file.err")" = 2 ] && ok || bad "stderr has $(wc -l <"$tmp/file.err") lines, not the start and stop lines: $(cat "$tmp/file.err")"
finish
