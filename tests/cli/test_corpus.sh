#!/usr/bin/env bash
# The broken-input corpus: every spec in tests/corpus/specs and every profiles directory in
# tests/corpus/profiles must be refused with exit 1 and each of its "expect" lines on stderr
# (file:line:col, subject, what was expected), never a crash or a sanitizer report.
# Usage: test_corpus.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
check() { # name, expected-lines-file, command...
    local name=$1 expect=$2; shift 2
    local err rc
    err=$("$@" 2>&1 >/dev/null); rc=$?
    local ok=1
    if [ "$rc" -ne 1 ]; then echo "FAIL $name: exit $rc, expected 1"; ok=0; fi
    if grep -q -e 'AddressSanitizer' -e 'runtime error' -e 'LeakSanitizer' <<<"$err"; then
        echo "FAIL $name: sanitizer report"; ok=0
    fi
    while IFS= read -r want; do
        [ -n "$want" ] || continue
        if ! grep -qF -- "$want" <<<"$err"; then echo "FAIL $name: missing: $want"; ok=0; fi
    done <"$expect"
    if [ $ok = 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); printf '  stderr was:\n%s\n' "$err" | sed 's/^/    /'; fi
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for spec in tests/corpus/specs/*.yaml; do
    sed -n 's/^# expect: //p' "$spec" >"$tmp/expect"
    [ -s "$tmp/expect" ] || { echo "FAIL $spec: no '# expect:' line"; fail=$((fail + 1)); continue; }
    check "$spec" "$tmp/expect" "$hwemu" clusterspec validate --spec "$spec"
done
for dir in tests/corpus/profiles/*/; do
    dir=${dir%/}
    check "$dir" "$dir/expect" "$hwemu" profiles list --profiles-dir "$dir"
done
# A spec that is not there, and one that is a directory.
printf '%s\n' "tests/corpus/nope.yaml: cannot open: No such file or directory" >"$tmp/expect"
check missing-file "$tmp/expect" "$hwemu" clusterspec validate --spec tests/corpus/nope.yaml
printf '%s\n' "tests/corpus: is a directory, expected a YAML file" >"$tmp/expect"
check directory "$tmp/expect" "$hwemu" clusterspec validate --spec tests/corpus
finish
