# Shared by the CLI tests (sourced, not run): counters, the closing line ctest and CI read,
# and starting `hwemu serve` in the background until it answers.
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
# Prints "N passed, N failed" and exits non-zero on any failure.
finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit
}
# A TCP port on 127.0.0.1 that nothing listens on now (the kernel picks it), so tests that run
# at the same time never collide.
free_port() {
    /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# serve_start URL ERRFILE ARGS...: starts `$hwemu serve ARGS...` in the background (pid in $pid)
# and waits up to 15 s for URL/healthz. Returns 1 when it exits or never answers.
serve_start() {
    local url=$1 errfile=$2
    shift 2
    "$hwemu" serve "$@" 2>>"$errfile" &
    pid=$!
    for _ in $(seq 300); do
        curl -sf "$url/healthz" >/dev/null 2>&1 && return 0
        kill -0 $pid 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}
