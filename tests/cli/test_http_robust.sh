#!/usr/bin/env bash
# The HTTP server under hostile or unlucky clients, and its options: 1,200 slow half-open
# connections held while /healthz and /metrics still answer (with the soft descriptor limit at
# 1024, as a login shell has it, so the engine must raise it), no per-connection lines on stderr,
# idle connections closed after --http-timeout, the connection budget, basic auth (401 without
# credentials, 200 with; /healthz open), TLS with a throwaway self-signed certificate (openssl,
# curl --cacert), --addr validation (a port past 65535 is a usage error) and :0 printing the
# port the kernel picked, and the warning for a non-loopback address.
# Usage: test_http_robust.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
py=/usr/bin/python3
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT

# start_any ERRFILE ARGS...: serve with --addr ...:0 in the background; the URL it prints in $url.
start_any() {
    local errfile=$1
    shift
    "$hwemu" serve --root "$tmp/r" --tick 200ms "$@" 2>"$errfile" &
    pid=$!
    url=
    for _ in $(seq 300); do
        url=$(sed -n 's/.*; \(https\{0,1\}:\/\/[^;]*\); tick.*/\1/p' "$errfile")
        [ -n "$url" ] && return 0
        kill -0 $pid 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}
stop() { kill $pid 2>/dev/null; wait $pid 2>/dev/null; pid=; }

# --addr: a port past 65535 or not a number is a usage error (exit 2), never another port.
for a in 127.0.0.1:99999 127.0.0.1:65536 127.0.0.1:80x 127.0.0.1: nocolon '[::1:80'; do
    "$hwemu" serve --root "$tmp/r" --addr "$a" >/dev/null 2>"$tmp/e"
    rc=$?
    [ $rc = 2 ] && grep -q "listen address" "$tmp/e" && ok || bad "--addr $a: exit $rc, $(cat "$tmp/e")"
done
"$hwemu" serve --root "$tmp/r" --http-max-connections 0 >/dev/null 2>&1
[ $? = 2 ] && ok || bad "--http-max-connections 0 accepted"
"$hwemu" serve --root "$tmp/r" --tls-cert /nonexistent >/dev/null 2>"$tmp/e"
[ $? = 2 ] && grep -q "needs both" "$tmp/e" && ok || bad "--tls-cert without --tls-key: $(cat "$tmp/e")"

# :0 prints the port really bound, and that URL answers.
(ulimit -Sn 1024; start_any "$tmp/serve.err" --addr 127.0.0.1:0 --http-timeout 3s; wait $pid) &
sub=$!
for _ in $(seq 300); do
    url=$(sed -n 's/.*; \(http:\/\/[^;]*\); tick.*/\1/p' "$tmp/serve.err" 2>/dev/null)
    [ -n "$url" ] && break
    sleep 0.05
done
pid=$(pgrep -P $sub -f "hwemu serve" 2>/dev/null | head -1)
case $url in http://127.0.0.1:0 | "") bad "no real port printed: $(cat "$tmp/serve.err")" ;; *) ok ;; esac
[ "$(curl -s --max-time 5 "$url/healthz")" = ok ] && ok || bad "$url/healthz does not answer"

# 1,200 half-open connections, each trickling a byte of an unfinished request every second,
# held for 4 s: /healthz and /metrics answer meanwhile, each within 2 s.
port=${url##*:}
"$py" - "$port" >"$tmp/slow.out" 2>&1 <<'PY' &
import resource, socket, sys, time
port = int(sys.argv[1])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
socks, refused = [], 0
for i in range(1200):
    s = socket.socket()
    s.setblocking(True)
    try:
        s.connect(("127.0.0.1", port))
        s.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        socks.append(s)
    except OSError:
        refused += 1
print("open", len(socks), "refused", refused, flush=True)
end = time.time() + 4
while time.time() < end:
    for s in socks:
        try:
            s.send(b"X")
        except OSError:
            pass
    time.sleep(1)
for s in socks:
    s.close()
print("closed", flush=True)
PY
slow=$!
for _ in $(seq 100); do grep -q "^open" "$tmp/slow.out" && break; sleep 0.05; done
grep -q "^open 1200 refused 0" "$tmp/slow.out" && ok || bad "slow clients: $(cat "$tmp/slow.out")"
healthy=0 scraped=0
for _ in 1 2 3; do
    [ "$(curl -s --max-time 2 "$url/healthz")" = ok ] && healthy=$((healthy + 1))
    curl -s --max-time 2 "$url/metrics" | grep -q '^joulie_sim_emulate_tick_overruns_total' && scraped=$((scraped + 1))
    sleep 0.5
done
[ $healthy = 3 ] && ok || bad "/healthz answered $healthy of 3 times within 2 s under 1,200 slow clients"
[ $scraped = 3 ] && ok || bad "/metrics answered $scraped of 3 times within 2 s under 1,200 slow clients"
wait $slow
sleep 0.5
# no per-connection log lines: at most one rate-limited http line for 1,200 connections
n=$(grep -c "serve: http:" "$tmp/serve.err")
[ "$n" -le 1 ] && ok || bad "$n http lines on stderr for 1,200 connections: $(head -3 "$tmp/serve.err")"

# An idle connection is closed after --http-timeout (3 s here).
"$py" - "$port" >"$tmp/idle.out" 2>&1 <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(10)
t0 = time.time()
try:
    d = s.recv(100)
except OSError as e:
    d = b""
print("closed after %.1f s" % (time.time() - t0) if d == b"" else "got data")
PY
"$py" -c "import sys; t=float(sys.argv[1]); sys.exit(0 if 2 <= t <= 8 else 1)" "$(sed -n 's/closed after \(.*\) s/\1/p' "$tmp/idle.out")" 2>/dev/null \
    && ok || bad "idle connection with --http-timeout 3s: $(cat "$tmp/idle.out")"
kill $pid 2>/dev/null
wait $sub 2>/dev/null
pid=

# POST /runs bodies abandoned mid-upload (the client closes after half its Content-Length) are
# freed: under the ASan build (test.sh sets detect_leaks=1) a leak is reported at the engine's
# exit, which makes its exit status and stderr say so; the engine then still takes a run.
start_any "$tmp/a.err" --addr 127.0.0.1:0 || bad "serve: $(cat "$tmp/a.err")"
"$py" - "${url##*:}" >"$tmp/abandon.out" 2>&1 <<'PY'
import socket, sys
for _ in range(20):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.sendall(b"POST /runs HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\n" + b"x" * 100000)
    s.close()
print("sent")
PY
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/runs")
kill $pid 2>/dev/null
wait $pid
rc=$?
pid=
[ "$code" = 200 ] && [ $rc = 0 ] && ! grep -q "LeakSanitizer" "$tmp/a.err" && ok ||
    bad "abandoned POST /runs bodies: GET /runs $code, exit $rc: $(grep -A8 LeakSanitizer "$tmp/a.err" | head -12)"

# The connection budget: with 20, the 21st connection is closed at once (not queued), and
# the budget comes back when they go.
start_any "$tmp/b.err" --addr 127.0.0.1:0 --http-max-connections 20 || bad "serve: $(cat "$tmp/b.err")"
"$py" - "${url##*:}" >"$tmp/budget.out" 2>&1 <<'PY'
import socket, sys, time, urllib.request
port = int(sys.argv[1])
held = [socket.create_connection(("127.0.0.1", port)) for _ in range(20)]
time.sleep(0.3)
t0 = time.time()
try:  # closed at once: an orderly close (recv gives b"") or a reset, never an answer or a wait
    extra = socket.create_connection(("127.0.0.1", port))
    extra.settimeout(3)
    extra.send(b"GET /healthz HTTP/1.0\r\n\r\n")
    d = extra.recv(100)
except ConnectionResetError:
    d = b""
except OSError as e:
    d = repr(e).encode()
print("over budget:", "closed" if d == b"" else repr(d), "%.1f" % (time.time() - t0))
for s in held:
    s.close()
time.sleep(0.3)
print("after:", urllib.request.urlopen("http://127.0.0.1:%d/healthz" % port, timeout=3).read().decode().strip())
PY
grep -q "^over budget: closed" "$tmp/budget.out" && grep -q "^after: ok" "$tmp/budget.out" && ok \
    || bad "budget of 20: $(cat "$tmp/budget.out")"
stop

# Basic auth: 401 with a challenge without credentials or with wrong ones, 200 with them;
# /healthz stays open.
printf 'agent:s3cret\n' >"$tmp/auth"
start_any "$tmp/a.err" --addr 127.0.0.1:0 --http-auth-file "$tmp/auth" || bad "serve: $(cat "$tmp/a.err")"
c=$(curl -s -o "$tmp/body" -D "$tmp/hdr" -w '%{http_code}' "$url/metrics")
[ "$c" = 401 ] && grep -qi '^WWW-Authenticate: Basic realm="hwemu"' "$tmp/hdr" && grep -q "authentication required" "$tmp/body" \
    && ok || bad "no credentials: $c $(cat "$tmp/hdr")"
c=$(curl -s -o /dev/null -w '%{http_code}' -u agent:wrong "$url/metrics")
[ "$c" = 401 ] && ok || bad "wrong password: $c"
c=$(curl -s -o /dev/null -w '%{http_code}' -u agent:s3cret "$url/metrics")
[ "$c" = 200 ] && ok || bad "with credentials: $c"
c=$(curl -s -o /dev/null -w '%{http_code}' -u agent:s3cret "$url/telemetry/intel-0")
[ "$c" = 200 ] && ok || bad "telemetry with credentials: $c"
c=$(curl -s -o /dev/null -w '%{http_code}' "$url/healthz")
[ "$c" = 200 ] && ok || bad "/healthz without credentials: $c"
c=$(curl -s -o /dev/null -w '%{http_code}' -X POST --data '{}' "$url/runs")
[ "$c" = 401 ] && ok || bad "POST /runs without credentials: $c"
stop
printf 'nopassword\n' >"$tmp/auth2"
"$hwemu" serve --root "$tmp/r" --addr 127.0.0.1:0 --http-auth-file "$tmp/auth2" >/dev/null 2>"$tmp/e"
[ $? -ne 0 ] && grep -q "user:password" "$tmp/e" && ok || bad "auth file without a colon: $(cat "$tmp/e")"

# TLS: a throwaway self-signed certificate for 127.0.0.1; curl trusts it with --cacert.
if openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$tmp/key.pem" -out "$tmp/cert.pem" >/dev/null 2>&1; then
    SIM_TLS_CERT=$tmp/cert.pem SIM_TLS_KEY=$tmp/key.pem start_any "$tmp/t.err" --addr 127.0.0.1:0 \
        --http-auth-file "$tmp/auth" || bad "serve with TLS: $(cat "$tmp/t.err")"
    case $url in https://*) ok ;; *) bad "TLS URL printed: $url" ;; esac
    [ "$(curl -s --max-time 5 --cacert "$tmp/cert.pem" "$url/healthz")" = ok ] && ok || bad "https /healthz"
    c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$tmp/cert.pem" -u agent:s3cret "$url/metrics")
    [ "$c" = 200 ] && ok || bad "https /metrics with credentials: $c"
    curl -s --max-time 5 "$url/healthz" >/dev/null 2>&1 && bad "curl trusted an unknown certificate" || ok
    curl -s --max-time 5 "http://${url#https://}/healthz" | grep -q '^ok' && bad "plain HTTP answered on the TLS port" || ok
    stop
    "$hwemu" serve --root "$tmp/r" --addr 127.0.0.1:0 --tls-cert "$tmp/key.pem" --tls-key "$tmp/key.pem" \
        >/dev/null 2>"$tmp/e"
    [ $? -ne 0 ] && grep -q "cannot serve https://127.0.0.1:[0-9]*: the certificate and key are not a PEM pair" "$tmp/e" && ok ||
        bad "a key given as the certificate: $(cat "$tmp/e")"
else
    bad "openssl could not make a certificate (apt-get install openssl)"
fi

# Another interface than loopback: a warning naming what is missing.
start_any "$tmp/w.err" --addr 0.0.0.0:0 || bad "serve on 0.0.0.0: $(cat "$tmp/w.err")"
grep -q "warning: http://0.0.0.0:[0-9]* is reachable from other hosts, with no authentication" "$tmp/w.err" \
    && ok || bad "no warning for 0.0.0.0: $(cat "$tmp/w.err")"
stop
start_any "$tmp/l.err" --addr localhost:0 || bad "serve on localhost: $(cat "$tmp/l.err")"
grep -q "warning" "$tmp/l.err" && bad "warning for loopback: $(cat "$tmp/l.err")" || ok
stop
finish
