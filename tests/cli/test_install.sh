#!/usr/bin/env bash
# The install tree: `cmake --install` of this build into a temporary prefix, moved elsewhere
# afterwards (relocatable), has the layout of cmake/install.cmake and works from there with no
# HWEMU_* variable (scripts/check-installed.sh: serve, exec through the shim, fakesmi and NVML,
# a run); each man page renders with `man -l` (man-db) and names exactly the options of the
# command's --help, one page per command of `hwemu --help`; the bash completion offers each
# command and its --help's options, and every option it offers is one the command accepts.
# Usage: test_install.sh HWEMU_BINARY   (run from the source tree; the build tree is the binary's)
set -u
hwemu=$1
build=$(cd "$(dirname "$hwemu")" && pwd)
. "$(dirname "$0")/lib.sh"
command -v man >/dev/null || { echo "SKIP: man (man-db) is needed: apt-get install man-db"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/first" >"$tmp/install.log" 2>&1 || { bad "cmake --install: $(tail -5 "$tmp/install.log")"; finish; }
mkdir -p "$tmp/moved"
mv "$tmp/first" "$tmp/moved/tree"
t=$tmp/moved/tree
for f in bin/hwemu lib/hwemu/libhwemu-shim.so lib/hwemu/libhwemu-audit.so lib/hwemu/libhwemu-nvml.so lib/hwemu/fakesmi share/doc/hwemu/README.md \
         share/doc/hwemu/docs/cli.md share/hwemu/specs/smoke.yaml share/man/man1/hwemu.1.gz \
         share/bash-completion/completions/hwemu; do
    [ -f "$t/$f" ] && ok || bad "the install tree has no $f"
done
# every builtin profile, as in the source tree's profiles/
[ "$(ls "$t/share/hwemu/profiles/"*.yaml | wc -l)" = "$(ls profiles/*.yaml | wc -l)" ] && ok || bad "share/hwemu/profiles: $(ls "$t/share/hwemu/profiles")"
grep -q "$tmp/first" "$t/bin/hwemu" && bad "bin/hwemu holds the first prefix's path" || ok

# the moved tree serves, execs and runs (no HWEMU_* variables: it finds its parts itself)
scripts/check-installed.sh "$t/bin/hwemu" >"$tmp/check.out" 2>&1 && ok || bad "the moved tree: $(cat "$tmp/check.out")"

hw=$t/bin/hwemu
# The commands, from the Commands: table of `hwemu --help` (its rows' first words, a|b|c each),
# with the first subcommand of those that have them (to reach their options).
"$hw" --help | awk '/^Commands:/ {on = 1; next}
    on && /^  [a-z]/ {line = substr($0, 3); split(line, col, /   */); split(col[1], w, " "); n = split(w[1], c, "|")
                      s = w[2] ~ /^[a-z][a-z|-]*$/ ? w[2] : ""; sub(/\|.*/, "", s); for (i = 1; i <= n; i++) print c[i], s; next}
    on {exit}' >"$tmp/commands"
[ "$(wc -l <"$tmp/commands")" -ge 8 ] && ok || bad "hwemu --help lists $(wc -l <"$tmp/commands") commands: $(cat "$tmp/commands")"
longs() { grep -oE '(^|[^[:alnum:]-])--[a-z][a-z0-9-]*' | sed 's/^[^-]*--/--/' | sort -u; }
# man -l renders each page (LC_ALL=C: ASCII; a wide MANWIDTH so nothing wraps inside an option)
pages=$(cd "$t/share/man/man1" && ls)
[ "$pages" = "$( (echo hwemu.1.gz; while read -r c _; do echo "hwemu-$c.1.gz"; done <"$tmp/commands") | sort)" ] && ok ||
    bad "man pages $pages are not one per command"
page_of() { LC_ALL=C MANWIDTH=250 man --warnings -l "$t/share/man/man1/$1.1.gz" 2>"$tmp/man.err"; }
page_of hwemu >"$tmp/page" && [ ! -s "$tmp/man.err" ] && grep -q "^NAME" "$tmp/page" && ok || bad "man -l hwemu.1.gz: $(cat "$tmp/man.err")"
[ "$(longs <"$tmp/page")" = "$("$hw" --help | longs)" ] && ok || bad "hwemu(1)'s options differ from hwemu --help's"
while read -r c sub; do
    page_of "hwemu-$c" >"$tmp/page" && [ ! -s "$tmp/man.err" ] && grep -q "^SYNOPSIS" "$tmp/page" && ok ||
        bad "man -l hwemu-$c.1.gz: $(cat "$tmp/man.err")"
    "$hw" "$c" --help >"$tmp/help" || bad "hwemu $c --help exited $?"
    diff <(longs <"$tmp/page") <(longs <"$tmp/help") >"$tmp/diff" && ok || bad "hwemu-$c(1) against --help: $(cat "$tmp/diff")"
    grep -q "^ *hwemu $c" "$tmp/page" && ok || bad "hwemu-$c(1) has no synopsis of hwemu $c"
done <"$tmp/commands"

# The completion (bash, as bash-completion sources it): command names, then each command's options.
complete_words() { # complete_words WORD...: COMPREPLY for the line "WORD... " or "WORD...PARTIAL"
    bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _hwemu; printf "%s\n" "${COMPREPLY[@]}" | sort' \
        _ "$t/share/bash-completion/completions/hwemu" "$@"
}
[ "$(complete_words hwemu se)" = serve ] && ok || bad "completion of \"hwemu se\": $(complete_words hwemu se)"
[ "$(complete_words hwemu "" | grep -c .)" = "$(($(wc -l <"$tmp/commands") + 2))" ] && ok ||
    bad "completion of \"hwemu \": $(complete_words hwemu "" | tr '\n' ' ')"
while read -r c sub; do
    "$hw" "$c" --help >"$tmp/help"
    complete_words hwemu "$c" -- >"$tmp/offered"
    # every option line's first option is offered, and everything offered is in --help
    grep -oE '^  (-h, )?--[a-z][a-z0-9-]*' "$tmp/help" | sed 's/.*--/--/' | sort -u | comm -23 - "$tmp/offered" >"$tmp/missing"
    [ ! -s "$tmp/missing" ] && ok || bad "completion of hwemu $c lacks $(tr '\n' ' ' <"$tmp/missing")"
    comm -23 "$tmp/offered" <( (echo --help; longs <"$tmp/help") | sort -u) >"$tmp/extra"
    [ ! -s "$tmp/extra" ] && ok || bad "completion of hwemu $c offers $(tr '\n' ' ' <"$tmp/extra") that --help does not name"
    [ -z "$sub" ] || [ "$(complete_words hwemu "$c" "${sub:0:2}" | head -1)" = "$sub" ] && ok ||
        bad "completion of hwemu $c ${sub:0:2}: $(complete_words hwemu "$c" "${sub:0:2}")"
    # and the command knows each: given last without a value it is not an unknown option
    # (a throwaway root and port in case an option is a flag and the command starts)
    while read -r o; do
        [ "$o" = --help ] && continue
        (cd "$tmp" && SIM_HWEMU_ROOT=$tmp/probe SIM_ADDR=127.0.0.1:0 timeout 20 "$hw" "$c" $sub "$o" >/dev/null 2>"$tmp/probe.err")
        grep -q "unknown option" "$tmp/probe.err" && bad "hwemu $c $sub $o: $(cat "$tmp/probe.err")" || ok
    done <"$tmp/offered"
done <"$tmp/commands"
finish
