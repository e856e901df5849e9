/* emu_status: the node's lines of a process's own /proc/<pid>/status; see emu_status.h. */
#include "emu_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A decimal id at p ending at the next '/' (or the end): its value and where it ends, or -1. */
static long id_at(const char *p, const char **end)
{
    long v = 0;
    const char *q = p;
    while (*q >= '0' && *q <= '9' && q - p < 10)
        v = v * 10 + (*q++ - '0');
    if (q == p || (*q && *q != '/'))
        return -1;
    *end = q;
    return v;
}

int emu_status_path(const char *abs, pid_t pid, pid_t tid, char *host, size_t cap)
{
    if (strncmp(abs, "/proc/", 6))
        return 0;
    const char *p = abs + 6, *q;
    long owner, task = -1;
    if (!strncmp(p, "thread-self/", 12)) {
        owner = pid;
        task = tid;
        p += 12;
    } else {
        if (!strncmp(p, "self/", 5)) {
            owner = pid;
            p += 5;
        } else {
            owner = id_at(p, &q);
            if (owner < 0 || (owner != pid && owner != tid) || *q != '/')
                return 0;
            p = q + 1;
        }
        if (!strncmp(p, "task/", 5)) {
            task = id_at(p + 5, &q);
            if (task < 0 || *q != '/')
                return 0;
            p = q + 1;
        }
    }
    if (strcmp(p, "status"))
        return 0;
    int n = task >= 0 ? snprintf(host, cap, "/proc/%ld/task/%ld/status", owner, task)
                      : snprintf(host, cap, "/proc/%ld/status", owner);
    return n > 0 && (size_t)n < cap;
}

size_t emu_mask_hex(int nbits, int nset, char *out, size_t cap)
{
    if (nbits < 1)
        return 0;
    size_t k = 0;
    int first = nbits % 32 ? nbits % 32 : 32; /* bits of the most significant group */
    for (int lo = (nbits - 1) / 32 * 32; lo >= 0; lo -= 32) {
        int width = lo + 32 > nbits ? first : 32;
        unsigned v = 0;
        for (int b = 0; b < width; b++)
            if (lo + b < nset)
                v |= 1u << b;
        int w = snprintf(out + k, cap - k, "%s%0*x", k ? "," : "", (width + 3) / 4, v);
        if (w < 0 || (size_t)w >= cap - k)
            return 0;
        k += (size_t)w;
    }
    return k;
}

size_t emu_mask_list(int nset, char *out, size_t cap)
{
    int w = nset <= 0 ? snprintf(out, cap, "%s", "") :
            nset == 1 ? snprintf(out, cap, "0") : snprintf(out, cap, "0-%d", nset - 1);
    return w >= 0 && (size_t)w < cap ? (size_t)w : 0;
}

/* The node's value for a line named name (with its colon), or 0 for another line. */
static size_t node_value(const char *line, size_t len, int ncpus, int nnodes, char *v, size_t cap)
{
#define IS(s) (len > sizeof s - 1 && !memcmp(line, s, sizeof s - 1))
    if (IS("Cpus_allowed:\t"))
        return emu_mask_hex(ncpus, ncpus, v, cap);
    if (IS("Cpus_allowed_list:\t"))
        return emu_mask_list(ncpus, v, cap);
    if (IS("Mems_allowed:\t"))
        return emu_mask_hex(EMU_MAX_NUMNODES, nnodes, v, cap);
    if (IS("Mems_allowed_list:\t"))
        return emu_mask_list(nnodes, v, cap);
#undef IS
    return 0;
}

size_t emu_status_filter(const char *in, size_t n, int ncpus, int nnodes, char *out, size_t cap)
{
    size_t k = 0;
    char v[512];
    for (size_t at = 0; at < n;) {
        const char *line = in + at;
        const char *nl = memchr(line, '\n', n - at);
        size_t len = nl ? (size_t)(nl - line) + 1 : n - at;
        size_t vl = ncpus > 0 && nnodes > 0 ? node_value(line, len, ncpus, nnodes, v, sizeof v) : 0;
        if (vl) {
            size_t name = (size_t)((const char *)memchr(line, '\t', len) - line) + 1;
            if (k + name + vl + 1 > cap)
                return 0;
            memcpy(out + k, line, name);
            memcpy(out + k + name, v, vl);
            out[k + name + vl] = '\n';
            k += name + vl + 1;
        } else {
            if (k + len > cap)
                return 0;
            memcpy(out + k, line, len);
            k += len;
        }
        at += len;
    }
    return k;
}
