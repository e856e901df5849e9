#!/usr/bin/env bash
# A new user's first mistakes, each answered at once with what went wrong, where and what to do:
# a busy --addr (exit 1 before any node is rendered: no segment, no root written, well before a
# start would end) and the bound address answering 503 during a long start, a typo'd command or option ("did you mean"), a trace with a typo'd key
# (refused at file:line with "did you mean", by `trace validate` and by `run` before it starts),
# and an unknown HTTP route (404 listing every route, the same list as docs/http-api.md's table,
# and each listed route served: not answered "no such route").
# Usage: test_first_use.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid= holder=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; [ -n "$holder" ] && kill $holder 2>/dev/null; rm -rf "$tmp"' EXIT

# --- a busy address: a listener of another program (Python's socket), then serve on its port
port=$(free_port)
/usr/bin/python3 -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen()
print("listening", flush=True); time.sleep(300)' "$port" >"$tmp/holder.out" &
holder=$!
for _ in $(seq 100); do grep -q listening "$tmp/holder.out" 2>/dev/null && break; sleep 0.05; done
# a 2,000-node spec: its rendering alone would take seconds (bench/README.md), the refusal none
cat >"$tmp/big.yaml" <<YAML
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: big}
spec:
  pools:
  - {name: big, profile: intel-xeon-2s-rapl, count: 2000}
YAML
"$hwemu" clusterspec validate --spec "$tmp/big.yaml" >/dev/null 2>"$tmp/v.err" || bad "the 2,000-node spec is not valid: $(cat "$tmp/v.err")"
t0=$(date +%s%N)
"$hwemu" serve --spec "$tmp/big.yaml" --root "$tmp/busy" --addr 127.0.0.1:$port >/dev/null 2>"$tmp/busy.err"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
[ $rc = 1 ] && ok || bad "serve on a busy port: exit $rc, expected 1"
grep -q "cannot listen on 127.0.0.1:$port: Address already in use.*choose another with --addr or SIM_ADDR" "$tmp/busy.err" && ok ||
    bad "busy port message: $(cat "$tmp/busy.err")"
[ ! -e "$tmp/busy" ] && ok || bad "serve on a busy port wrote its root: $(ls -R "$tmp/busy" | head -5)"
# generous for a loaded machine: the point is that no node was rendered (checked above), not speed
[ $ms -lt 10000 ] && ok || bad "serve on a busy port took $ms ms to say so"
kill $holder; holder=

# --- while a long start renders its nodes, the bound address answers 503 "starting" at once (no
# request hangs), and once /healthz is 200 the start line is on stderr
sed 's/count: 2000/count: 1000/' "$tmp/big.yaml" >"$tmp/mid.yaml"
port=$(free_port)
"$hwemu" serve --spec "$tmp/mid.yaml" --root "$tmp/mid" --addr 127.0.0.1:$port 2>"$tmp/mid.err" &
pid=$!
n503=0 code=
for _ in $(seq 1200); do
    code=$(curl -s --max-time 5 -o "$tmp/mid.body" -w '%{http_code}' "http://127.0.0.1:$port/healthz")
    [ "$code" = 503 ] && grep -q '"error":"the engine is starting' "$tmp/mid.body" && n503=$((n503 + 1))
    [ "$code" = 200 ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.05
done
[ "$code" = 200 ] && grep -q "hwemu serve: 1000 nodes (0 resumed) from $tmp/mid.yaml" "$tmp/mid.err" && ok ||
    bad "the 1,000-node start: last answer $code, stderr $(cat "$tmp/mid.err")"
# 1,000 nodes take 0.56 s to render on an idle machine (bench/README.md), ten polls or more
[ $n503 -ge 1 ] && ok || bad "no 503 \"starting\" answer during the start (first answer $code)"
kill $pid; wait $pid; pid=

# --- did you mean: commands (the Commands: table of hwemu --help) and options (each command's table)
did() { # did EXPECTED_MESSAGE ARGS...: exit 2 and the message on stderr
    local want=$1; shift
    "$hwemu" "$@" >/dev/null 2>"$tmp/did.err"; local rc=$?
    [ $rc = 2 ] && grep -qF -- "$want" "$tmp/did.err" && ok || bad "hwemu $*: exit $rc, stderr $(cat "$tmp/did.err"), expected: $want"
}
did 'unknown command "sevre"; did you mean "serve"?' sevre
did 'unknown command "wirte"; did you mean "write"?' wirte
did 'unknown command "trcae"; did you mean "trace"?' trcae
did 'unknown command "frobnicate"' frobnicate
did 'hwemu serve: unknown option --adr; did you mean --addr?' serve --adr 127.0.0.1:0
did 'hwemu run: unknown option --trcae=x.jsonl; did you mean --trace?' run --trcae=x.jsonl
did 'hwemu exec: unknown option --noed; did you mean --node?' exec --noed x -- true
did 'hwemu trace generate: unknown option --jbos; did you mean --jobs?' trace generate --jbos 3 --out "$tmp/x.jsonl"
did 'hwemu clusterspec: unknown option --spce; did you mean --spec?' clusterspec list --spce x
did 'hwemu agents: unknown option --pol; did you mean --pool?' agents --pol p -- true
did 'hwemu serve: --sp is ambiguous: --spec, --speed' serve --sp x
did 'hwemu run: --trace needs a value' run --trace
did 'hwemu serve: unknown option --frobnicate' serve --frobnicate

# --- a trace with typo'd keys: each at file:line with the key it meant; the run does not start
cat >"$tmp/typo.jsonl" <<'JSONL'
{"type":"job","jobId":"a","work":{"cpuUnits":100}}
{"type":"job","jobId":"b","work":{"cpuUnit":100}}
{"type":"job","jobId":"c","podTemplat":{"requests":{"cpu":"2"}}}
JSONL
"$hwemu" trace validate "$tmp/typo.jsonl" >/dev/null 2>"$tmp/typo.err"; rc=$?
[ $rc = 1 ] && ok || bad "trace validate of a typo'd trace: exit $rc"
grep -qF "$tmp/typo.jsonl:2: work.cpuUnit: unknown key; did you mean \"cpuUnits\"?" "$tmp/typo.err" && ok || bad "work.cpuUnit: $(cat "$tmp/typo.err")"
grep -qF "$tmp/typo.jsonl:3: podTemplat: unknown key; did you mean \"podTemplate\"?" "$tmp/typo.err" && ok || bad "podTemplat: $(cat "$tmp/typo.err")"
grep -q ":1:" "$tmp/typo.err" && bad "line 1 is good but was reported: $(cat "$tmp/typo.err")" || ok
"$hwemu" run --trace "$tmp/typo.jsonl" --root "$tmp/run" --speed max >/dev/null 2>"$tmp/run.err"; rc=$?
[ $rc = 1 ] && grep -qF "typo.jsonl:2: work.cpuUnit: unknown key" "$tmp/run.err" && ok || bad "run of a typo'd trace: exit $rc: $(cat "$tmp/run.err")"
# every key the generator writes (both modes, workload records, AMD and NVIDIA GPUs) is accepted
"$hwemu" trace generate --jobs 300 --seed 11 --amd-gpu-ratio 0.3 --out "$tmp/gen.jsonl" 2>/dev/null &&
"$hwemu" trace generate --mode diurnal --sim-hours 1 --seed 11 --out "$tmp/gen2.jsonl" 2>/dev/null || bad "trace generate failed"
for f in gen gen2; do
    "$hwemu" trace validate "$tmp/$f.jsonl" >/dev/null 2>"$tmp/gen.err" && ok || bad "generated $f.jsonl refused: $(head -3 "$tmp/gen.err")"
done

# --- the 404 lists every route: the same set as docs/http-api.md's table, and each is served
port=$(free_port)
url=http://127.0.0.1:$port
serve_start "$url" "$tmp/serve.err" --root "$tmp/r" --addr 127.0.0.1:$port --tick 200ms || { bad "serve: $(cat "$tmp/serve.err")"; finish; }
code=$(curl -s -o "$tmp/404.json" -w '%{http_code}' "$url/no/such/route")
[ "$code" = 404 ] && ok || bad "GET /no/such/route: $code"
/usr/bin/python3 - "$tmp/404.json" docs/http-api.md >"$tmp/routes" <<'PY' || bad "404 routes against docs/http-api.md: $(cat "$tmp/routes")"
import json, re, sys
listed = json.load(open(sys.argv[1]))["routes"]
documented = set()
for line in open(sys.argv[2]):
    if line.startswith("| `"):  # the table's first column: `METHOD /path[?query]`, comma-separated
        for r in re.findall(r"`((?:GET|POST|PUT|DELETE) /[^`]*)`", line.split(" | ")[0]):
            documented.add(re.sub(r"\[\?.*\]$", "", r))
missing, extra = documented - set(listed), set(listed) - documented
if missing or extra or len(listed) != len(set(listed)):
    print("documented but not in the 404:", sorted(missing), "in the 404 but not documented:", sorted(extra))
    sys.exit(1)
for r in listed:
    print(r)
PY
[ "$(wc -l <"$tmp/routes")" -ge 20 ] && ok || bad "the 404 lists $(wc -l <"$tmp/routes") routes"
# each listed route, with a real node and a run id, answers (whatever the code) without "no such route"
while read -r method path; do
    p=${path//<node>/intel-0}; p=${p//<runId>/run-none}; p=${p//<format>/kepler-0.7}; p=${p//<file>/app.js}; p=${p//.../}
    curl -s -o "$tmp/r.body" -X "$method" ${method:+--data-binary @/dev/null} "$url$p" >/dev/null
    grep -q "no such route" "$tmp/r.body" && bad "$method $p (listed as $path): $(head -c 200 "$tmp/r.body")" || ok
done <"$tmp/routes"
finish
