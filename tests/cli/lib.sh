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
