/* emu_read: read and lseek answers on emulated files; see emu_read.h. */
#include "emu_read.h"

#include "seg_faults.h"
#include "seg_view.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* View buffers: static (untouched pages cost nothing), claimed by compare-and-swap. A small one
 * holds a 512-CPU /proc/stat (seg_view_bound, SEG_VIEW_SMALL_TEXT); a view longer than that (a
 * many-CPU /proc/cpuinfo, up to SEG_VIEW_MAX_TEXT) takes one of the few large ones. Buffer
 * numbers (emu_show.buf) are 1 .. EMU_VIEW_BUFS for the small, then the large. */
#define EMU_VIEW_BUFS 32
#define EMU_VIEW_SIZE SEG_VIEW_SMALL_TEXT
#define EMU_VIEW_BIG_BUFS 4
#define EMU_VIEW_BIG_SIZE SEG_VIEW_MAX_TEXT
static char view_bufs[EMU_VIEW_BUFS][EMU_VIEW_SIZE];
static char view_big_bufs[EMU_VIEW_BIG_BUFS][EMU_VIEW_BIG_SIZE];
static _Atomic int view_taken[EMU_VIEW_BUFS + EMU_VIEW_BIG_BUFS];

static int view_claim(bool big)
{
    int from = big ? EMU_VIEW_BUFS : 0, to = big ? EMU_VIEW_BUFS + EMU_VIEW_BIG_BUFS : EMU_VIEW_BUFS;
    for (int i = from; i < to; i++) {
        int expected = 0;
        if (!atomic_load_explicit(&view_taken[i], memory_order_relaxed) &&
            atomic_compare_exchange_strong(&view_taken[i], &expected, 1))
            return i + 1;
    }
    return 0;
}

static char *view_buf(int buf, size_t *cap)
{
    if (buf > EMU_VIEW_BUFS) {
        *cap = EMU_VIEW_BIG_SIZE;
        return view_big_bufs[buf - 1 - EMU_VIEW_BUFS];
    }
    *cap = EMU_VIEW_SIZE;
    return view_bufs[buf - 1];
}

void emu_show_release(struct emu_show *sh)
{
    if (sh->buf > 0 && sh->buf <= EMU_VIEW_BUFS + EMU_VIEW_BIG_BUFS)
        atomic_store_explicit(&view_taken[sh->buf - 1], 0, memory_order_release);
    sh->buf = 0;
    sh->content = NULL;
}

/* What a lost GPU's PCI config space reads: all ones (faults.md §1.5, pci_user_read_config_*). */
static const char all_ones[4096] = {[0 ... 4095] = (char)0xff};

/* Is any fault on (state/faults holds more than its newline)? One latch read of a cached entry:
 * the common case, no fault, costs no lookup. */
static bool any_fault(struct seg *s)
{
    static _Atomic uint32_t cached = SEG_NONE - 1; /* SEG_NONE - 1: not looked up yet */
    uint32_t e = atomic_load_explicit(&cached, memory_order_relaxed);
    if (e == SEG_NONE - 1) {
        e = seg_lookup(s, "state/faults", 12);
        atomic_store_explicit(&cached, e, memory_order_relaxed);
    }
    struct seg_value v;
    return e < s->n_entries && seg_value_load(s, s->entries[e].value, &v) && v.type == SEG_V_TEXT && v.len > 1;
}

/* Does a fault change what a read of entry shows (seg_faults.h, docs/faults.md)? -errno for any
 * file of a node that lost its power, for a hwmon file of a failing sensor (every file of an hwmon directory but its name, labels and
 * links); 1 for the config space of a GPU that fell off the bus (all ones); else 0. */
static int fault_read(struct seg *s, uint32_t entry)
{
    struct seg_faults f;
    if (!any_fault(s) || !seg_faults_read(s, &f))
        return 0;
    if (f.off_err > 0)
        return -f.off_err; /* the node lost its power: every file fails (docs/faults.md power-loss) */
    const char *path = seg_path(s, entry);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t bl = strlen(base);
    if (f.hwmon_err > 0 && strstr(path, "/hwmon/hwmon") && strcmp(base, "name") && strcmp(base, "uevent") &&
        !(bl > 6 && !strcmp(base + bl - 6, "_label")))
        return -f.hwmon_err;
    if (f.gpu_lost && !strcmp(base, "config") && base - path >= 13) {
        const char *bdf = base - 13; /* "0000:bb:dd.f/config" */
        for (unsigned g = 0; g < 32; g++) {
            if (!((f.gpu_lost >> g) & 1))
                continue;
            char p[48], tmp[SEG_TEXT_MAX];
            size_t len = 0;
            int n = snprintf(p, sizeof p, "state/nvml/gpu%u/pci_bus_id", g);
            uint32_t e = seg_lookup(s, p, (size_t)n);
            const char *t = e == SEG_NONE ? NULL : seg_read(s, e, emu_now_ns(), tmp, &len);
            /* "00000000:13:00.0" against "0000:13:00.0": the bus, device and function */
            if (t && len >= 7 && !strncasecmp(t + len - 7 - (t[len - 1] == '\n'), bdf + 5, 7))
                return 1;
        }
    }
    return 0;
}

ssize_t emu_read_at(struct emu_show *sh, uint32_t entry, int flags, int64_t off, size_t n, const char **bytes)
{
    struct seg *s = emu_seg();
    if ((flags & O_PATH) || (flags & O_ACCMODE) == O_WRONLY)
        return -EBADF;
    if (entry < s->n_entries && s->entries[entry].kind == SEG_DIR)
        return -EISDIR;
    if (s->entries[entry].cls == SEG_M)
        return -EIO; /* the front ends read MSR devices with emu_msr_read (any count, repeated) */
    if (s->entries[entry].cls == SEG_I)
        return -EINVAL; /* ipmi_devintf has no read: the messages come by ioctl */
    if (off < 0)
        return -EINVAL;
    if (entry >= s->n_entries)
        return -EIO;
    if ((off == 0 || !sh->content) && !seg_entry_present(s, entry))
        return -ENODEV; /* under a job cgroup that is gone: kernfs answers a removed node so (fs/kernfs/file.c) */
    int fr = off == 0 || !sh->content ? fault_read(s, entry) : 0;
    if (fr < 0)
        return fr;
    if (fr > 0) {
        sh->content = all_ones;
        sh->len = s->entries[entry].text_len < sizeof all_ones ? s->entries[entry].text_len : sizeof all_ones;
    } else if ((off == 0 || !sh->content) && seg_view_of(s, entry)) {
        size_t bound = seg_view_bound(s, entry), cap;
        if (bound > EMU_VIEW_BIG_SIZE)
            return -ENOMEM;
        if (sh->buf && bound > EMU_VIEW_SIZE && sh->buf <= EMU_VIEW_BUFS)
            emu_show_release(sh); /* the entry grew past a small buffer (a new segment): trade it */
        if (!sh->buf && !(sh->buf = view_claim(bound > EMU_VIEW_SIZE)))
            return -ENOMEM;
        char *buf = view_buf(sh->buf, &cap);
        sh->len = seg_view_render(s, entry, emu_now_ns(), buf, cap);
        sh->content = buf;
        if (sh->len == SEG_VIEW_EIO) { /* a value a killed engine left torn: until it restarts */
            sh->len = 0;
            sh->content = NULL;
        }
    } else if (off == 0 || !sh->content) {
        sh->content = seg_read(s, entry, emu_now_ns(), sh->text, &sh->len);
    }
    if (!sh->content)
        return -EIO; /* the segment shrank under us (a SIGBUS the guard caught), or a view cannot answer */
    if ((uint64_t)off > sh->len)
        return -EPERM; /* sysfs: a read past the end of what show() gave */
    size_t left = sh->len - (size_t)off;
    *bytes = sh->content + off;
    return (ssize_t)(left < n ? left : n);
}

int64_t emu_read_seek(uint32_t entry, enum emu_root root, int flags, int64_t pos, int64_t off, int whence)
{
    if (flags & O_PATH)
        return -EBADF;
    int64_t base;
    uint8_t cls = emu_seg()->entries[entry].cls;
    if (cls == SEG_I)
        return pos; /* noop_llseek */
    if (cls == SEG_M && whence == SEEK_END)
        return -EINVAL; /* no_seek_end_llseek */
    switch (whence) {
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = pos; break;
    case SEEK_END: base = emu_seg()->entries[entry].kind == SEG_DIR || root == EMU_ROOT_PROC ? 0 : 4096; break;
    default: return -EINVAL;
    }
    if ((off < 0 && base + off < 0) || (off > 0 && base > INT64_MAX - off))
        return -EINVAL;
    return base + off;
}
