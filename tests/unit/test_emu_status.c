/* Unit tests of shim/emu/emu_status.c: the kernel's %*pb and %*pbl of the node's masks (lib/vsprintf.c
 * bitmap_string, bitmap_list_string: the first group only as wide as its bits, e.g. "3" for the
 * two CPUs of this build machine's own status file), which status paths are the process's own,
 * and the four lines replaced in a status text with everything else kept byte for byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "emu_status.h"

static const char *hex(int nbits, int nset)
{
    static char buf[512];
    size_t n = emu_mask_hex(nbits, nset, buf, sizeof buf);
    buf[n] = 0;
    return buf;
}

static void test_masks(void **state)
{
    (void)state;
    assert_string_equal(hex(2, 2), "3");
    assert_string_equal(hex(8, 8), "ff");
    assert_string_equal(hex(33, 33), "1,ffffffff");
    assert_string_equal(hex(96, 96), "ffffffff,ffffffff,ffffffff");
    assert_string_equal(hex(96, 40), "00000000,000000ff,ffffffff");
    const char *nodes = hex(EMU_MAX_NUMNODES, 2);
    assert_int_equal(strlen(nodes), 32 * 9 - 1);
    assert_string_equal(nodes + strlen(nodes) - 17, "00000000,00000003");
    char small[8];
    assert_int_equal(emu_mask_hex(96, 96, small, sizeof small), 0); /* does not fit: 0 */
    char l[32];
    emu_mask_list(384, l, sizeof l);
    assert_string_equal(l, "0-383");
    emu_mask_list(1, l, sizeof l);
    assert_string_equal(l, "0");
}

static void test_paths(void **state)
{
    (void)state;
    char h[64];
    assert_int_equal(emu_status_path("/proc/self/status", 100, 101, h, sizeof h), 1);
    assert_string_equal(h, "/proc/100/status");
    assert_int_equal(emu_status_path("/proc/thread-self/status", 100, 101, h, sizeof h), 1);
    assert_string_equal(h, "/proc/100/task/101/status");
    assert_int_equal(emu_status_path("/proc/100/status", 100, 101, h, sizeof h), 1);
    assert_int_equal(emu_status_path("/proc/101/status", 100, 101, h, sizeof h), 1);
    assert_int_equal(emu_status_path("/proc/self/task/7/status", 100, 101, h, sizeof h), 1);
    assert_string_equal(h, "/proc/100/task/7/status");
    assert_int_equal(emu_status_path("/proc/1/status", 100, 101, h, sizeof h), 0);   /* another process */
    assert_int_equal(emu_status_path("/proc/self/stat", 100, 101, h, sizeof h), 0);
    assert_int_equal(emu_status_path("/proc/self/statusx", 100, 101, h, sizeof h), 0);
    assert_int_equal(emu_status_path("/proc/100x/status", 100, 101, h, sizeof h), 0);
    assert_int_equal(emu_status_path("/sys/self/status", 100, 101, h, sizeof h), 0);
}

static void test_filter(void **state)
{
    (void)state;
    const char *in = "Name:\tnumactl\nTgid:\t42\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n"
                     "Mems_allowed:\t00000001\nMems_allowed_list:\t0\nvoluntary_ctxt_switches:\t5\n";
    char out[4096];
    size_t n = emu_status_filter(in, strlen(in), 96, 2, out, sizeof out);
    out[n] = 0;
    char want[4096];
    snprintf(want, sizeof want, "Name:\tnumactl\nTgid:\t42\nCpus_allowed:\tffffffff,ffffffff,ffffffff\n"
             "Cpus_allowed_list:\t0-95\nMems_allowed:\t%s\nMems_allowed_list:\t0-1\nvoluntary_ctxt_switches:\t5\n",
             hex(EMU_MAX_NUMNODES, 2));
    assert_string_equal(out, want);
    /* no node: the host's text as it is; too small a buffer: 0 */
    n = emu_status_filter(in, strlen(in), 0, 0, out, sizeof out);
    assert_int_equal(n, strlen(in));
    assert_memory_equal(out, in, n);
    assert_int_equal(emu_status_filter(in, strlen(in), 96, 2, out, 100), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_masks),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_filter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
