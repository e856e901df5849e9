/* Unit tests of shim/preload/x86len.c, the instruction-length decoder cpuidpatch.c finds CPUIDs
 * with: every line of tests/unit/x86len_cases.txt (instructions of Debian 12's libc, libm,
 * libcrypto, python3.11 and turbostat with the lengths GNU objdump gives them, the file's header
 * says how they were picked) decodes to objdump's length, alone and followed by other bytes, and
 * to -1 cut one byte short; a lone prefix objdump printed on its own line (a REX before another
 * prefix, which the processor ignores) and a near call or jump with 66 (whose length Intel and
 * AMD differ on) are -1, the decoder's refusal; objdump's FWAIT-with-x87 lines are two
 * instructions. Then the cases the file
 * cannot show: the 15-byte limit, truncation inside a ModRM/SIB/displacement, opcodes invalid in
 * 64-bit mode, a prefix before VEX. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "x86len.h"

/* Only prefixes (objdump's own line for a prefix that applies to nothing after it). */
static int prefixes_only(const char *text)
{
    static const char *const pfx[] = {"rex", "data16", "addr32", "cs", "ds", "ss", "es", "fs", "gs", "lock", "rep",
                                      "repz", "repnz", "xacquire", "xrelease", "bnd", "notrack"};
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *w = strtok(buf, " "); w; w = strtok(NULL, " ")) {
        int known = 0;
        for (size_t k = 0; k < sizeof pfx / sizeof pfx[0]; k++)
            known |= !strncmp(w, pfx[k], strlen(pfx[k])) && (!w[strlen(pfx[k])] || w[strlen(pfx[k])] == '.');
        if (!known)
            return 0;
    }
    return 1;
}

static void test_objdump_cases(void **st)
{
    (void)st;
    const char *dir = getenv("HWEMU_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/unit/x86len_cases.txt", dir ? dir : ".");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1024];
    int n = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char *hex = strchr(line, '\t'), *text = hex ? strchr(hex + 1, '\t') : NULL;
        assert_non_null(text);
        *text++ = 0;
        text[strcspn(text, "\n")] = 0;
        uint8_t b[32];
        int len = 0;
        for (char *p = hex + 1; *p;) {
            char *end;
            unsigned long v = strtoul(p, &end, 16);
            if (end == p)
                break;
            assert_true(len < 16);
            b[len++] = (uint8_t)v;
            p = end;
        }
        int lone = prefixes_only(text);
        /* objdump shows FWAIT (9B) with the x87 instruction after it as one ("fstcw" is "fwait;
         * fnstcw"); the processor runs two: 1, then the rest */
        int wait = b[0] == 0x9B && len > 1 ? 1 : 0;
        /* a near call or jump with 66 (objdump's "jmpw", AMD's rel16; Intel's rel32): refused */
        int vendor = b[0] == 0x66 && (b[1] == 0xE8 || b[1] == 0xE9 || (b[1] == 0x0F && (b[2] & 0xF0) == 0x80));
        int exact = x86_insn_len(b, (size_t)len), rest = wait ? x86_insn_len(b + 1, (size_t)len - 1) : 0;
        memset(b + len, 0x90, sizeof b - (size_t)len); /* nops after it */
        int padded = x86_insn_len(b, sizeof b), shorter = x86_insn_len(b, (size_t)len - 1);
        if (wait ? exact != 1 || rest != len - 1 : vendor ? exact != -1 || padded != -1
                  : lone ? exact != -1 : exact != len || padded != len || shorter != -1) {
            fprintf(stderr, "%s [%s] %s: %d, %d followed by nops, %d cut short; want %d\n", line, hex + 1, text, exact,
                    padded, shorter, lone ? -1 : len);
            bad++;
        }
        n++;
    }
    fclose(f);
    assert_true(n > 1000);
    assert_int_equal(bad, 0);
}

static void test_limits(void **st)
{
    (void)st;
    /* 14 prefixes and a 1-byte nop: 15 bytes; 15 prefixes and a nop: 16, over the SDM's limit */
    uint8_t p[20];
    memset(p, 0x66, sizeof p);
    p[15] = 0x90;
    assert_int_equal(x86_insn_len(p + 1, 19), 15);
    assert_int_equal(x86_insn_len(p, 20), -1);
    /* truncated inside the SIB, the displacement, the immediate */
    static const uint8_t mov[] = {0x48, 0x8b, 0x84, 0x24, 0x10, 0x01, 0x00, 0x00}; /* mov 0x110(%rsp),%rax */
    assert_int_equal(x86_insn_len(mov, sizeof mov), 8);
    for (size_t k = 0; k < sizeof mov; k++)
        assert_int_equal(x86_insn_len(mov, k), -1);
    static const uint8_t imm64[] = {0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8}; /* movabs $..., %rax */
    assert_int_equal(x86_insn_len(imm64, 10), 10);
    assert_int_equal(x86_insn_len(imm64 + 1, 9), 5); /* without REX.W the immediate is 4 bytes */
    /* 66 makes an Iz immediate 2 bytes, REX.W wins over it */
    static const uint8_t add16[] = {0x66, 0x05, 0x34, 0x12}, add64[] = {0x66, 0x48, 0x05, 1, 2, 3, 4};
    assert_int_equal(x86_insn_len(add16, 4), 4);
    assert_int_equal(x86_insn_len(add64, 7), 7);
    /* invalid in 64-bit mode: push es, aaa, bound's 62 without EVEX's fixed bit, into, jmp far */
    static const uint8_t inv[][4] = {{0x06}, {0x37}, {0x62, 0x00, 0x00, 0x00}, {0xce}, {0xea}};
    for (size_t k = 0; k < 5; k++)
        assert_int_equal(x86_insn_len(inv[k], 4), -1);
    /* a prefix before VEX is #UD; a REX before a prefix is ignored by the processor, refused here */
    static const uint8_t vex66[] = {0x66, 0xc5, 0xf8, 0x77}, rexpfx[] = {0x48, 0x66, 0x90};
    assert_int_equal(x86_insn_len(vex66, 4), -1);
    assert_int_equal(x86_insn_len(vex66 + 1, 3), 3); /* vzeroupper: no ModRM */
    assert_int_equal(x86_insn_len(rexpfx, 3), -1);
    /* CPUID and the UD2 that replaces it: two bytes each */
    static const uint8_t cpuid[] = {0x0f, 0xa2}, ud2[] = {0x0f, 0x0b};
    assert_int_equal(x86_insn_len(cpuid, 2), 2);
    assert_int_equal(x86_insn_len(ud2, 2), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_objdump_cases), cmocka_unit_test(test_limits)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
