/* gpu_view: the node's segment as fakesmi sees it; see gpu_view.h. */
#include "gpu_view.h"
#include "seg_faults.h"

#include "seg_attr.h"
#include "segment.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct seg the_seg;

int gv_open(char *err, size_t errlen)
{
    const char *node = getenv("HWEMU_NODE");
    char path[PATH_MAX], why[900];
    if (!seg_path_from_env(path, sizeof path)) {
        snprintf(err, errlen, "no emulated node: set HWEMU_NODE (and HWEMU_ROOT when the engine's root is not "
                 "/dev/shm/hwemu), or run the tool through `hwemu exec --node NAME`");
        return -1;
    }
    the_seg.fd = -1;
    if (seg_open(&the_seg, path, why, sizeof why)) {
        snprintf(err, errlen, "cannot open node %s: %s; is `hwemu serve` running with this root?",
                 node && *node ? node : path, why);
        return -1;
    }
    return 0;
}

const char *gv_node(void)
{
    return the_seg.h ? the_seg.h->node : "";
}

int gv_read(const char *path, char *buf, size_t cap)
{
    uint32_t e;
    int rc = seg_resolve(&the_seg, path, strlen(path), true, &e);
    if (rc)
        return -rc;
    if (the_seg.entries[e].kind == SEG_DIR)
        return -EISDIR;
    char tmp[SEG_TEXT_MAX];
    size_t len;
    const char *t = seg_read(&the_seg, e, seg_now_ns(), tmp, &len);
    if (!t)
        return -EIO; /* the segment shrank under us */
    if (len && t[len - 1] == '\n')
        len--;
    if (cap == 0)
        return (int)len;
    if (len >= cap)
        len = cap - 1;
    memcpy(buf, t, len);
    buf[len] = 0;
    return (int)len;
}

int gv_readf(char *buf, size_t cap, const char *fmt, ...)
{
    char path[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof path, fmt, ap);
    va_end(ap);
    return gv_read(path, buf, cap);
}

uint32_t gv_lost_gpus(void)
{
    struct seg_faults f;
    return the_seg.h && seg_faults_read(&the_seg, &f) ? f.gpu_lost : 0;
}

bool gv_exists(const char *path)
{
    uint32_t e;
    return seg_resolve(&the_seg, path, strlen(path), false, &e) == 0;
}

bool gv_read_ll(const char *path, long long *out)
{
    char buf[64], *end;
    if (gv_read(path, buf, sizeof buf) <= 0)
        return false;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

int gv_write(const char *path, const char *text)
{
    uint32_t e;
    int rc = seg_resolve(&the_seg, path, strlen(path), true, &e);
    if (rc)
        return rc;
    const struct seg_entry *en = &the_seg.entries[e];
    if (en->kind == SEG_DIR)
        return EISDIR;
    if (!(en->mode & 0222))
        return EACCES;
    char buf[SEG_TEXT_MAX];
    size_t n = strlen(text);
    if (n + 2 > sizeof buf)
        return EINVAL;
    memcpy(buf, text, n);
    if (!n || buf[n - 1] != '\n')
        buf[n++] = '\n';
    return seg_attr_write(&the_seg, e, buf, n, (int)getpid());
}

bool gv_unprivileged(void)
{
    const char *u = getenv("HWEMU_UNPRIVILEGED");
    return u && !strcmp(u, "1");
}
