#!/usr/bin/env bash
# CPUID answered with the node's processor by rewriting the instruction (shim/preload/cpuidpatch.c,
# `hwemu exec --cpuid patch`; docs/interfaces.md "MSR devices"), on any host: a program built
# here runs CPUID (leaf 0: vendor; leaf 1: family and model) from four places,
#   main    its own text
#   start   a library it is linked against (DT_NEEDED, loaded at start)
#   dlopen  a library it dlopens by path after main started
#   ctor    that library's constructor (it runs inside dlopen: patched before it, by the audit
#           module's la_objopen)
# and prints glibc's own leaf 1 (the copy its start-up probe took, __x86_get_cpuid_feature_leaf
# of <sys/platform/x86.h>), which must stay the host's: libc.so.6 and ld.so are never patched.
# Where the expected values come from: the node's by the node's /proc/cpuinfo (vendor_id, cpu
# family, model, read through `hwemu exec cat`); the host's by the same program run without
# hwemu. Then: --cpuid host keeps the host's everywhere; a UD2 the program has itself
# (__builtin_trap) still ends it with SIGILL; a program with its own SIGILL handler gets its
# handler called for its own UD2 and the node's CPUID all the same (the shim's handler stays
# and chains); HWEMU_DEBUG=1 names nothing left unpatched in these objects.
# Usage: test_cpuid_patch.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
command -v gcc >/dev/null || { echo "gcc is missing (scripts/install-deps.sh)"; exit 77; }
port=$(free_port)
serve_start http://127.0.0.1:$port "$tmp/err" --spec tests/specs/msr_tools.yaml --root "$tmp/r" --addr 127.0.0.1:$port --tick 200ms ||
    { bad "serve: $(cat "$tmp/err")"; finish; }

cat >"$tmp/q.h" <<'C'
#include <cpuid.h>
#include <stdio.h>
#include <string.h>
/* leaf 0's vendor and leaf 1's display family and model (SDM Vol. 2A, CPUID.01H:EAX) */
static inline void q_print(const char *who, const unsigned r0[4], unsigned eax1)
{
    char v[13];
    memcpy(v, &r0[1], 4), memcpy(v + 4, &r0[3], 4), memcpy(v + 8, &r0[2], 4), v[12] = 0;
    unsigned fam = eax1 >> 8 & 0xF, model = eax1 >> 4 & 0xF;
    if (fam == 0xF)
        fam += eax1 >> 20 & 0xFF;
    if (fam == 6 || fam >= 0xF)
        model |= (eax1 >> 16 & 0xF) << 4;
    printf("%s %s %u %u\n", who, v, fam, model);
}
#define Q(who) do { unsigned r0[4], r1[4]; __cpuid(0, r0[0], r0[1], r0[2], r0[3]); \
    __cpuid(1, r1[0], r1[1], r1[2], r1[3]); q_print(who, r0, r1[0]); } while (0)
C
cat >"$tmp/start.c" <<'C'
#include "q.h"
void q_start(void) { Q("start"); }
C
cat >"$tmp/late.c" <<'C'
#include "q.h"
static unsigned c0[4], c1[4];
__attribute__((constructor)) static void init(void)
{
    __cpuid(0, c0[0], c0[1], c0[2], c0[3]);
    __cpuid(1, c1[0], c1[1], c1[2], c1[3]);
}
void q_late(void) { Q("dlopen"); q_print("ctor", c0, c1[0]); }
C
cat >"$tmp/prog.c" <<'C'
#include "q.h"
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/platform/x86.h>
#include <unistd.h>
void q_start(void);
static void mine(int sig) { (void)sig; printf("handler-ran\n"); fflush(stdout); _exit(0); }
int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[2], "handler")) {
        struct sigaction sa = {.sa_handler = mine};
        sigaction(SIGILL, &sa, NULL);
    }
    Q("main");
    q_start();
    void *h = dlopen(argv[1], RTLD_NOW);
    void (*late)(void) = h ? (void (*)(void))dlsym(h, "q_late") : NULL;
    if (!late) { printf("dlopen: %s\n", dlerror()); return 1; }
    late();
    const struct cpuid_feature *f = __x86_get_cpuid_feature_leaf(CPUID_INDEX_1);
    unsigned r0[4] = {0, 0x2d2d2d2d, 0x2d2d2d2d, 0x2d2d2d2d}; /* no vendor: "------------" */
    q_print("glibc", r0, f->cpuid_array[0]);
    fflush(stdout);
    if (argc > 2)
        __builtin_trap(); /* the program's own UD2 */
    return 0;
}
C
gcc -O2 -shared -fPIC -o "$tmp/libstart.so" "$tmp/start.c" && gcc -O2 -shared -fPIC -o "$tmp/liblate.so" "$tmp/late.c" &&
    gcc -O2 -o "$tmp/prog" "$tmp/prog.c" -L"$tmp" -lstart -Wl,-rpath,"$tmp" -ldl || { bad "build of the test program"; finish; }
X() { "$hwemu" exec --root "$tmp/r" --node intel-0 "$@"; }

# the node's processor, from its /proc/cpuinfo (CPU 0's block)
node=$(X -- cat /proc/cpuinfo | awk -F': ' '/^vendor_id/ { v = $2 } /^cpu family/ { f = $2 } /^model\t/ { m = $2 }
    /^$/ { print v, f, m; exit }')
[ "$(wc -w <<<"$node")" = 3 ] || { bad "the node's /proc/cpuinfo: $node"; finish; }
host=$("$tmp/prog" "$tmp/liblate.so")
hostcpu=$(awk '$1 == "main" { print $2, $3, $4 }' <<<"$host")
hostglibc=$(awk '$1 == "glibc" { print $3, $4 }' <<<"$host")
[ -n "$hostcpu" ] && [ -n "$hostglibc" ] || { bad "the program without hwemu: $host"; finish; }
# the host's glibc agrees with the host's CPUID (the same family and model)
[ "$hostglibc" = "$(cut -d' ' -f2,3 <<<"$hostcpu")" ] && ok || bad "glibc's leaf 1 $hostglibc vs the host's CPUID $hostcpu"

out=$(X --cpuid patch -- env HWEMU_DEBUG=1 "$tmp/prog" "$tmp/liblate.so" 2>"$tmp/patch.err")
for who in main start dlopen ctor; do
    got=$(awk -v w=$who '$1 == w { print $2, $3, $4 }' <<<"$out")
    [ "$got" = "$node" ] && ok || bad "--cpuid patch: $who sees '$got', not the node's '$node': $out $(cat "$tmp/patch.err")"
done
got=$(awk '$1 == "glibc" { print $3, $4 }' <<<"$out")
[ "$got" = "$hostglibc" ] && ok || bad "--cpuid patch: glibc's leaf 1 is $got, not the host's $hostglibc"
# nothing of the program's own was left unpatched (HWEMU_DEBUG names each object that was)
! grep -q "$tmp" "$tmp/patch.err" && ok || bad "--cpuid patch left objects unpatched: $(cat "$tmp/patch.err")"

# host: the host's answers everywhere
out=$(X --cpuid host -- "$tmp/prog" "$tmp/liblate.so" 2>&1)
[ "$(awk '$1 != "glibc" { print $2, $3, $4 }' <<<"$out" | sort -u)" = "$hostcpu" ] && ok ||
    bad "--cpuid host: $out, not the host's $hostcpu"

# the program's own UD2 still raises SIGILL (status 128 + 4) after the node's answers
X --cpuid patch -- "$tmp/prog" "$tmp/liblate.so" trap >"$tmp/trap.out" 2>&1
st=$?
[ $st = 132 ] && grep -q "^main $node\$" "$tmp/trap.out" && ok || bad "its own UD2: status $st (want 132, SIGILL): $(cat "$tmp/trap.out")"
# its own SIGILL handler (sigaction before any CPUID) is called for its UD2; CPUID stays the node's
out=$(X --cpuid patch -- "$tmp/prog" "$tmp/liblate.so" handler 2>&1)
grep -q "^main $node\$" <<<"$out" && grep -q "^dlopen $node\$" <<<"$out" && grep -qx handler-ran <<<"$out" && ok ||
    bad "its own SIGILL handler: $out"

# a bad --cpuid: a usage error naming the choices
out=$(X --cpuid sometimes -- true 2>&1)
[ $? = 2 ] && grep -q "auto, fault, patch or host" <<<"$out" && ok || bad "--cpuid sometimes: $out"
finish
