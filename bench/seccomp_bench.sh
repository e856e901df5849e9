#!/usr/bin/env bash
# The seccomp supervisor's cost (hwemu exec's route for Go and static programs), in one run on
# this machine: bench/seccomp_bench.c built with gcc -static, median ns per operation of
#   emulated orc     open+read+close of energy_uj of an intel-xeon-2s-rapl node
#   emulated burst   the same in bursts of 16 with 5 ms pauses, as an agent polling once per
#                    period does
#   emulated pread   pread at 0 on one energy_uj descriptor kept open
#   emulated open    open+close of energy_uj (the open's share)
#   tmpfs orc        open+read+close of a tmpfs file without the supervisor
#   tmpfs orc sv     the same file under the supervisor: what it costs a file it does not
#                    emulate (the open is a round trip answered with CONTINUE; read and close
#                    are not in the descriptor window, so never reach it)
#   getppid / sv     a call the filter lets through, without and with the filter
#   shim orc         the same program built dynamically, under hwemu exec's preload route (the
#                    shim answers it, no supervisor)
#   go orc / go readfile / go pread
#                    bench/seccomp_bench.go (any Go: the machine's or Debian's golang-go): os.Open + Read + Close,
#                    os.ReadFile, ReadAt at 0 on a kept file, under the supervisor
#   go tmpfs orc     the Go orc on the tmpfs file without the supervisor
#   floor trip / floor orc
#                    bench/seccomp_floor.c: with a supervisor that does no work, one
#                    notification round trip (the kernel's own cost: the floor of every
#                    intercepted call) and an open (descriptor injected) + read + close
# Each row is measured ROUNDS times, interleaved, and the median of the rounds is printed (the
# machine is shared: interleaving spreads the noise over all rows alike).
# Usage: bench/seccomp_bench.sh BUILD_DIR [ROUNDS]     (figures go to bench/README.md)
set -euo pipefail
build=${1:-build}
rounds=${2:-5}
root=$(mktemp -d /dev/shm/hwemu-bench.XXXXXX)
port=$((30000 + $$ % 20000))
trap 'kill $pid 2>/dev/null; rm -rf "$root"' EXIT
here=$(dirname "$0")
gcc -static -O2 -o "$root/seccomp_bench" "$here/seccomp_bench.c"
gcc -O2 -o "$root/seccomp_bench_dyn" "$here/seccomp_bench.c"
gcc -static -O2 -o "$root/seccomp_floor" "$here/seccomp_floor.c"
GOCACHE=$root/gocache GOPATH=$root/gopath go build -o "$root/seccomp_bench_go" "$here/seccomp_bench.go"
"$build/hwemu" serve --root "$root/r" --addr 127.0.0.1:$port 2>/dev/null &
pid=$!
for _ in $(seq 100); do [ -f "$root/r/intel-0.seg" ] && break; sleep 0.05; done
sleep 0.5
echo 1234567890123 >"$root/tmpfs_file"
file=/sys/class/powercap/intel-rapl:0/energy_uj
b=$root/seccomp_bench
g=$root/seccomp_bench_go
sv() { "$build/hwemu" exec --intercept=seccomp --root "$root/r" --node intel-0 -- "$@"; }
shim() { "$build/hwemu" exec --intercept=preload --root "$root/r" --node intel-0 -- "$@"; }
declare -A runs
rows=("emulated orc" "emulated burst" "emulated pread" "emulated open" "tmpfs orc" "tmpfs orc sv" "getppid" "getppid sv"
    "shim orc" "go orc" "go readfile" "go pread" "go tmpfs orc" "floor trip" "floor orc")
for _ in $(seq "$rounds"); do
    runs["emulated orc"]+="$(sv "$b" orc $file) "
    runs["emulated burst"]+="$(sv "$b" burst $file 11 320) "
    runs["emulated pread"]+="$(sv "$b" pread $file) "
    runs["emulated open"]+="$(sv "$b" open $file) "
    runs["tmpfs orc"]+="$("$b" orc "$root/tmpfs_file") "
    runs["tmpfs orc sv"]+="$(sv "$b" orc "$root/tmpfs_file") "
    runs["getppid"]+="$("$b" getppid "" 21 200000) "
    runs["getppid sv"]+="$(sv "$b" getppid "" 21 200000) "
    runs["shim orc"]+="$(shim "$root/seccomp_bench_dyn" orc $file 21 20000) "
    runs["go orc"]+="$(sv "$g" orc $file) "
    runs["go readfile"]+="$(sv "$g" readfile $file) "
    runs["go pread"]+="$(sv "$g" pread $file) "
    runs["go tmpfs orc"]+="$("$g" orc "$root/tmpfs_file") "
    runs["floor trip"]+="$("$root/seccomp_floor" trip) "
    runs["floor orc"]+="$("$root/seccomp_floor" orc) "
done
for r in "${rows[@]}"; do
    printf '%-16s %8s ns   (rounds: %s)\n' "$r" "$(tr ' ' '\n' <<<"${runs[$r]}" | grep . | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')" "${runs[$r]}"
done
