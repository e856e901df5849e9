/* render_vulns: /sys/devices/system/cpu/vulnerabilities, a directory the node owns whole.
 *
 * Files (Linux 6.12.117 drivers/base/cpu.c cpu_root_vulnerabilities_attrs; the table is
 * engine/model/cpu_vulns.h), each 0444, one line ending in "\n":
 *   a bug the profile's cpu.bugs line lacks   "Not affected" (arch/x86/kernel/cpu/bugs.c cpu_show_common)
 *   a bug it names                            cpu.vulnerabilities.<file>: the text a machine of that
 *                                             model prints (a sourced fact: it depends on microcode,
 *                                             firmware and the kernel command line)
 *   a bug it names without that fact          "Vulnerable" (cpu_show_common's text for a bug it has
 *                                             no mitigation state for); profile_validate refuses a
 *                                             cpu.vulnerabilities map that leaves one out
 * lscpu prints these as its "Vulnerability ..." lines. Everything here is static text (class R).
 * Never: any value that changes while the node runs. */
#ifndef HWEMU_RENDER_VULNS_H
#define HWEMU_RENDER_VULNS_H
#include "layout.h"

struct yt_node;
struct cpu_vuln;

/* The text of v's file for this profile, without its "\n". */
const char *render_vuln_text(const struct yt_node *tree, const struct cpu_vuln *v);
void render_vulnerabilities(struct node_layout *l, const struct yt_node *tree);

#endif
