# Shared by the CLI tests (sourced, not run): counters, the closing line ctest and CI read,
# and starting `hwemu serve` in the background until it answers.
pass=0 fail=0
# The tests' inline Python imports exposition.py from here.
export PYTHONPATH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)${PYTHONPATH:+:$PYTHONPATH}"
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
# Prints "N passed, N failed" and exits non-zero on any failure.
finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit
}
# until_ok SECONDS CMD...: retries CMD (its output dropped) every 0.5 s until it succeeds; 1 after
# SECONDS (a test may define its own, with another period)
until_ok() {
    local t=$1
    shift
    for _ in $(seq $((t * 2))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
    return 1
}
# A TCP port on 127.0.0.1 that nothing listens on now (the kernel picks it), so tests that run
# at the same time never collide.
free_port() {
    /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# serve_start URL ERRFILE ARGS...: starts `$hwemu serve ARGS...` in the background (pid in $pid)
# and waits up to $serve_wait seconds (default 15) for URL/healthz. Returns 1 when it exits or
# never answers.
serve_start() {
    local url=$1 errfile=$2
    shift 2
    "$hwemu" serve "$@" 2>>"$errfile" &
    pid=$!
    for _ in $(seq $((${serve_wait:-15} * 20))); do
        curl -sf "$url/healthz" >/dev/null 2>&1 && return 0
        kill -0 $pid 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}

# prom_start DIR PORT: Debian's prometheus with DIR/prom.yml, its data in DIR/tsdb, on
# 127.0.0.1:PORT (pid in $ppid_, URL in $purl); waits until it is ready. 1 when it never is.
prom_start() {
    purl=http://127.0.0.1:$2
    prometheus --config.file="$1/prom.yml" --storage.tsdb.path="$1/tsdb" --web.listen-address=127.0.0.1:$2 \
        >"$1/prom.log" 2>&1 &
    ppid_=$!
    for _ in $(seq 200); do
        curl -sf "$purl/-/ready" >/dev/null 2>&1 && return 0
        kill -0 $ppid_ 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
# q QUERY: the value of a PromQL instant query with one series, else "none:<series>".
q() { curl -s --get "$purl/api/v1/query" --data-urlencode "query=$1" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
r = d["data"]["result"] if d.get("status") == "success" else []
print(r[0]["value"][1] if len(r) == 1 else "none:%d" % len(r))'; }
# prom_scraped N: waits (30 s at most) until N targets have 6 s of scrapes, the window rate()
# over [5s] needs, and all of them are up.
prom_scraped() {
    for _ in $(seq 60); do
        [ "$(q 'count(count_over_time(up[6s]) >= 6)')" = "$1" ] && break
        sleep 0.5
    done
    [ "$(q 'sum(up)')" = "$1" ]
}

# npm_ci DIR LOG: `npm ci` in DIR (its package.json and package-lock.json) when DIR/node_modules is
# missing or older than the lock file (the normal and the sanitizer build share it), under a lock,
# since tests using DIR may run at the same time. Returns 1 with the reason on stdout.
npm_ci() {
    (
        flock 9
        if [ ! -f "$1/node_modules/.package-lock.json" ] || [ "$1/package-lock.json" -nt "$1/node_modules/.package-lock.json" ]; then
            npm ci --prefix "$1" --no-audit --no-fund >"$2" 2>&1 || { echo "npm ci in $1 failed: $(tail -5 "$2")"; exit 1; }
        fi
    ) 9>"${TMPDIR:-/tmp}/hwemu-npm-$(basename "$1")-$(id -u).lock"
}

# receiver_start DIR PORT LOG: the OTLP receiver of tests/otlp (receiver.js: decodes every
# request with @opentelemetry/otlp-transformer, one JSON line per request into LOG) on
# 127.0.0.1:PORT, pid in $rpid, after npm_ci of tests/otlp. Returns 1 with the reason on stdout.
receiver_start() {
    local otlp
    otlp=$(cd "$(dirname "${BASH_SOURCE[0]}")/../otlp" && pwd)
    command -v node >/dev/null && command -v npm >/dev/null || { echo "node and npm are needed (apt-get install nodejs npm)"; return 1; }
    npm_ci "$otlp" "$1/npm.log" || return 1
    node "$otlp/receiver.js" "$2" "$3" >"$1/recv.out" 2>&1 &
    rpid=$!
    for _ in $(seq 100); do grep -q listening "$1/recv.out" 2>/dev/null && return 0; sleep 0.05; done
    echo "receiver did not start: $(cat "$1/recv.out")"
    return 1
}

# need_scaphandre BUILD TMP: sets $scaph to Scaphandre 1.0.0: $HWEMU_SCAPHANDRE when it is built
# already (./test.sh passes the normal tree's to the sanitizer tree's run, so CI builds it once),
# else BUILD's, built on first use by scripts/fetch-scaphandre.sh. Exits 77 (skipped) when no Rust
# toolchain can build it, and ends the test with a failure when the build fails.
need_scaphandre() {
    local rc=0
    if [ -n "${HWEMU_SCAPHANDRE:-}" ] && [ -x "$HWEMU_SCAPHANDRE" ]; then
        scaph=$HWEMU_SCAPHANDRE
    else
        scaph=$(scripts/fetch-scaphandre.sh "$1" 2>"$2/fetch.err") || rc=$?
    fi
    if [ $rc = 3 ]; then
        cat "$2/fetch.err"
        echo "SKIP: no Rust toolchain to build Scaphandre"
        exit 77
    fi
    [ $rc = 0 ] && [ -x "$scaph" ] || { bad "scripts/fetch-scaphandre.sh $1: $(cat "$2/fetch.err")"; finish; }
}

# nvml_venv BUILD LOG: nvidia-ml-py 12.535.161 (PyPI) in a venv of the build tree, BUILD/nvml-venv,
# made once (a lock keeps tests that run at once from making it twice); pip's output in LOG.
# Returns 1 when it could not be made.
nvml_venv() {
    (
        flock 9
        [ -f "$1/nvml-venv/.ready" ] && exit 0
        python3 -m venv "$1/nvml-venv" && "$1/nvml-venv/bin/pip" install -q nvidia-ml-py==12.535.161 &&
            touch "$1/nvml-venv/.ready"
    ) 9>"$1/.nvml-venv.lock" >"$2" 2>&1
    [ -f "$1/nvml-venv/.ready" ]
}

# cap_packages SPEC ROOT NODE UW ERRFILE: starts `$hwemu serve` on SPEC and ROOT, writes UW into
# the node's package 0 and 1 PL1 files (constraint_0_power_limit_uw, as an agent would), waits a
# tick for the physics to take it, and stops the engine: a run afterwards on ROOT runs under the
# caps. Returns 1 (what went wrong in ERRFILE) when serve does not start or a write fails.
cap_packages() {
    local spec=$1 root=$2 node=$3 uw=$4 errfile=$5 port rc=0
    port=$(free_port)
    serve_start "http://127.0.0.1:$port" "$errfile" --spec "$spec" --root "$root" --addr "127.0.0.1:$port" || return 1
    for z in 0 1; do
        "$hwemu" write --node "$node" --root "$root" /sys/class/powercap/intel-rapl:$z/constraint_0_power_limit_uw "$uw" \
            2>>"$errfile" || rc=1
    done
    sleep 1.5 # one tick applies it
    kill $pid
    wait $pid
    pid=
    return $rc
}
