/* Unit tests of engine/render/render_vulns.c and the cpu.vulnerabilities checks of
 * engine/model/profile_validate.c: the file list (Linux 6.12.117 drivers/base/cpu.c
 * cpu_root_vulnerabilities_attrs, typed here from that source) and the profile schema agree,
 * "Not affected" for a bug the bugs line lacks (arch/x86/kernel/cpu/bugs.c cpu_show_common),
 * the profile's text for one it names (every builtin names one for each of its bugs), and the
 * validator's refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_vulns.h"
#include "profile_schema.h"
#include "profiles_fixture.h"
#include "render_vulns.h"

static const struct yt_node *parse(const char *yaml)
{
    return fixture_parse("t.yaml", yaml);
}

static const struct cpu_vuln *vuln(const char *file)
{
    for (int i = 0; i < cpu_vulns_n; i++)
        if (!strcmp(cpu_vulns[i].file, file))
            return &cpu_vulns[i];
    fail_msg("no vulnerability file %s", file);
    return NULL;
}

/* The kernel's 17 files in its order, and the schema's keys are the same. */
static void test_files_and_schema(void **st)
{
    static const char *const kernel[] = {
        "meltdown", "spectre_v1", "spectre_v2", "spec_store_bypass", "l1tf", "mds", "tsx_async_abort",
        "itlb_multihit", "srbds", "mmio_stale_data", "retbleed", "spec_rstack_overflow", "gather_data_sampling",
        "reg_file_data_sampling", "indirect_target_selection", "tsa", "vmscape"};
    assert_int_equal(cpu_vulns_n, 17);
    const struct sfield *cpu = sfield_find(profile_schema, "cpu");
    assert_non_null(cpu);
    const struct sfield *v = sfield_find(cpu->sub, "vulnerabilities");
    assert_non_null(v);
    int n = 0;
    for (; v->sub[n].key; n++) {
        assert_true(n < 17);
        assert_string_equal(v->sub[n].key, kernel[n]);
        assert_true(v->sub[n].fact);
    }
    assert_int_equal(n, 17);
    for (int i = 0; i < 17; i++)
        assert_string_equal(cpu_vulns[i].file, kernel[i]);
}

/* Not affected without the bug, the profile's text with it, "Vulnerable" when no text is given;
 * a bug word counts only whole (mmio_stale_data also by mmio_unknown). */
static void test_texts(void **st)
{
    const struct yt_node *t = parse("cpu:\n  bugs: 'spectre_v1 mds mmio_unknown taa_x'\n"
                                    "  vulnerabilities:\n    spectre_v1: 'Mitigation: X'\n");
    assert_string_equal(render_vuln_text(t, vuln("spectre_v1")), "Mitigation: X");
    assert_string_equal(render_vuln_text(t, vuln("mds")), "Vulnerable");
    assert_string_equal(render_vuln_text(t, vuln("mmio_stale_data")), "Vulnerable");
    assert_string_equal(render_vuln_text(t, vuln("tsx_async_abort")), "Not affected");
    assert_string_equal(render_vuln_text(t, vuln("meltdown")), "Not affected");
    assert_string_equal(render_vuln_text(parse("cpu: {}\n"), vuln("spectre_v2")), "Not affected");
}

/* Every builtin profile: a text for each bug its line names, "Not affected" for the rest; the
 * Xeon Gold 6530's spectre_v2 is its lscpu capture's line in the kernel's form without "RSB
 * filling" (6.12.117 prints that only in retpoline and IBRS modes). */
static void test_builtins(void **st)
{
    for (int i = 0; i < ps.n; i++) {
        const struct yt_node *t = ps.items[i].tree;
        const char *bugs = prof_str(t, "cpu.bugs", "");
        for (int k = 0; k < cpu_vulns_n; k++) {
            const char *text = render_vuln_text(t, &cpu_vulns[k]);
            if (cpu_vuln_affected(&cpu_vulns[k], bugs)) {
                assert_string_not_equal(text, "Not affected");
            } else {
                assert_string_equal(text, "Not affected");
            }
        }
    }
    const struct yt_node *emr = profiles_find(&ps, "intel-xeon-6530-2s-rapl")->tree;
    assert_string_equal(render_vuln_text(emr, vuln("spectre_v2")),
                        "Mitigation: Enhanced / Automatic IBRS; IBPB: conditional; PBRSB-eIBRS: SW sequence; BHI: BHI_DIS_S");
    assert_string_equal(render_vuln_text(emr, vuln("mds")), "Not affected");
    /* a GPU profile keeps its CPU base's texts */
    const struct yt_node *flex = profiles_find(&ps, "intel-flex-170-4gpu")->tree;
    assert_string_equal(render_vuln_text(flex, vuln("vmscape")), "Mitigation: IBPB before exit to userspace");
}

/* A spec override that contradicts the bugs line is refused with the file named. */
static void test_validation(void **st)
{
    const struct profile *p = profiles_find(&ps, "intel-xeon-6530-2s-rapl");
    const char *cases[][2] = {
        {"cpu: {vulnerabilities: {mds: 'Mitigation: Clear CPU buffers'}}", "cpu.vulnerabilities.mds: cpu.bugs does not name mds"},
        {"cpu: {bugs: 'spectre_v1 spectre_v2 spec_store_bypass vmscape gds'}", "cpu.vulnerabilities.gather_data_sampling: required"},
        {"cpu: {vulnerabilities: {vmscape: ''}}", "cpu.vulnerabilities.vmscape: must be one non-empty line"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct diag d = {0};
        const struct yt_node *ov = parse(cases[i][0]);
        assert_null(profile_with_overrides(&ps, p, ov, "test", &d));
        bool found = false;
        for (int k = 0; k < d.count; k++)
            found |= strstr(d.msgs[k], cases[i][1]) != NULL;
        if (!found) {
            diag_print(&d, stderr);
            fail_msg("case %zu: no \"%s\"", i, cases[i][1]);
        }
        diag_free(&d);
    }
    struct diag d = {0};
    assert_non_null(profile_with_overrides(&ps, p, parse("cpu: {vulnerabilities: {vmscape: 'Vulnerable'}}"), "test", &d));
    assert_int_equal(d.count, 0);
    diag_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_files_and_schema),
        cmocka_unit_test(test_texts),
        cmocka_unit_test(test_builtins),
        cmocka_unit_test(test_validation),
    };
    return cmocka_run_group_tests(tests, profiles_setup, profiles_teardown);
}
