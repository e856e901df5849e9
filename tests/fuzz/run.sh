#!/usr/bin/env bash
# Runs every libFuzzer target of tests/fuzz (fuzz_*.c) for SECONDS each on its corpus: first the
# inputs kept in tests/fuzz/corpus/<name>/ (and the project's own specs and profiles as extra
# seeds), then new ones libFuzzer derives from them, into a scratch directory (the repository's
# corpora are never written). A crash, a sanitizer report, a leak or a hang (-timeout) fails the
# run; the input is kept and its path printed, to become a regression test.
#   tests/fuzz/run.sh [SECONDS] [BUILD_DIR]     defaults: 12 s per target, build-fuzz
# Builds BUILD_DIR with clang (-DHWEMU_FUZZ=ON) first. Without clang and libFuzzer it says so and
# exits 0 (CI installs them: .ci/run). Longer runs: docs/fuzzing.md.
set -u
cd "$(dirname "$0")/../.."
secs=${1:-12}
build=${2:-build-fuzz}
cc=$(command -v clang-14 || command -v clang || true)
if [ -z "$cc" ] || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
    echo "SKIP: fuzzing needs clang and libFuzzer (apt-get install clang-14 libclang-rt-14-dev)"
    exit 0
fi
mkdir -p "$build"
log=$build/fuzz-build.log
if ! { cmake -S . -B "$build" -DCMAKE_C_COMPILER="$cc" -DHWEMU_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$log" 2>&1 &&
       cmake --build "$build" -j"$(nproc)" --target fuzz >>"$log" 2>&1; }; then
    tail -30 "$log"
    echo "FAIL: the fuzz build failed (log: $log)"
    echo "fuzz: 0 passed, 1 failed"
    exit 1
fi
# extra seed directories per target (read only)
extra_spec="specs tests/specs tests/corpus/specs"
extra_profile="profiles"
extra_trace="tests/corpus/traces"
pass=0 fail=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for bin in "$build"/tests/fuzz/fuzz_*; do
    [ -x "$bin" ] || continue
    t=$(basename "$bin")
    name=${t#fuzz_}
    mkdir -p "$work/$name" "$work/$name.crash"
    seeds=()
    [ -d "tests/fuzz/corpus/$name" ] && seeds+=("tests/fuzz/corpus/$name")
    eval "extra=\${extra_$name:-}"
    for d in $extra; do seeds+=("$d"); done
    start=$(date +%s)
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$work/$name.crash/" "$work/$name" "${seeds[@]}" >"$work/$name.log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name.log")
    if [ $rc = 0 ]; then
        echo "$t: ${runs:-?} runs in $(($(date +%s) - start)) s, no failure"
        pass=$((pass + 1))
    else
        keep=$(mktemp -d "${TMPDIR:-/tmp}/hwemu-fuzz-$name.XXXXXX")
        cp "$work/$name.crash"/* "$keep/" 2>/dev/null
        grep -E "ERROR|SUMMARY|runtime error|==[0-9]+==" "$work/$name.log" | head -15
        cp "$work/$name.log" "$keep/log"
        echo "FAIL: $t (exit $rc); the input and log are kept in $keep: reproduce with $bin $keep/<crash-file>"
        fail=$((fail + 1))
    fi
done
echo "fuzz: $pass passed, $fail failed"
[ $fail = 0 ]
