#!/usr/bin/env bash
# The page's routes at 10,000 nodes: the median time and size of each answer the page polls, and
# the tick's mean duration with no reader and while one page's worth of polling runs (the page's
# own schedule: cluster, history, a table page, the chosen node each second; events four times a
# second). Usage: bench/web_bench.sh [path/to/hwemu] [NODES]
set -euo pipefail
hwemu=${1:-build/hwemu}
n=${2:-10000}
tmp=$(mktemp -d /dev/shm/hwemu-web-bench.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null && wait $pid 2>/dev/null; rm -rf "$tmp"' EXIT
cat >"$tmp/spec.yaml" <<SPEC
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: web-bench}
spec:
  defaults: {baseLoad: {cpuUtil: 0.6, memoryIntensity: 0.2, cpuClass: cpu.compute_bound}}
  pools:
  - {name: a, profile: intel-xeon-2s-rapl, count: $((n / 2))}
  - {name: b, profile: amd-epyc-2s-hsmp, count: $((n - n / 2)), baseLoad: {cpuUtil: 0.3}}
SPEC
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$hwemu" serve --spec "$tmp/spec.yaml" --root "$tmp/root" --addr 127.0.0.1:$port 2>"$tmp/serve.err" &
pid=$!
for _ in $(seq 1200); do curl -sf http://127.0.0.1:$port/healthz >/dev/null 2>&1 && break; sleep 0.1; done
head -1 "$tmp/serve.err"
URL=http://127.0.0.1:$port python3 - <<'PY'
import os, statistics, threading, time, urllib.request
url = os.environ["URL"]
def get(p):
    t = time.perf_counter()
    with urllib.request.urlopen(url + p) as r:
        body = r.read()
    return time.perf_counter() - t, len(body)
def tick_mean(seconds):
    def read():
        s = c = 0.0
        for line in urllib.request.urlopen(url + "/metrics").read().decode().splitlines():
            if line.startswith("joulie_sim_emulate_tick_duration_seconds_sum"): s = float(line.split()[1])
            if line.startswith("joulie_sim_emulate_tick_duration_seconds_count"): c = float(line.split()[1])
        return s, c
    s0, c0 = read(); time.sleep(seconds); s1, c1 = read()
    return (s1 - s0) / max(1, c1 - c0) * 1000
h = __import__("json").loads(urllib.request.urlopen(url + "/debug/history").read())
ev = __import__("json").loads(urllib.request.urlopen(url + "/debug/events?limit=1").read())["count"]
routes = ["/", "/debug/cluster", "/debug/nodes?offset=0&limit=25&sort=node&order=asc",
          "/debug/nodes?offset=5000&limit=25&sort=power&order=desc",
          "/debug/nodes?offset=0&limit=25&sort=node&order=asc&q=b-99",
          "/debug/history?since=0", "/debug/history?since=%d" % h["last"],
          "/debug/events?after=%d&limit=200" % ev, "/telemetry/a-0", "/debug/nodes (unpaged)", "/metrics"]
print("%-62s %10s %10s" % ("route", "median ms", "bytes"))
for r in routes:
    p = "/debug/nodes" if r.endswith("(unpaged)") else r
    runs = [get(p) for _ in range(5 if p in ("/metrics", "/debug/nodes") else 30)]
    print("%-62s %10.2f %10d" % (r, statistics.median(x[0] for x in runs) * 1000, runs[-1][1]))
idle = tick_mean(10)
stop = False
def page():  # one page's polling
    k = 0
    while not stop:
        get("/debug/events?after=%d&limit=200" % ev)
        if k % 4 == 0:
            for p in ("/debug/cluster", "/debug/history?since=%d" % h["last"], "/debug/nodes?offset=0&limit=25&sort=power&order=desc", "/telemetry/a-0"):
                get(p)
        k += 1
        time.sleep(0.25)
t = threading.Thread(target=page); t.start()
busy = tick_mean(10)
stop = True; t.join()
print("tick mean: %.2f ms with no reader, %.2f ms while a page polls (ratio %.2f)" % (idle, busy, busy / idle))
PY
