/* emu_read: read and lseek answers on emulated files; see emu_read.h. */
#include "emu_read.h"

#include "seg_view.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
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

ssize_t emu_read_at(struct emu_show *sh, uint32_t entry, int flags, int64_t off, size_t n, const char **bytes)
{
    struct seg *s = emu_seg();
    if ((flags & O_PATH) || (flags & O_ACCMODE) == O_WRONLY)
        return -EBADF;
    if (entry < s->n_entries && s->entries[entry].kind == SEG_DIR)
        return -EISDIR;
    if (s->entries[entry].cls == SEG_M) {
        ssize_t k = emu_msr_read(entry, flags, off, n, sh->text, sizeof sh->text);
        *bytes = sh->text;
        return k;
    }
    if (s->entries[entry].cls == SEG_I)
        return -EINVAL; /* ipmi_devintf has no read: the messages come by ioctl */
    if (off < 0)
        return -EINVAL;
    if (entry >= s->n_entries)
        return -EIO;
    if ((off == 0 || !sh->content) && !seg_entry_present(s, entry))
        return -ENODEV; /* under a job cgroup that is gone: kernfs answers a removed node so (fs/kernfs/file.c) */
    if ((off == 0 || !sh->content) && seg_view_of(s, entry)) {
        size_t bound = seg_view_bound(s, entry), cap;
        if (bound > EMU_VIEW_BIG_SIZE)
            return -ENOMEM;
        if (sh->buf && bound > EMU_VIEW_SIZE && sh->buf <= EMU_VIEW_BUFS)
            emu_show_release(sh); /* the entry grew past a small buffer (a new segment): trade it */
        if (!sh->buf && !(sh->buf = view_claim(bound > EMU_VIEW_SIZE)))
            return -ENOMEM;
        char *buf = view_buf(sh->buf, &cap);
        sh->len = seg_view_render(s, entry, seg_now_ns(), buf, cap);
        sh->content = buf;
    } else if (off == 0 || !sh->content) {
        sh->content = seg_read(s, entry, seg_now_ns(), sh->text, &sh->len);
    }
    if (!sh->content)
        return -EIO; /* the segment shrank under us (a SIGBUS the guard caught) */
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
