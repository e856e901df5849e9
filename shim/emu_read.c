/* emu_read: read and lseek answers on emulated files; see emu_read.h. */
#include "emu_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

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
    if (off == 0 || !sh->content)
        sh->content = seg_read(s, entry, seg_now_ns(), sh->text, &sh->len);
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
