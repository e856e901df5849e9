/* render_vulns: the vulnerabilities directory; see render_vulns.h for the files and their texts. */
#include "render_vulns.h"

#include "cpu_vulns.h"
#include "profile.h"

#include <stdio.h>
#include <string.h>

#define VULN_DIR "sys/devices/system/cpu/vulnerabilities"

const char *render_vuln_text(const struct yt_node *tree, const struct cpu_vuln *v)
{
    if (!cpu_vuln_affected(v, prof_str(tree, "cpu.bugs", "")))
        return "Not affected";
    char key[96];
    snprintf(key, sizeof key, "cpu.vulnerabilities.%s", v->file);
    const char *text = prof_str(tree, key, "");
    return *text ? text : "Vulnerable";
}

void render_vulnerabilities(struct node_layout *l, const struct yt_node *tree)
{
    segb_dir(l->b, VULN_DIR, 0755);
    segb_own(l->b, VULN_DIR);
    for (int i = 0; i < cpu_vulns_n; i++) {
        char path[128], line[512];
        snprintf(path, sizeof path, VULN_DIR "/%s", cpu_vulns[i].file);
        /* sysfs_emit writes at most a page; the validator keeps a text to one line */
        int n = snprintf(line, sizeof line, "%s\n", render_vuln_text(tree, &cpu_vulns[i]));
        if (n >= (int)sizeof line) {
            n = (int)sizeof line - 1;
            line[n - 1] = '\n';
        }
        for (int k = 0; k < n - 1; k++)
            if (line[k] == '\n' || line[k] == '\r')
                line[k] = ' ';
        segb_static(l->b, path, 0444, line, (size_t)n);
    }
}
