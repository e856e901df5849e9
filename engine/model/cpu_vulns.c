/* cpu_vulns: the vulnerabilities table; see cpu_vulns.h. */
#include "cpu_vulns.h"

#include <string.h>

const struct cpu_vuln cpu_vulns[] = {
    {"meltdown", "cpu_meltdown", NULL},
    {"spectre_v1", "spectre_v1", NULL},
    {"spectre_v2", "spectre_v2", NULL},
    {"spec_store_bypass", "spec_store_bypass", NULL},
    {"l1tf", "l1tf", NULL},
    {"mds", "mds", NULL},
    {"tsx_async_abort", "taa", NULL},
    {"itlb_multihit", "itlb_multihit", NULL},
    {"srbds", "srbds", NULL},
    /* cpu_show_mmio_stale_data reports X86_BUG_MMIO_UNKNOWN when set, else MMIO_STALE_DATA */
    {"mmio_stale_data", "mmio_stale_data", "mmio_unknown"},
    {"retbleed", "retbleed", NULL},
    {"spec_rstack_overflow", "srso", NULL},
    {"gather_data_sampling", "gds", NULL},
    {"reg_file_data_sampling", "rfds", NULL},
    {"indirect_target_selection", "its", NULL},
    {"tsa", "tsa", NULL},
    {"vmscape", "vmscape", NULL},
};
const int cpu_vulns_n = (int)(sizeof cpu_vulns / sizeof cpu_vulns[0]);

static bool has_word(const char *words, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = words; *p;) {
        p += strspn(p, " \t\r\n");
        size_t l = strcspn(p, " \t\r\n");
        if (l == n && l && !strncmp(p, w, l))
            return true;
        p += l;
    }
    return false;
}

bool cpu_vuln_affected(const struct cpu_vuln *v, const char *bugs)
{
    return has_word(bugs, v->bug) || (v->alt && has_word(bugs, v->alt));
}
