#!/usr/bin/env bash
# POST /runs {"tracePath"} reads only from the operator's trace directory (issue 25 item 2,
# docs/security.md "Traces named over HTTP"). On main any local client could make the engine
# read any path as its user: /dev/zero until the engine aborted, FIFOs that blocked both HTTP
# threads, a root-only 0600 file whose content came back in the 400, and a 0600 trace copied to
# a 0644 trace.jsonl. Here:
# - without --trace-dir, tracePath is 403 saying how to allow it; a trace in the body still runs;
# - with it: "..", an absolute path elsewhere, a symbolic link (leaf or directory) are 403; a
#   FIFO and a character device (/dev/zero's numbers, 1:5) are 400 at once and /healthz stays up;
#   a file over 64 MiB is 413 at once; a missing file is 404;
# - a problem in a file is reported as file:line: field: what, never with the file's values (a
#   marker string in the file never appears in the answer);
# - a valid 0600 trace runs, its copy trace.jsonl is 0600 and the run's directory 0700; the
#   same for `hwemu run --trace` of a 0600 file;
# - a trace with 100,000 problems answers the first 100 and "... and 99900 more" (the CLI prints
#   100: diag.h DIAG_PRINT_MAX), a few KB instead of 10 MB.
# Usage: test_http_trace_dir.sh HWEMU_BINARY   (run from the source tree; the device case needs root)
set -u
hwemu=$(realpath "$1")
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d /tmp/hwemu-tracedir.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT
# post JSON: "CODE SECONDS", the body in $tmp/body (bounded: 20 s)
post() { curl -s --max-time 20 -o "$tmp/body" -w '%{http_code} %{time_total}' -X POST --data-binary "$1" "$url/runs"; }
fast() { python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 2 else 1)" "${1#* }"; }
job='{"type":"job","jobId":"j1","work":{"cpuUnits":100000}}'
stop_run() { # stops the run of $tmp/body's runId and waits until a new one may start
    local id
    id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["runId"])' "$tmp/body" 2>/dev/null) || return
    curl -s -X POST "$url/runs/$id/stop" >/dev/null
    for _ in $(seq 100); do
        [ "$(curl -s "$url/runs/$id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')" != running ] && return
        sleep 0.1
    done
}

# 1. No trace directory: tracePath is 403 with the remedy; the body still works
port=$(free_port)
url=http://127.0.0.1:$port
serve_start "$url" "$tmp/err" --root "$tmp/root1" --addr 127.0.0.1:$port --tick 100ms || bad "serve: $(cat "$tmp/err")"
r=$(post '{"tracePath":"/etc/passwd"}')
[[ "$r" == "403 "* ]] && grep -qF 'hwemu serve --trace-dir DIR, or SIM_TRACE_DIR' "$tmp/body" && ok \
    || bad "tracePath without --trace-dir: $r $(cat "$tmp/body")"
r=$(post "$job")
[[ "$r" == "201 "* ]] && ok || bad "a trace in the body: $r $(cat "$tmp/body")"
stop_run
kill $pid
wait $pid
pid=

# 2. With a trace directory
td=$tmp/traces
mkdir -p "$td/sub" "$tmp/outside"
echo "$job" >"$tmp/outside/secret.jsonl"
chmod 0600 "$tmp/outside/secret.jsonl"
ln -s "$tmp/outside/secret.jsonl" "$td/link.jsonl"
ln -s "$tmp/outside" "$td/linkdir"
mkfifo "$td/fifo.jsonl" "$td/fifo2.jsonl"
command -v mknod >/dev/null && [ "$(id -u)" = 0 ] && mknod "$td/zero.jsonl" c 1 5
truncate -s $((64 * 1024 * 1024 + 1)) "$td/big.jsonl"
printf '%s\n{"type":"job","jobId":"j2","intentClass":"MARKER-7f3a9"}\n%s\n' "$job" \
    '{"type":"job","jobId":"j3","podTemplate":{"requests":{"memory":"MARKER-7f3a9"}}}' >"$td/bad.jsonl"
chmod 0600 "$td/bad.jsonl"
echo "$job" >"$td/sub/good.jsonl"
chmod 0600 "$td/sub/good.jsonl"
serve_start "$url" "$tmp/err" --root "$tmp/root2" --addr 127.0.0.1:$port --tick 100ms --trace-dir "$td" \
    || bad "serve --trace-dir: $(cat "$tmp/err")"
for p in "../outside/secret.jsonl" "$tmp/outside/secret.jsonl" "sub/../../outside/secret.jsonl" "link.jsonl" \
    "linkdir/secret.jsonl" "/etc/passwd"; do
    r=$(post "{\"tracePath\":\"$p\"}")
    [[ "$r" == "403 "* ]] && ok || bad "tracePath $p: $r $(cat "$tmp/body")"
done
# two FIFOs at once, then the device: answered at once, never read
post '{"tracePath":"fifo.jsonl"}' >"$tmp/f1" &
f1=$!
post '{"tracePath":"fifo2.jsonl"}' >"$tmp/f2" &
f2=$!
wait $f1 $f2
for f in "$tmp/f1" "$tmp/f2"; do
    r=$(cat "$f")
    [[ "$r" == "400 "* ]] && fast "$r" && ok || bad "a FIFO: $r"
done
[ "$(curl -s --max-time 5 "$url/healthz")" = ok ] && ok || bad "healthz after the FIFOs"
if [ -e "$td/zero.jsonl" ]; then
    r=$(post '{"tracePath":"zero.jsonl"}')
    [[ "$r" == "400 "* ]] && grep -q 'not a regular file' "$tmp/body" && fast "$r" && ok || bad "a device: $r $(cat "$tmp/body")"
fi
r=$(post '{"tracePath":"big.jsonl"}')
[[ "$r" == "413 "* ]] && grep -q 'larger than 64 MiB' "$tmp/body" && fast "$r" && ok || bad "65 MiB: $r $(cat "$tmp/body")"
r=$(post '{"tracePath":"nope.jsonl"}')
[[ "$r" == "404 "* ]] && ok || bad "a missing file: $r $(cat "$tmp/body")"
r=$(post '{"tracePath":"bad.jsonl"}')
[[ "$r" == "400 "* ]] && grep -qF 'bad.jsonl:2: intentClass' "$tmp/body" && grep -qF 'bad.jsonl:3: podTemplate.requests.memory' "$tmp/body" && ok \
    || bad "an invalid trace file: $r $(cat "$tmp/body")"
grep -q 'MARKER-7f3a9' "$tmp/body" && bad "the file's content came back: $(cat "$tmp/body")" || ok
# the same problems in the body are the client's own: quoted (the CLI's messages)
r=$(post "@$td/bad.jsonl")
grep -q 'MARKER-7f3a9' "$tmp/body" && ok || bad "a body's own value is not quoted: $r $(cat "$tmp/body")"
# a valid 0600 trace (absolute, under the directory): 0600 copy in a 0700 directory
r=$(post "{\"tracePath\":\"$td/sub/good.jsonl\"}")
[[ "$r" == "201 "* ]] && ok || bad "a valid 0600 trace: $r $(cat "$tmp/body")"
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("runId",""))' "$tmp/body")
[ "$(stat -c %a "$tmp/root2/runs/$id/trace.jsonl" 2>&1)" = 600 ] && ok \
    || bad "trace.jsonl: $(stat -c %a "$tmp/root2/runs/$id/trace.jsonl" 2>&1)"
[ "$(stat -c %a "$tmp/root2/runs/$id" 2>&1)" = 700 ] && ok || bad "run directory: $(stat -c %a "$tmp/root2/runs/$id" 2>&1)"
stop_run
# 100,000 problems: 100 of them and the count
python3 -c 'import sys; sys.stdout.write("{\"type\":\"job\"}\n" * 100000)' >"$tmp/many.jsonl"
r=$(post "@$tmp/many.jsonl")
python3 - "$tmp/body" <<'EOF' && ok || bad "100,000 problems: $r $(head -c 300 "$tmp/body")"
import json, os, sys
o = json.load(open(sys.argv[1]))
p = o["problems"]
assert len(p) == 101 and p[-1] == "... and 99900 more" and o["problemCount"] == 100000, (len(p), p[-1])
assert os.path.getsize(sys.argv[1]) < 64 * 1024, os.path.getsize(sys.argv[1])
EOF
[ "$(curl -s "$url/healthz")" = ok ] && ok || bad "healthz at the end"
kill $pid
wait $pid
pid=

# 3. hwemu run of a 0600 trace: the same modes
timeout 60 "$hwemu" run --root "$tmp/root3" --runs-dir "$tmp/runs3" --trace "$td/sub/good.jsonl" --speed max \
    >/dev/null 2>"$tmp/run.err"
d=$(ls -d "$tmp/runs3"/run-* 2>/dev/null | head -1)
[ -n "$d" ] && [ "$(stat -c %a "$d/trace.jsonl")" = 600 ] && [ "$(stat -c %a "$d")" = 700 ] && ok \
    || bad "hwemu run of a 0600 trace: ${d:-no run directory} $(stat -c '%n %a' "$d" "$d/trace.jsonl" 2>&1) $(cat "$tmp/run.err")"
finish
