#!/usr/bin/env bash
# The HTTP and trace smalls of issue 25 item 10 (docs/security.md "The HTTP API", "Input files"):
# - `/telemetry/intel-0%00junk` is 404 (it answered 200 for intel-0: the decoded NUL cut the URL);
# - two conflicting Content-Length headers are 400 and the connection closed (RFC 9112 section
#   6.3 item 5: an invalid Content-Length is an unrecoverable framing error, 400); the same value
#   twice is accepted (RFC 9110 section 8.6 allows a repeated identical value);
# - `\u0000` in a label key is 400 (cJSON cut "a\u0000junk" to the key "a");
# - a trace whose jobId holds bytes that are not UTF-8, or \u0000, is refused with file:line, by
#   `hwemu trace validate` and by POST /runs (before, they reached events.jsonl and jobs.jsonl).
# Columns: {"type":"job","jobId":"j is 24 bytes, so the bad byte and the backslash are byte 25.
# Usage: test_http_smalls.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$(realpath "$1")
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d /tmp/hwemu-smalls.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT
port=$(free_port)
url=http://127.0.0.1:$port
serve_start "$url" "$tmp/err" --root "$tmp/root" --addr 127.0.0.1:$port --tick 100ms || {
    bad "serve: $(cat "$tmp/err")"
    finish
}

code() { curl -s -o "$tmp/body" -w '%{http_code}' "$@"; }
# 1. %00 in the path
[ "$(code "$url/telemetry/intel-0")" = 200 ] && ok || bad "telemetry/intel-0 is not 200"
c=$(code "$url/telemetry/intel-0%00junk")
[ "$c" = 404 ] && ok || bad "telemetry/intel-0%00junk: $c $(cat "$tmp/body")"
c=$(code "$url/nodes/intel-0%00junk/labels")
[ "$c" = 404 ] && ok || bad "nodes/intel-0%00junk/labels: $c $(cat "$tmp/body")"

# 2. Content-Length: raw requests (curl would send one header)
raw() { # raw REQUEST: the status line's code, or "closed"
    python3 - "$port" "$1" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
data = b""
try:
    while True:  # every request says Connection: close: read to the end
        b = s.recv(65536)
        if not b:
            break
        data += b
except (socket.timeout, ConnectionResetError):
    pass
line = data.split(b"\r\n", 1)[0].decode("latin-1")
print(line.split(" ")[1] if line.startswith("HTTP/") else "closed", "close" if b"onnection: close" in data else "keep")
EOF
}
r=$(raw 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 7\r\nConnection: close\r\n\r\nabcdefg')
[[ "$r" == "400 close" ]] && ok || bad "two conflicting Content-Length headers: $r"
r=$(raw 'POST /runs HTTP/1.1\r\nHost: x\r\nContent-Length: 2, 9\r\nConnection: close\r\n\r\n{}')
[[ "$r" == "400 "* ]] && ok || bad "Content-Length: 2, 9: $r"
r=$(raw 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc')
[[ "$r" == "200 "* ]] && ok || bad "the same Content-Length twice: $r"
[ "$(curl -s "$url/healthz")" = ok ] && ok || bad "healthz after the raw requests"

# 3. \u0000 in a label key
c=$(code -X PUT -d '{"a\u0000junk":"x"}' "$url/nodes/intel-0/labels")
[ "$c" = 400 ] && grep -q 'NUL' "$tmp/body" && ok || bad "label key with \\u0000: $c $(cat "$tmp/body")"
c=$(code "$url/nodes/intel-0/labels")
[ "$c" = 200 ] && ! grep -q '"a"' "$tmp/body" && ok || bad "a label \"a\" was stored: $(cat "$tmp/body")"
c=$(code -X PUT -d '{"team":"blue"}' "$url/nodes/intel-0/labels")
[ "$c" = 200 ] && grep -q '"team":"blue"' "$tmp/body" && ok || bad "a good label: $c $(cat "$tmp/body")"

# 4. Invalid UTF-8 and \u0000 in a jobId
printf '{"type":"job","jobId":"ok-1"}\n{"type":"job","jobId":"j\xff\xfe"}\n' >"$tmp/utf8.jsonl"
printf '{"type":"job","jobId":"ok-1"}\n{"type":"job","jobId":"j\\u0000x"}\n' >"$tmp/nul.jsonl"
printf '{"type":"job","jobId":"caf\xc3\xa9"}\n{"type":"job","jobId":"a\\\\u0000"}\n' >"$tmp/good.jsonl"
out=$("$hwemu" trace validate "$tmp/utf8.jsonl" 2>&1)
[ $? = 1 ] && grep -qF "$tmp/utf8.jsonl:2: record: byte 25 is not UTF-8" <<<"$out" && ok || bad "validate utf8: $out"
out=$("$hwemu" trace validate "$tmp/nul.jsonl" 2>&1)
[ $? = 1 ] && grep -qF "$tmp/nul.jsonl:2: record: a string holds \\u0000 (NUL) at column 25" <<<"$out" && ok \
    || bad "validate nul: $out"
out=$("$hwemu" trace validate "$tmp/good.jsonl" 2>&1)
[ $? = 0 ] && ok || bad "validate a UTF-8 jobId and an escaped backslash before u0000: $out"
c=$(code -X POST --data-binary @"$tmp/utf8.jsonl" "$url/runs")
[ "$c" = 400 ] && grep -qF 'request body:2: record: byte 25 is not UTF-8' "$tmp/body" && ok \
    || bad "POST /runs utf8: $c $(cat "$tmp/body")"
c=$(code -X POST --data-binary @"$tmp/nul.jsonl" "$url/runs")
[ "$c" = 400 ] && grep -qF 'request body:2: record: a string holds' "$tmp/body" && ok \
    || bad "POST /runs nul: $c $(cat "$tmp/body")"
python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$tmp/root/events.jsonl" && ok \
    || bad "events.jsonl is not UTF-8"
kill $pid
wait $pid
pid=
finish
