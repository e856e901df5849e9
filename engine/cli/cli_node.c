/* cli_node: look into and write to a running node from the shell, through its segment, with
 * the same semantics an agent gets:
 *   hwemu files --node N [--root DIR] [PREFIX]     every entry: class, kind, mode, path [-> target]
 *   hwemu cat   --node N [--root DIR] PATH...      what a read shows now
 *   hwemu write --node N [--root DIR] PATH VALUE   one store; the kernel's errno on refusal
 * PATH is node-relative ("sys/class/powercap/intel-rapl:0/energy_uj"), or absolute as an
 * agent sees it ("/sys/...", "/host-sys/...", "/proc/cpuinfo"). */
#include "cli.h"
#include "seg_attr.h"
#include "segment.h"
#include "seg_view.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char help[] =
    "Usage: hwemu files --node NAME [--root DIR] [PREFIX]\n"
    "       hwemu cat --node NAME [--root DIR] PATH...\n"
    "       hwemu write --node NAME [--root DIR] PATH VALUE\n"
    "\n"
    "Reads and writes a running node's files through its segment, exactly as an agent would\n"
    "through the shim: `files` lists the tree (class R/S/A, kind, mode, path, link target),\n"
    "`cat` prints what a read shows now, `write` makes one store and fails with the kernel's\n"
    "errno when the attribute refuses the value (exit 1). Paths are node-relative or absolute\n"
    "(/sys/..., /host-sys/..., /proc/cpuinfo).\n"
    "\n"
    "Options:\n"
    "  --node NAME   the node (as in `hwemu clusterspec list`)\n"
    "  --root DIR    the engine's root (SIM_HWEMU_ROOT); default /dev/shm/hwemu\n"
    "  -h, --help    this text\n";

static const char *relative(const char *p)
{
    if (!strcmp(p, "/proc/cpuinfo"))
        return "cpuinfo";
    if (!strncmp(p, "/proc/", 6))
        return p + 1; /* "/proc/stat" -> "proc/stat" (render_proc.c) */
    if (!strncmp(p, "/host-sys/", 10))
        return p + 6; /* "/host-sys/x" -> "sys/x" */
    if (!strncmp(p, "/sys/", 5) || !strcmp(p, "/sys"))
        return p + 1;
    return p;
}

static const char *kind_word(const struct seg_entry *e)
{
    return e->kind == SEG_DIR ? "dir" : e->kind == SEG_LINK ? "link" : "file";
}

int cmd_node(const char *what, int argc, char **argv)
{
    static const struct option opts[] = {
        {"node", required_argument, 0, 'n'}, {"root", required_argument, 0, 'r'}, {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    const char *node = NULL, *root = cli_env("SIM_HWEMU_ROOT");
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long_only(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'n': node = optarg; break;
        case 'r': root = optarg; break;
        case 'h': fputs(help, stdout); return EXIT_OK;
        default: return cli_bad_option(what, argv, opts);
        }
    }
    if (!node)
        return cli_usage_error(what, "say which node: --node NAME");
    if (!root)
        root = "/dev/shm/hwemu";
    bool is_cat = !strcmp(what, "cat"), is_write = !strcmp(what, "write");
    if (is_cat && optind >= argc)
        return cli_usage_error(what, "say which file: hwemu cat --node %s PATH", node);
    if (is_write && argc - optind != 2)
        return cli_usage_error(what, "write takes a PATH and a VALUE");
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/%s.seg", root, node);
    struct seg s;
    if (access(path, F_OK) != 0) {
        fprintf(stderr, "hwemu %s: no node %s under %s (is `hwemu serve` running with this root? see "
                "`hwemu clusterspec list`)\n", what, node, root);
        return EXIT_INVALID;
    }
    if (seg_open(&s, path, err, sizeof err)) {
        fprintf(stderr, "hwemu %s: %s\n", what, err);
        return EXIT_INVALID;
    }
    int rc = EXIT_OK;
    if (!is_cat && !is_write) {
        const char *prefix = optind < argc ? relative(argv[optind]) : "";
        for (uint32_t i = 0; i < s.n_entries; i++) {
            const struct seg_entry *e = &s.entries[i];
            const char *p = seg_path(&s, i);
            if (strncmp(p, prefix, strlen(prefix)))
                continue;
            printf("%c %-4s %04o ", e->cls ? e->cls : '-', kind_word(e), e->mode);
            for (const char *q = p; *q; q++) /* a slot's placeholder (segment.h "Slots") written visibly */
                *q == SEG_SLOT_MARK ? fputs("<slot>", stdout) : putchar(*q);
            if (e->kind == SEG_LINK)
                printf(" -> %.*s", (int)e->text_len, s.strings + e->text_off);
            putchar('\n');
        }
    } else if (is_cat) {
        for (int a = optind; a < argc; a++) {
            const char *rel = relative(argv[a]);
            uint32_t e = SEG_NONE;
            int why = seg_resolve(&s, rel, strlen(rel), true, &e);
            if (!why && s.entries[e].kind == SEG_DIR)
                why = EISDIR;
            if (why) {
                fprintf(stderr, "hwemu cat: %s: %s (node %s)\n", argv[a], strerror(why), node);
                rc = EXIT_INVALID;
                continue;
            }
            if (s.entries[e].cls == SEG_M || s.entries[e].cls == SEG_I) {
                fprintf(stderr, "hwemu cat: %s: a character device, not text (node %s); read it with its tools "
                        "under hwemu exec (rdmsr, ipmitool: docs/interfaces.md)\n", argv[a], node);
                rc = EXIT_INVALID;
                continue;
            }
            if (seg_view_of(&s, e)) { /* computed at read time (seg_view.h) */
                size_t cap = seg_view_bound(&s, e);
                char *buf = malloc(cap ? cap : 1);
                if (!buf)
                    abort();
                size_t len = seg_view_render(&s, e, seg_now_ns(), buf, cap);
                if (len == SEG_VIEW_EIO) {
                    fprintf(stderr, "hwemu cat: %s: node %s cannot answer (an engine killed while it published "
                            "left a value torn): start the engine again on its root\n", argv[a], node);
                    rc = EXIT_INVALID;
                } else {
                    fwrite(buf, 1, len, stdout);
                }
                free(buf);
                continue;
            }
            char tmp[SEG_TEXT_MAX];
            size_t len;
            const char *t = seg_read(&s, e, seg_now_ns(), tmp, &len);
            if (!t) {
                fprintf(stderr, "hwemu cat: %s: %s (node %s: its segment shrank under the reader)\n", argv[a],
                        strerror(EIO), node);
                rc = EXIT_INVALID;
                continue;
            }
            fwrite(t, 1, len, stdout);
        }
    } else {
        const char *rel = relative(argv[optind]), *value = argv[optind + 1];
        uint32_t e = SEG_NONE;
        int err_no = seg_resolve(&s, rel, strlen(rel), true, &e);
        if (err_no)
            e = SEG_NONE;
        else if (s.entries[e].kind == SEG_DIR)
            err_no = EISDIR;
        else if (!(s.entries[e].mode & 0222))
            err_no = EACCES;
        char out[SEG_TEXT_MAX];
        size_t olen = 0;
        bool changes = false;
        int64_t now = seg_now_ns();
        if (!err_no && s.entries[e].cls == SEG_A)
            err_no = seg_attr_store(&s, e, value, strlen(value), now, out, &olen, &changes);
        else if (!err_no)
            err_no = EIO; /* writable mode, but no store: as the device core answers */
        if (e != SEG_NONE && s.entries[e].kind == SEG_FILE)
            seg_event_push(&s, e, err_no, value, strlen(value), now, (int)getpid());
        if (err_no) {
            fprintf(stderr, "hwemu write: %s: %s\n", argv[optind], strerror(err_no));
            rc = EXIT_INVALID;
        } else if (changes) {
            seg_slot_store(&s, e, out, olen, now);
        }
    }
    seg_close(&s);
    return rc;
}
