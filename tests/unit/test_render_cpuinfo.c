/* Unit tests of engine/render/render_cpuinfo.c: the /proc/cpuinfo text of the builtin profiles
 * (arch/x86/kernel/cpu/proc.c's format, each value against the capture the profile cites), the
 * socket-major-smt-last numbering and APIC ids, the flags the facts imply, verbatim corpus
 * cpuinfo, and the cpu MHz rounding against libc's "%.3f". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiles_fixture.h"
#include "render_cpuinfo.h"

static const struct yt_node *tree_of(const char *name)
{
    const struct profile *p = profiles_find(&ps, name);
    assert_non_null(p);
    return p->tree;
}

/* A builtin profile with cluster-spec style overrides (YAML flow text) merged on top. */
static const struct yt_node *tree_with(const char *name, const char *yaml)
{
    struct yt_node *ov = fixture_parse("ov.yaml", yaml);
    struct diag d = {0};
    const struct profile *p = profiles_find(&ps, name);
    assert_non_null(p);
    struct yt_node *t = profile_with_overrides(&ps, p, ov, "test", &d);
    diag_print(&d, stderr);
    assert_int_equal(d.count, 0);
    diag_free(&d);
    assert_non_null(t);
    return t;
}

static char *render(const struct yt_node *tree)
{
    size_t len = 12345;
    char *text = render_cpuinfo(tree, &len);
    assert_non_null(text);
    assert_int_equal(len, strlen(text));
    return text;
}

/* The k-th block (0-based) of a generated text, with its trailing blank line; "" past the end. */
static char *block(const char *text, int k, char *buf, size_t size)
{
    const char *p = text;
    for (int i = 0; i < k && p; i++) {
        p = strstr(p, "\n\n");
        if (p)
            p += 2;
    }
    buf[0] = 0;
    if (!p || !*p)
        return buf;
    const char *e = strstr(p, "\n\n");
    assert_non_null(e);
    size_t n = (size_t)(e + 2 - p);
    assert_true(n < size);
    memcpy(buf, p, n);
    buf[n] = 0;
    return buf;
}

/* The value of `key` in one block, parsed the way agents parse it (split at the first ':',
 * trim), or NULL. */
static const char *field(const char *blk, const char *key, char *buf, size_t size)
{
    for (const char *l = blk; *l;) {
        const char *le = strchr(l, '\n');
        if (!le)
            le = l + strlen(l);
        const char *colon = memchr(l, ':', (size_t)(le - l));
        if (colon) {
            const char *ke = colon;
            while (ke > l && (ke[-1] == '\t' || ke[-1] == ' '))
                ke--;
            if ((size_t)(ke - l) == strlen(key) && !strncmp(l, key, strlen(key))) {
                const char *v = colon + 1;
                while (*v == ' ')
                    v++;
                size_t n = (size_t)(le - v);
                assert_true(n < size);
                memcpy(buf, v, n);
                buf[n] = 0;
                return buf;
            }
        }
        l = *le ? le + 1 : le;
    }
    return NULL;
}

static int field_int(const char *blk, const char *key)
{
    char v[64];
    assert_non_null(field(blk, key, v, sizeof v));
    return atoi(v);
}

/* The independent shape check: exactly n blocks separated by single blank lines, the text
 * ending "\n\n", and every other line "key<tabs>: value" or a bare "key<tabs>:" (no bugs, no
 * power management flags). */
static void check_shape(const char *text, int n)
{
    regex_t re;
    assert_int_equal(regcomp(&re, "^[a-z A-Z_()0-9]+\t*:( .*)?$", REG_EXTENDED | REG_NOSUB), 0);
    int blocks = 0;
    bool in_block = false;
    size_t len = strlen(text);
    if (n == 0) {
        assert_int_equal(len, 0);
    } else {
        assert_true(len >= 2 && text[len - 1] == '\n' && text[len - 2] == '\n');
        assert_true(text[len - 3] != '\n');
    }
    for (const char *l = text; *l;) {
        const char *le = strchr(l, '\n');
        assert_non_null(le); /* every line ends with a newline */
        char line[8192];
        size_t ln = (size_t)(le - l);
        assert_true(ln < sizeof line);
        memcpy(line, l, ln);
        line[ln] = 0;
        if (!ln) {
            assert_true(in_block); /* no blank line that does not close a block */
            in_block = false;
            blocks++;
        } else {
            if (regexec(&re, line, 0, NULL, 0))
                fail_msg("line does not match key<tabs>: value: \"%s\"", line);
            in_block = true;
        }
        l = le + 1;
    }
    assert_false(in_block);
    assert_int_equal(blocks, n);
    regfree(&re);
}

/* The 8260M capture's flags line (archspec-json @90b453f4 tests/targets/linux-centos7-cascadelake),
 * which the profile carries as it is. */
#define CLX_FLAGS "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc art arch_perfmon pebs bts rep_good nopl xtopology nonstop_tsc aperfmperf eagerfpu pni pclmulqdq dtes64 monitor ds_cpl vmx smx est tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid dca sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand lahf_lm abm 3dnowprefetch epb cat_l3 cdp_l3 intel_ppin intel_pt ssbd mba ibrs ibpb stibp ibrs_enhanced tpr_shadow vnmi flexpriority ept vpid fsgsbase tsc_adjust bmi1 hle avx2 smep bmi2 erms invpcid rtm cqm mpx rdt_a avx512f avx512dq rdseed adx smap clflushopt clwb avx512cd avx512bw avx512vl xsaveopt xsavec xgetbv1 cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local dtherm ida arat pln pts hwp hwp_act_window hwp_epp hwp_pkg_req pku ospke avx512_vnni md_clear spec_ctrl intel_stibp flush_l1d arch_capabilities"

static void test_xeon_first_block(void **st)
{
    const struct yt_node *t = tree_of("intel-xeon-2s-rapl");
    char *text = render(t);
    assert_int_equal(cpuinfo_ncpus(t), 96);
    check_shape(text, 96);
    /* arch/x86/kernel/cpu/proc.c show_cpuinfo's order and padding (sysfs §13.1). Values: the
     * 8260M capture (microcode, cpuid level, flags), cache size the L3 (36608 KB, as the capture
     * prints), apicid the derived APIC id (CPU 95: socket 1 << 6 | core 23 << 1 | thread 1 = 111),
     * bogomips 2400000 kHz / 500 = 4800.00, address sizes of the 8272CL capture, no TLB size line
     * (Intel), bare power management (Intel). */
    const char *tail =
        "fpu\t\t: yes\n"
        "fpu_exception\t: yes\n"
        "cpuid level\t: 22\n"
        "wp\t\t: yes\n"
        "flags\t\t: " CLX_FLAGS "\n"
        "bugs\t\t: spectre_v1 spectre_v2 spec_store_bypass swapgs taa itlb_multihit mmio_stale_data retbleed "
        "eibrs_pbrsb gds bhi its vmscape\n"
        "bogomips\t: 4800.00\n"
        "clflush size\t: 64\n"
        "cache_alignment\t: 64\n"
        "address sizes\t: 46 bits physical, 48 bits virtual\n"
        "power management:\n"
        "\n";
    char first[4096], last[4096];
    snprintf(first, sizeof first,
             "processor\t: 0\n"
             "vendor_id\t: GenuineIntel\n"
             "cpu family\t: 6\n"
             "model\t\t: 85\n"
             "model name\t: Intel(R) Xeon(R) Platinum 8260 CPU @ 2.40GHz\n"
             "stepping\t: 7\n"
             "microcode\t: 0x5000024\n"
             "cpu MHz\t\t: 1000.000\n"
             "cache size\t: 36608 KB\n"
             "physical id\t: 0\n"
             "siblings\t: 48\n"
             "core id\t\t: 0\n"
             "cpu cores\t: 24\n"
             "apicid\t\t: 0\n"
             "initial apicid\t: 0\n"
             "%s", tail);
    snprintf(last, sizeof last,
             "processor\t: 95\n"
             "vendor_id\t: GenuineIntel\n"
             "cpu family\t: 6\n"
             "model\t\t: 85\n"
             "model name\t: Intel(R) Xeon(R) Platinum 8260 CPU @ 2.40GHz\n"
             "stepping\t: 7\n"
             "microcode\t: 0x5000024\n"
             "cpu MHz\t\t: 1000.000\n"
             "cache size\t: 36608 KB\n"
             "physical id\t: 1\n"
             "siblings\t: 48\n"
             "core id\t\t: 23\n"
             "cpu cores\t: 24\n"
             "apicid\t\t: 111\n"
             "initial apicid\t: 111\n"
             "%s", tail);
    assert_true(strlen(text) > strlen(first));
    assert_memory_equal(text, first, strlen(first));
    assert_string_equal(text + strlen(text) - strlen(last), last);
    /* the capture has no vmx flags line and the profile none: none printed */
    assert_null(strstr(text, "vmx flags"));
    assert_null(strstr(text, "TLB size"));
    free(text);
}

/* A line of a real capture ("key<spaces or tabs>: value"), normalised to the kernel's
 * "key<tabs>: value" the way agents compare them: key and value trimmed. */
static void capture_line(const char *capture, const char *key, char *out, size_t size)
{
    const char *p = strstr(capture, key);
    assert_non_null(p);
    const char *colon = strchr(p, ':'), *e = strchr(p, '\n');
    assert_true(colon && e && colon < e);
    const char *v = colon + 1;
    while (*v == ' ')
        v++;
    snprintf(out, size, "%.*s", (int)(e - v), v);
}

/* The tail of each profile's first block against the captures it cites: every value typed here
 * from the capture's text, not from the profile. */
static void test_captured_fields(void **st)
{
    static const struct {
        const char *profile, *key, *want;
    } cases[] = {
        /* archspec-json @90b453f4 tests/targets/linux-rocky8.5-zen4 (EPYC 9654) */
        {"amd-epyc-2s-energy-only", "microcode", "0xa10110d"},
        {"amd-epyc-2s-energy-only", "cache size", "1024 KB"},
        {"amd-epyc-2s-energy-only", "cpuid level", "16"},
        {"amd-epyc-2s-energy-only", "bugs", "sysret_ss_attrs spectre_v1 spectre_v2 spec_store_bypass"},
        {"amd-epyc-2s-energy-only", "bogomips", "4792.38"},
        {"amd-epyc-2s-energy-only", "TLB size", "3584 4K pages"},
        {"amd-epyc-2s-energy-only", "address sizes", "52 bits physical, 57 bits virtual"},
        {"amd-epyc-2s-energy-only", "power management", "ts ttp tm hwpstate cpb eff_freq_ro [13] [14]"},
        /* the MI300X host extends the 9654 host */
        {"amd-instinct-mi300x-8gpu", "bogomips", "4792.38"},
        /* archspec-json @a1e9ed31 tests/targets/linux-rhel9-graniterapids (Xeon 6972P) */
        {"intel-xeon6-2s-tpmi", "microcode", "0x1000380"},
        {"intel-xeon6-2s-tpmi", "cache size", "491520 KB"},
        {"intel-xeon6-2s-tpmi", "cpuid level", "36"},
        {"intel-xeon6-2s-tpmi", "bugs", "spectre_v1 spectre_v2 spec_store_bypass swapgs bhi"},
        {"intel-xeon6-2s-tpmi", "bogomips", "4800.00"},
        {"intel-xeon6-2s-tpmi", "address sizes", "52 bits physical, 57 bits virtual"},
        {"intel-xeon6-2s-tpmi", "vmx flags", "vnmi preemption_timer posted_intr invvpid ept_x_only ept_ad ept_1gb "
                                             "ept_5level flexpriority apicv tsc_offset vtpr mtf vapic ept vpid "
                                             "unrestricted_guest vapic_reg vid ple shadow_vmcs pml ept_violation_ve "
                                             "ept_mode_based_exec tsc_scaling usr_wait_pause notify_vm_exiting ipi_virt"},
        /* the 6530's lscpu (BogoMIPS, Address sizes) and ARK (160 MB L3 = 163840 KB) */
        {"intel-xeon-6530-2s-rapl", "bogomips", "4200.00"},
        {"intel-xeon-6530-2s-rapl", "address sizes", "46 bits physical, 57 bits virtual"},
        {"intel-xeon-6530-2s-rapl", "cache size", "163840 KB"},
        /* the guest on an 8272CL (cutepig123/gitblog): microcode, address sizes; bogomips
         * from cpu MHz 2099.926: 2099926 / 500 = 4199.85 */
        {"vm-no-powercap", "microcode", "0xffffffff"},
        {"vm-no-powercap", "bogomips", "4199.85"},
        {"vm-no-powercap", "address sizes", "46 bits physical, 48 bits virtual"},
        {"vm-no-powercap", "cache size", "22528 KB"},
        /* the 9534 has the 9654's facts (assumed) but its own base clock: 2450000 / 500 */
        {"amd-epyc-9534-2s-energy-only", "bogomips", "4900.00"},
        {"amd-epyc-2s-hsmp", "bogomips", "5200.00"},
        {"amd-epyc-2s-hsmp", "TLB size", "192 4K pages"},
        /* the 7763's cpuinfo (mlcommons/storage's fixture, cpuinfo7763): family 25 model 1
         * stepping 1, microcode, bogomips 4900.17 (tscKHz 2450085), TLB, address sizes, and
         * cache size = its 512 KB L2 */
        {"amd-epyc-7763-2s-energy-only", "cpu family", "25"},
        {"amd-epyc-7763-2s-energy-only", "model", "1"},
        {"amd-epyc-7763-2s-energy-only", "stepping", "1"},
        {"amd-epyc-7763-2s-energy-only", "model name", "AMD EPYC 7763 64-Core Processor"},
        {"amd-epyc-7763-2s-energy-only", "microcode", "0xa0011d1"},
        {"amd-epyc-7763-2s-energy-only", "bogomips", "4900.17"},
        {"amd-epyc-7763-2s-energy-only", "TLB size", "2560 4K pages"},
        {"amd-epyc-7763-2s-energy-only", "address sizes", "48 bits physical, 48 bits virtual"},
        {"amd-epyc-7763-2s-energy-only", "cache size", "512 KB"},
        {"amd-epyc-7763-2s-energy-only", "siblings", "128"},
        {"amd-epyc-7763-2s-energy-only", "cpu cores", "64"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *text = render(tree_of(cases[i].profile));
        char buf[8192], v[2048];
        block(text, 0, buf, sizeof buf);
        if (!field(buf, cases[i].key, v, sizeof v))
            fail_msg("%s: no %s line", cases[i].profile, cases[i].key);
        if (strcmp(v, cases[i].want))
            fail_msg("%s: %s is \"%s\", the capture says \"%s\"", cases[i].profile, cases[i].key, v, cases[i].want);
        free(text);
    }
    /* the 9655 has no microcode line (none found; the kernel prints none for revision 0) */
    char *text = render(tree_of("amd-epyc-2s-hsmp"));
    assert_null(strstr(text, "microcode"));
    free(text);
    /* a line of a real capture, normalised, equals ours: the 9654's whole flags line */
    static const char genoa_capture[] =
        "bugs\t\t: sysret_ss_attrs spectre_v1 spectre_v2 spec_store_bypass\n"
        "power management: ts ttp tm hwpstate cpb eff_freq_ro [13] [14]\n";
    char want[256], v[256], buf[8192];
    text = render(tree_of("amd-epyc-2s-energy-only"));
    block(text, 0, buf, sizeof buf);
    capture_line(genoa_capture, "power management", want, sizeof want);
    assert_string_equal(field(buf, "power management", v, sizeof v), want);
    free(text);
}

static void test_xeon_numbering(void **st)
{
    const struct yt_node *t = tree_of("intel-xeon-2s-rapl");
    char *text = render(t);
    char buf[8192];
    /* upstream §d pins: CPU k on physical id (k mod 48)/24, core id k mod 24 */
    for (int k = 0; k < 96; k++) {
        block(text, k, buf, sizeof buf);
        assert_int_equal(field_int(buf, "processor"), k);
        assert_int_equal(field_int(buf, "physical id"), (k % 48) / 24);
        assert_int_equal(field_int(buf, "core id"), k % 24);
        assert_int_equal(field_int(buf, "siblings"), 48);
        assert_int_equal(field_int(buf, "cpu cores"), 24);
        int s, c, th;
        cpuinfo_cpu_topology(t, k, &s, &c, &th);
        assert_int_equal(s, (k % 48) / 24);
        assert_int_equal(c, k % 24);
        assert_int_equal(th, k / 48);
    }
    assert_string_equal(block(text, 96, buf, sizeof buf), "");
    /* SMT siblings last: CPU 48 is the second thread of socket 0 core 0 */
    int s, c, th;
    cpuinfo_cpu_topology(t, 48, &s, &c, &th);
    assert_int_equal(s, 0);
    assert_int_equal(c, 0);
    assert_int_equal(th, 1);
    cpuinfo_cpu_topology(t, 24, &s, &c, &th);
    assert_true(s == 1 && c == 0 && th == 0);
    cpuinfo_cpu_topology(t, 95, &s, &c, &th);
    assert_true(s == 1 && c == 23 && th == 1);
    cpuinfo_cpu_topology(t, 96, &s, &c, &th);
    assert_true(s == -1 && c == -1 && th == -1);
    cpuinfo_cpu_topology(t, -1, &s, NULL, NULL);
    assert_int_equal(s, -1);
    struct cpuinfo_cpu *cpus;
    assert_int_equal(cpuinfo_cpus(t, &cpus), 96);
    assert_true(cpus[48].id == 48 && cpus[48].socket == 0 && cpus[48].core == 0 && cpus[48].thread == 1);
    assert_true(cpus[71].id == 71 && cpus[71].socket == 0 && cpus[71].core == 23 && cpus[71].thread == 1);
    free(cpus);
    free(text);
}

static void test_vm(void **st)
{
    const struct yt_node *t = tree_of("vm-no-powercap");
    char *text = render(t);
    assert_int_equal(cpuinfo_ncpus(t), 8);
    check_shape(text, 8);
    char buf[8192], v[4096];
    int seen = 0;
    for (int k = 0; k < 8; k++) {
        block(text, k, buf, sizeof buf);
        /* one package per vCPU: 8 distinct physical ids, siblings 1, cpu cores 1 */
        int id = field_int(buf, "physical id");
        assert_true(id >= 0 && id < 8 && !(seen & (1 << id)));
        seen |= 1 << id;
        assert_int_equal(field_int(buf, "core id"), 0);
        assert_int_equal(field_int(buf, "siblings"), 1);
        assert_int_equal(field_int(buf, "cpu cores"), 1);
        assert_string_equal(field(buf, "model name", v, sizeof v), "Intel(R) Xeon(R) Silver 4216 CPU @ 2.10GHz");
        assert_string_equal(field(buf, "cpu MHz", v, sizeof v), "2099.926");
        assert_non_null(strstr(buf, "cpu cores\t: 1\napicid\t\t: "));
        assert_non_null(strstr(field(buf, "flags", v, sizeof v), " hypervisor "));
        assert_int_equal(field_int(buf, "apicid"), k); /* a package per vCPU: APIC id k */
        int s, c, th;
        cpuinfo_cpu_topology(t, k, &s, &c, &th);
        assert_true(s == k && c == 0 && th == 0);
    }
    assert_int_equal(seen, 0xff);
    free(text);
}

static void test_amd(void **st)
{
    const struct yt_node *t = tree_of("amd-epyc-2s-energy-only");
    char *text = render(t);
    assert_int_equal(cpuinfo_ncpus(t), 384);
    check_shape(text, 384);
    const char *first =
        "processor\t: 0\n"
        "vendor_id\t: AuthenticAMD\n"
        "cpu family\t: 25\n"
        "model\t\t: 17\n"
        "model name\t: AMD EPYC 9654 96-Core Processor\n"
        "stepping\t: 1\n"
        "microcode\t: 0xa10110d\n"
        "cpu MHz\t\t: 1500.000\n"
        "cache size\t: 1024 KB\n"
        "physical id\t: 0\n"
        "siblings\t: 192\n"
        "core id\t\t: 0\n"
        "cpu cores\t: 96\n"
        "apicid\t\t: 0\n"
        "initial apicid\t: 0\n"
        "fpu\t\t: yes\n"
        "fpu_exception\t: yes\n"
        "cpuid level\t: 16\n"
        "wp\t\t: yes\n"
        "flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr ";
    assert_memory_equal(text, first, strlen(first));
    char buf[8192];
    block(text, 192, buf, sizeof buf);
    /* CPU 192 is socket 0 core 0 thread 1: APIC id 1 (one thread bit, 7 core bits, then the package) */
    assert_int_equal(field_int(buf, "apicid"), 1);
    assert_int_equal(field_int(buf, "processor"), 192);
    assert_int_equal(field_int(buf, "physical id"), 0);
    assert_int_equal(field_int(buf, "core id"), 0);
    block(text, 383, buf, sizeof buf);
    assert_int_equal(field_int(buf, "physical id"), 1);
    assert_int_equal(field_int(buf, "core id"), 95);
    int s, c, th;
    cpuinfo_cpu_topology(t, 192, &s, &c, &th);
    assert_true(s == 0 && c == 0 && th == 1);
    cpuinfo_cpu_topology(t, 96, &s, &c, &th);
    assert_true(s == 1 && c == 0 && th == 0);
    block(text, 96, buf, sizeof buf);
    assert_int_equal(field_int(buf, "apicid"), 256); /* socket 1 << (1 + 7) */
    free(text);

    /* a child profile: the extends merge reaches the text */
    t = tree_of("amd-epyc-2s-hsmp");
    text = render(t);
    block(text, 0, buf, sizeof buf);
    assert_non_null(strstr(buf, "cpu family\t: 26\nmodel\t\t: 2\nmodel name\t: AMD EPYC 9655 96-Core Processor\n"));
    free(text);
}

static void test_every_builtin_shape(void **st)
{
    for (int i = 0; i < ps.n; i++) {
        const struct yt_node *t = ps.items[i].tree;
        char *text = render(t);
        int n = cpuinfo_ncpus(t);
        assert_int_equal(n, prof_int(t, "node.capacity.cpu", -1));
        check_shape(text, n);
        struct cpuinfo_cpu *cpus;
        assert_int_equal(cpuinfo_cpus(t, &cpus), n);
        char buf[8192];
        const char *at = text; /* block k starts here (walked once, not from the start each time) */
        for (int k = 0; k < n; k++) {
            block(at, 0, buf, sizeof buf);
            at += strlen(buf);
            assert_int_equal(cpus[k].id, k);
            assert_int_equal(field_int(buf, "processor"), k);
            assert_int_equal(field_int(buf, "physical id"), cpus[k].socket);
            assert_int_equal(field_int(buf, "core id"), cpus[k].core);
        }
        free(cpus);
        free(text);
    }
}

/* The flags line of block 0 is "flags\t\t:" followed by " word" per flag ("" = no words), and
 * a bugs line follows it (no vmx flags line on these nodes). */
static void assert_flags(const struct yt_node *t, const char *words)
{
    char *text = render(t);
    char buf[8192], want[4200];
    block(text, 0, buf, sizeof buf);
    snprintf(want, sizeof want, "\nflags\t\t:%s%s\nbugs\t\t:", *words ? " " : "", words);
    if (!strstr(buf, want))
        fail_msg("want \"%s\" in\n%s", want, buf);
    check_shape(text, cpuinfo_ncpus(t));
    free(text);
}

/* The 8260M capture's line without HWP's five flags (what a node without HWP prints). */
#define CLX_FLAGS_NO_HWP "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc art arch_perfmon pebs bts rep_good nopl xtopology nonstop_tsc aperfmperf eagerfpu pni pclmulqdq dtes64 monitor ds_cpl vmx smx est tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid dca sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand lahf_lm abm 3dnowprefetch epb cat_l3 cdp_l3 intel_ppin intel_pt ssbd mba ibrs ibpb stibp ibrs_enhanced tpr_shadow vnmi flexpriority ept vpid fsgsbase tsc_adjust bmi1 hle avx2 smep bmi2 erms invpcid rtm cqm mpx rdt_a avx512f avx512dq rdseed adx smap clflushopt clwb avx512cd avx512bw avx512vl xsaveopt xsavec xgetbv1 cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local dtherm ida arat pln pts pku ospke avx512_vnni md_clear spec_ctrl intel_stibp flush_l1d arch_capabilities"

static void test_flags_from_facts(void **st)
{
    /* the profile's line as it is: it has HWP's flags, and HWP is on */
    assert_flags(tree_of("intel-xeon-2s-rapl"), CLX_FLAGS);
    /* HWP off: its flags (hwp, hwp_notify, hwp_act_window, hwp_epp, hwp_pkg_req) go */
    assert_flags(tree_with("intel-xeon-2s-rapl", "{cpufreq: {hwp: false}}"), CLX_FLAGS_NO_HWP);
    /* a profile without flags: HWP under intel_pstate (active) implies hwp and hwp_epp ... */
    assert_flags(tree_with("intel-xeon-2s-rapl", "{cpu: {flags: \"\"}, cpufreq: {hwp: {v: true, src: \"assumed:t\"}}}"),
                 "hwp hwp_epp");
    /* ... under another driver (intel_cpufreq, passive mode) hwp only */
    assert_flags(tree_with("intel-xeon-6530-2s-rapl", "{cpu: {flags: \"\"}, cpufreq: {hwp: true}}"), "hwp");
    /* explicit flags: words kept in order, single spaces, implied ones appended when missing */
    assert_flags(tree_with("intel-xeon-2s-rapl",
                           "{cpu: {flags: \"fpu  vme\\tde hwp\", hypervisor: true}, cpufreq: {hwp: true}}"),
                 "fpu vme de hwp hypervisor hwp_epp");
    assert_flags(tree_with("vm-no-powercap", "{cpu: {flags: \"fpu hypervisor\"}}"), "fpu hypervisor");
    /* no words: the kernel still prints the key */
    assert_flags(tree_with("vm-no-powercap", "{cpu: {flags: \"\", hypervisor: false}}"), "");
    assert_flags(tree_with("intel-xeon-2s-rapl", "{cpu: {flags: \" \\t \"}, cpufreq: {hwp: false}}"), "");
    /* a word that only starts like HWP's stays */
    assert_flags(tree_with("intel-xeon-2s-rapl", "{cpu: {flags: \"hwpx hwp_epp\"}, cpufreq: {hwp: false}}"), "hwpx");
    /* hypervisor and HWP together: kernel order, hypervisor (word 4) before hwp (word 14) */
    assert_flags(tree_with("intel-xeon6-2s-tpmi", "{cpu: {flags: \"\", hypervisor: true}, cpufreq: {hwp: true}}"),
                 "hypervisor hwp hwp_epp");
    /* vmx flags only with vmx in flags */
    char *text = render(tree_with("intel-xeon6-2s-tpmi", "{cpu: {flags: \"fpu\"}}"));
    assert_null(strstr(text, "vmx flags"));
    free(text);
    text = render(tree_of("intel-xeon6-2s-tpmi"));
    assert_non_null(strstr(text, "\nvmx flags\t: vnmi preemption_timer "));
    free(text);
}

static void test_strings(void **st)
{
    /* an empty brand prints as the kernel prints it; a newline cannot start a line */
    const struct yt_node *t = tree_with("intel-xeon-2s-rapl", "{cpu: {modelName: \"\", vendorID: \"Genuine\\nIntel\"}}");
    char *text = render(t);
    check_shape(text, 96);
    char buf[8192];
    block(text, 0, buf, sizeof buf);
    assert_non_null(strstr(buf, "\nmodel name\t: unknown\n"));
    assert_non_null(strstr(buf, "\nvendor_id\t: Genuine Intel\n"));
    free(text);
}

static void test_cpu_mhz_matches_printf(void **st)
{
    /* Three-decimal values, exact binary ties, sub-kHz values on both sides of a tie, and a
     * pseudo-random sample: the text must equal libc's "%.3f" (the process runs in the C
     * locale). */
    double vals[64] = {0, 1000, 2099.926, 1995.312, 1995.3125, 1995.3135, 0.0005, 0.0015, 0.0025,
                       1234.5675, 99999.9995, 2400.0004999, 2400.0005001, 3.75, 0.125, 0.0625};
    int n = 16;
    uint64_t x = 88172645463325252ull;
    while (n < 64) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        vals[n++] = (double)(x % 100000000ull) / 10000.0; /* four decimals: rounding matters */
    }
    for (int i = 0; i < n; i++) {
        char yaml[128], want[64], v[64], buf[8192];
        snprintf(yaml, sizeof yaml, "{cpu: {cpuMHz: %.17g}}", vals[i]);
        const struct yt_node *t = tree_with("vm-no-powercap", yaml);
        snprintf(want, sizeof want, "%.3f", prof_num(t, "cpu.cpuMHz", -1));
        char *text = render(t);
        block(text, 0, buf, sizeof buf);
        assert_non_null(field(buf, "cpu MHz", v, sizeof v));
        if (strcmp(v, want))
            fail_msg("cpuMHz %.17g: rendered %s, %%.3f gives %s", vals[i], v, want);
        free(text);
    }
    /* absent: 0.000 */
    char *text = render(tree_with("vm-no-powercap", "{cpu: {cpuMHz: 0}}"));
    assert_non_null(strstr(text, "\ncpu MHz\t\t: 0.000\n"));
    free(text);
}

/* A corpus capture: out of order, one CPU offline, a block without a number. */
static const char verbatim_yaml[] =
    "{cpu: {cpuinfoVerbatim: \""
    "processor\\t: 0\\nvendor_id\\t: GenuineIntel\\nphysical id\\t: 0\\ncore id\\t\\t: 0\\n\\n"
    "processor\\t: 2\\nphysical id\\t: 1\\ncore id\\t\\t: 0\\n\\n"
    "processor\\t: 1\\nphysical id\\t: 0\\ncore id\\t\\t: 0\\n\\n"
    "processor\\t: 5\\nphysical id\\t: 1\\ncore id\\t\\t: 0\\ncore id\\t\\t: 9\\n\\n"
    "processor\\t: x\\nphysical id\\t: 0\\ncore id\\t\\t: 0\\n\\n"
    "processor\\t: 7\\nphysical id\\t: one\\ncore id\\t\\t: 3\\n"
    "\"}}";

static void test_verbatim(void **st)
{
    const struct yt_node *t = tree_with("intel-xeon-2s-rapl", verbatim_yaml);
    const char *want = prof_str(t, "cpu.cpuinfoVerbatim", NULL);
    assert_non_null(want);
    size_t len;
    char *text = render_cpuinfo(t, &len);
    assert_non_null(text);
    assert_int_equal(len, strlen(want));
    assert_string_equal(text, want); /* byte for byte */
    free(text);

    assert_int_equal(cpuinfo_ncpus(t), 5);
    struct cpuinfo_cpu *cpus;
    assert_int_equal(cpuinfo_cpus(t, &cpus), 5);
    const struct cpuinfo_cpu exp[5] = {{0, 0, 0, 0}, {1, 0, 0, 1}, {2, 1, 0, 0}, {5, 1, 0, 1}, {7, 0, 3, 0}};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(cpus[i].id, exp[i].id);
        assert_int_equal(cpus[i].socket, exp[i].socket);
        assert_int_equal(cpus[i].core, exp[i].core);
        assert_int_equal(cpus[i].thread, exp[i].thread);
        int s, c, th;
        cpuinfo_cpu_topology(t, exp[i].id, &s, &c, &th);
        assert_true(s == exp[i].socket && c == exp[i].core && th == exp[i].thread);
    }
    free(cpus);
    int s, c, th;
    cpuinfo_cpu_topology(t, 3, &s, &c, &th); /* offline in the capture */
    assert_true(s == -1 && c == -1 && th == -1);
}

static void test_no_cpus(void **st)
{
    struct arena a = {0};
    struct diag d = {0};
    const char y[] = "cpu: {sockets: 2, coresPerSocket: 0, threadsPerCore: 2}\n";
    struct yt_node *t = yt_parse(&a, "t.yaml", y, sizeof y - 1, &d, NULL);
    assert_non_null(t);
    assert_int_equal(cpuinfo_ncpus(t), 0);
    size_t len = 1;
    char *text = render_cpuinfo(t, &len);
    assert_non_null(text);
    assert_int_equal(len, 0);
    assert_string_equal(text, "");
    free(text);
    struct cpuinfo_cpu dummy, *cpus = &dummy;
    assert_int_equal(cpuinfo_cpus(t, &cpus), 0);
    assert_null(cpus);
    int s = 0;
    cpuinfo_cpu_topology(t, 0, &s, NULL, NULL);
    assert_int_equal(s, -1);
    assert_int_equal(cpuinfo_ncpus(NULL), 0);
    arena_free(&a);
    diag_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xeon_first_block),
        cmocka_unit_test(test_captured_fields),
        cmocka_unit_test(test_xeon_numbering),
        cmocka_unit_test(test_vm),
        cmocka_unit_test(test_amd),
        cmocka_unit_test(test_every_builtin_shape),
        cmocka_unit_test(test_flags_from_facts),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_cpu_mhz_matches_printf),
        cmocka_unit_test(test_verbatim),
        cmocka_unit_test(test_no_cpus),
    };
    return cmocka_run_group_tests(tests, profiles_setup, profiles_teardown);
}
