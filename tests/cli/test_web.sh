#!/usr/bin/env bash
# The page at GET / in headless Chromium (Debian's chromium, driven by playwright-core from
# tests/web): on a 1,000-node engine (tests/specs/web.yaml) no console errors, the node count and
# cluster power shown are /debug/nodes', the chart draws, a write through the shim reaches the
# event feed within two ticks (a refused one with its errno, a GPU cap reset too), the table
# pages, sorts and filters, a fault scheduled with `hwemu fault add` shows in the faults panel; a
# workload run (POST /runs, course lines every 2 s) is charted live and, once ended, shows
# course.jsonl's and summary.json's numbers, and its report link answers what `hwemu report`
# writes (tests/web/page_test.js says each check); the screenshots are kept as
# <build>/test-artifacts/web/page.png and runs.png. Skips (exit 77) when chromium or node is missing, or when
# the binary was built without the page. Usage: test_web.sh path/to/hwemu
set -uo pipefail
hwemu=$(realpath "$1")
source "$(dirname "$0")/lib.sh"
command -v chromium >/dev/null || { echo "SKIP: chromium is not installed (apt-get install chromium; .ci/run installs it)"; exit 77; }
command -v node >/dev/null && command -v npm >/dev/null || { echo "SKIP: node and npm are not installed (apt-get install nodejs npm)"; exit 77; }
root=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null && wait $pid 2>/dev/null; rm -rf "$root"' EXIT
port=$(free_port)
url=http://127.0.0.1:$port
tick=1
serve_wait=60 # 1,000 nodes start in 2 s here, 8 s in the sanitizer build, more under load
SIM_RUN_COURSE_INTERVAL=2s serve_start "$url" "$root/serve.err" --spec tests/specs/web.yaml --root "$root/r" --addr 127.0.0.1:$port \
    --tick ${tick}s || { echo "FAIL: serve did not start: $(cat "$root/serve.err")"; exit 1; }
code=$(curl -s -o "$root/index" -w '%{http_code}' "$url/")
if [ "$code" = 404 ] && grep -q "built without its web page" "$root/index"; then
    echo "SKIP: this hwemu was built without the page (HWEMU_WEB_UI=OFF): $(head -1 "$root/index")"
    exit 77
fi
[ "$code" = 200 ] && grep -q '<div class="chart"\|id="chart-cluster"' "$root/index" && ok || bad "GET / answered $code"
web=$(cd "$(dirname "$0")/../web" && pwd)
npm_ci "$web" "$root/npm.log" || { bad "npm ci in tests/web"; finish; }
artifacts=$(dirname "$hwemu")/test-artifacts/web
out=$(timeout 180 node "$web/page_test.js" "$url" "$hwemu" "$root/r" low-0 $tick "$artifacts" 2>&1)
echo "$out"
counts=$(tail -1 <<<"$out")
if [[ $counts =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    pass=$((pass + BASH_REMATCH[1]))
    fail=$((fail + BASH_REMATCH[2]))
else
    bad "the browser test did not finish"
fi
[ -s "$artifacts/page.png" ] && ok || bad "no screenshot at $artifacts/page.png"
finish
