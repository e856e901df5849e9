#!/usr/bin/env bash
# hwemu exec's seccomp route (shim/supervisor/supervisor.h): programs that bypass libc see the node too.
#   - a Go agent (tests/exec/agent.go, CGO_ENABLED=0: static, raw system calls) built here with
#     Go (the machine's, else Debian's golang-go), standard library only: discovery, a kept descriptor read with pread,
#     PL1 writes (floored, EINVAL), the cpufreq policies, /proc/cpuinfo, a child, and 16 threads
#     reading while the runtime preempts them (SIGURG)
#   - the shim's probe (tests/shim/shim_probe.c) built with gcc -static, against the kernel's
#     answers the shim is held to (tests/shim/shim_probe.expected): the second front end gives
#     the same answers
#   - the Go agent on a GPU node running nvidia-smi from PATH (fakesmi) to list and cap GPUs
#   - a static C agent (tests/exec/static_agent.c): readdir, readlink, writes, exec of a child
#   - prometheus-node-exporter (Go, cgo) with its default paths, scraped twice
#   - the routes (--intercept), exit statuses, a signal sent to hwemu exec, the supervisor
#     killed under a running agent, an orphan that outlives the agent
# Usage: test_exec_go.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid= bg=
trap '[ -n "$bg" ] && kill $bg 2>/dev/null; [ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
for tool in go gcc curl prometheus-node-exporter; do
    command -v $tool >/dev/null || { bad "$tool is not installed (scripts/install-deps.sh installs it)"; finish; }
done
port=$(free_port)
url=http://127.0.0.1:$port
serve_start "$url" "$tmp/err" --spec tests/specs/shim.yaml --root "$tmp/r" --addr 127.0.0.1:$port --tick 200ms ||
    { bad "serve: $(cat "$tmp/err")"; finish; }
X() { "$hwemu" exec --root "$tmp/r" --node intel-0 "$@"; }
Z=/sys/class/powercap/intel-rapl:0
reset_pl1() { "$hwemu" write --root "$tmp/r" --node intel-0 $Z/constraint_0_power_limit_uw 165000000 || bad "reset PL1"; }

# Builds: Go with its caches in the temporary directory and no network; C with -static.
export GOCACHE="$tmp/gocache" GOPATH="$tmp/gopath" HOME="$tmp/home" GOPROXY=off GOFLAGS= CGO_ENABLED=0
mkdir -p "$HOME"
go build -o "$tmp/agent" tests/exec/agent.go 2>"$tmp/gobuild" || { bad "go build: $(cat "$tmp/gobuild")"; finish; }
gcc -static -O2 -o "$tmp/static_agent" tests/exec/static_agent.c 2>"$tmp/ccerr" || bad "static_agent: $(cat "$tmp/ccerr")"
gcc -static -O2 -o "$tmp/probe" tests/shim/shim_probe.c -lpthread 2>"$tmp/ccerr" || bad "static probe: $(cat "$tmp/ccerr")"
readelf -l "$tmp/static_agent" | grep -q INTERP && bad "static_agent is not static"

# The Go agent, with the default route (auto: a Go program takes the seccomp route).
expected="zone intel-rapl:0 package-0 link=true dir=true -> ../../devices/virtual/powercap/intel-rapl/intel-rapl:0
zone intel-rapl:0:0 dram link=true dir=true -> ../../devices/virtual/powercap/intel-rapl/intel-rapl:0/intel-rapl:0:0
zone intel-rapl:1 package-1 link=true dir=true -> ../../devices/virtual/powercap/intel-rapl/intel-rapl:1
zone intel-rapl:1:0 dram link=true dir=true -> ../../devices/virtual/powercap/intel-rapl/intel-rapl:1/intel-rapl:1:0
energy_uj mode -r-------- size 4096
energy moves true (errors <nil> <nil>)
open energy_uj for writing: true
write pl1 err=<nil> readback 120000000
write invalid EINVAL true
readback after invalid 120000000
policies 96 with a frequency 96; cpu directories 96
first policy policy0 driver intel_pstate
cpuinfo processors 96
child name package-0
child energy ok true
child err <nil>
stress 2400 reads, bad 0"
out=$(X -- "$tmp/agent" 2>&1); rc=$?
[ $rc -eq 0 ] && [ "$out" = "$expected" ] && ok || { bad "Go agent (rc $rc):"; diff <(echo "$expected") <(echo "$out"); }
grep -q '"event":"joulie.sim.write.rejected".*"pid":' "$tmp/r/events.jsonl" 2>/dev/null || sleep 0.5
agent_events=$(grep -c 'joulie.sim.write' "$tmp/r/events.jsonl" 2>/dev/null)
[ "${agent_events:-0}" -ge 2 ] && ok || bad "the Go agent's writes are not events: $(tail -3 "$tmp/r/events.jsonl" 2>&1)"
reset_pl1

# The Go agent on a GPU node: nvidia-smi from PATH as a child (fakesmi, linked by hwemu exec),
# a cap through it, read back through it.
out=$("$hwemu" exec --root "$tmp/r" --node gpu-0 -- "$tmp/agent" gpu 2>&1)
expected="gpus 8 first 0, 400.00 W
pl err <nil>: Power limit for GPU 00000000:10:00.0 was set to 300.00 W from 400.00 W.
All done.
after 0, 300.00 W"
[ "$out" = "$expected" ] && ok || { bad "Go agent running nvidia-smi:"; diff <(echo "$expected") <(echo "$out"); }

# The shim's probe, statically linked: the same answers as the kernel gives (and the shim).
# nftw with FTW_CHDIR is left out: a chdir into the node's tree cannot be emulated from
# outside the process (the kernel's working directory stays the host's).
X -- "$tmp/probe" >"$tmp/probe.out" 2>&1
if diff <(grep -v '^open \|^nftw-depth' "$tmp/probe.out") <(grep -v '^nftw-depth' tests/shim/shim_probe.expected) >"$tmp/diff"; then ok; else
    bad "static probe differs from the kernel's answers:"; cat "$tmp/diff"; fi
reset_pl1

# The static C agent: auto takes the seccomp route; with --intercept=preload it sees the host.
expected="zone intel-rapl:0 package-0 -> ../../devices/virtual/powercap/intel-rapl/intel-rapl:0
zone intel-rapl:0:0 dram -> ../../devices/virtual/powercap/intel-rapl/intel-rapl:0/intel-rapl:0:0
zone intel-rapl:1 package-1 -> ../../devices/virtual/powercap/intel-rapl/intel-rapl:1
zone intel-rapl:1:0 dram -> ../../devices/virtual/powercap/intel-rapl/intel-rapl:1/intel-rapl:1:0
energy_uj mode 400 size 4096
energy moves 1
write pl1 9 readback 120000000
write invalid -1 Invalid argument
policies 96 with a frequency 96
cpuinfo processors 96
child name package-0
child status 0"
out=$(X -- "$tmp/static_agent" 2>&1)
[ "$out" = "$expected" ] && ok || { bad "static agent:"; diff <(echo "$expected") <(echo "$out"); }
reset_pl1
# A shell's redirections (dup2 onto 1 or 0): the number leaves the descriptor window, but a
# write on 0-9 is still the supervisor's (sv.h SV_LOW_FDS): stored at once, and a refused value
# fails that write (the agent's fflush, so its exit status 1), nothing left to say later.
X -- "$tmp/static_agent" redirect $Z/constraint_0_power_limit_uw 130000001
[ "$("$hwemu" cat --root "$tmp/r" --node intel-0 $Z/constraint_0_power_limit_uw)" = 130000000 ] && ok \
    || bad "a redirection's write (dup2 onto 1) was not stored"
err=$(X -- "$tmp/static_agent" redirect $Z/constraint_0_power_limit_uw abc 2>&1); rc=$?
[ $rc = 1 ] && ! grep -q "write error" <<<"$err" && ok || bad "refused redirection: rc=$rc $err"
[ "$(X -- "$tmp/static_agent" stdin $Z/name)" = "stdin package-0" ] && ok || bad "a file redirected to stdin"
# Thousands of opens (more than the placeholders made ahead), 200 held at once: right answers,
# and every description forgotten once closed.
out=$(HWEMU_SV_TRACE=stats X -- "$tmp/static_agent" churn 3000 2>&1)
grep -q "^churn ok$" <<<"$out" && grep -q "3200 emulated opens, 0 still open" <<<"$out" && ok || bad "churn: $out"
reset_pl1
host_cpus=$(grep -c '^processor' /proc/cpuinfo)
X --intercept=preload -- "$tmp/static_agent" 2>&1 | grep -q "^cpuinfo processors $host_cpus\$" && ok \
    || bad "--intercept=preload: a static program should see the host's $host_cpus CPUs"
[ "$(X --intercept=seccomp -- cat $Z/name 2>&1)" = package-0 ] && ok || bad "a libc program under --intercept=seccomp"
X --intercept=bogus -- true 2>/dev/null; [ $? -eq 2 ] && ok || bad "--intercept=bogus is a usage error"

# Exit statuses and signals.
X --intercept=seccomp -- sh -c 'exit 7'; [ $? -eq 7 ] && ok || bad "exit status through the supervisor"
X --intercept=seccomp -- no-such-command 2>/dev/null; [ $? -eq 127 ] && ok || bad "missing command: 127"
wait_ready() { for _ in $(seq 100); do grep -q ready "$1" 2>/dev/null && return 0; sleep 0.05; done; return 1; }
# (hwemu itself in the background, not the X function: $! must be hwemu exec's pid)
"$hwemu" exec --root "$tmp/r" --node intel-0 -- "$tmp/agent" wait >"$tmp/wait.out" 2>&1 &
bg=$!
wait_ready "$tmp/wait.out" || bad "agent wait: $(cat "$tmp/wait.out")"
kill -TERM $bg
wait $bg; rc=$?; bg=
[ $rc -eq 143 ] && ok || bad "SIGTERM to hwemu exec reaches the agent, which dies of it: rc $rc"
# The supervisor killed under a running agent: reported, and the agent does not run on.
"$hwemu" exec --root "$tmp/r" --node intel-0 -- "$tmp/agent" wait >"$tmp/wait.out" 2>"$tmp/wait.err" &
bg=$!
wait_ready "$tmp/wait.out"
sv=$(pgrep -P $bg | head -1); agent=$(pgrep -P "${sv:-0}" | head -1)
kill -9 "${sv:-0}"
wait $bg; rc=$?; bg=
sleep 0.3
state=$(ps -o stat= -p "${agent:-0}" 2>/dev/null)
[ $rc -eq 1 ] && grep -q "seccomp supervisor was killed by signal 9" "$tmp/wait.err" && [[ -z "$state" || "$state" == Z* ]] \
    && ok || bad "supervisor killed: rc $rc, agent state '$state', stderr: $(cat "$tmp/wait.err")"
# An orphan outlives the agent: hwemu exec returns while the orphan still waits (for orphan.out.go,
# made only after the return: an exec that waited for it would time out), and the orphan is still
# emulated.
timeout 60 "$hwemu" exec --root "$tmp/r" --node intel-0 -- "$tmp/agent" orphan "$tmp/orphan.out"; rc=$?
[ $rc -eq 0 ] && [ ! -e "$tmp/orphan.out" ] && ok || bad "hwemu exec waited for the orphan (rc $rc; 124: timed out)"
touch "$tmp/orphan.out.go"
until_ok 20 test -s "$tmp/orphan.out"
[ "$(cat "$tmp/orphan.out" 2>/dev/null)" = package-0 ] && ok || bad "orphan read: $(cat "$tmp/orphan.out" 2>&1)"

# prometheus-node-exporter (Go with cgo: dynamically linked, still raw system calls), with
# its default /sys and /proc, scraped twice.
np=$((40000 + RANDOM % 20000))
"$hwemu" exec --root "$tmp/r" --node intel-0 -- prometheus-node-exporter --web.listen-address=127.0.0.1:$np \
    >"$tmp/ne.log" 2>&1 &
bg=$!
for _ in $(seq 200); do curl -sf http://127.0.0.1:$np/metrics >"$tmp/m1" && break; sleep 0.05; done
sleep 1
curl -sf http://127.0.0.1:$np/metrics >"$tmp/m2" || bad "second scrape: $(tail -5 "$tmp/ne.log")"
kill -TERM $bg; wait $bg 2>/dev/null; bg=
rapl() { awk -v z="$2" '$1 ~ "^node_rapl_package_joules_total\\{index=\"" z "\",path=\"/sys/class/powercap/intel-rapl:" z "\"\\}$" {print $2}' "$1"; }
a0=$(rapl "$tmp/m1" 0) b0=$(rapl "$tmp/m2" 0) a1=$(rapl "$tmp/m1" 1) b1=$(rapl "$tmp/m2" 1)
[ -n "$a0" ] && [ -n "$a1" ] && awk -v a="$a0" -v b="$b0" -v c="$a1" -v d="$b1" 'BEGIN {exit !(b > a && d > c)}' \
    && ok || bad "node_rapl_package_joules_total of both packages, increasing: $a0 -> $b0, $a1 -> $b1"
grep -q '^node_scrape_collector_success{collector="rapl"} 1$' "$tmp/m1" && ok || bad "rapl collector failed"
[ "$(grep -c '^node_cpu_scaling_frequency_hertz{cpu=' "$tmp/m1")" = 96 ] \
    && [ "$(grep -c '^node_cpu_frequency_max_hertz{cpu="[0-9]*"} 3.9e+09$' "$tmp/m1")" = 96 ] \
    && ok || bad "node_cpu frequencies of the node's 96 CPUs: $(grep -c '^node_cpu_scaling_frequency_hertz' "$tmp/m1")"
cur=$("$hwemu" cat --root "$tmp/r" --node intel-0 /sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq)
awk -v want="$cur" '$1 == "node_cpu_scaling_frequency_hertz{cpu=\"0\"}" { got = $2 } END { exit !(got / 1000 == want) }' "$tmp/m2" \
    && ok || bad "node_cpu_scaling_frequency_hertz of cpu 0 is not the node's $cur kHz"
finish
