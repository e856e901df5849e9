/* segment: mapping, lookup, reads, slot stores, events and latch publication; see segment.h.
 * Linked into the engine, the shim and fakesmi: libc only, no allocation, no locks, and no
 * system call on the read path (the clock is the vDSO's). */
#include "segment.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

bool seg_path_from_env(char *path, size_t len)
{
    const char *seg = getenv("HWEMU_SEGMENT"), *node = getenv("HWEMU_NODE"), *root = getenv("HWEMU_ROOT");
    if (seg && *seg)
        snprintf(path, len, "%s", seg);
    else if (node && *node)
        snprintf(path, len, "%s/%s.seg", root && *root ? root : "/dev/shm/hwemu", node);
    else
        return false;
    return true;
}

int64_t seg_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

__attribute__((format(printf, 4, 5))) static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

static bool range_ok(uint64_t off, uint64_t count, uint64_t size, uint64_t file)
{
    return off <= file && count <= (file - off) / (size ? size : 1);
}

int seg_static_path_in(const char *dir, size_t dirlen, uint64_t layout_hash, char *out, size_t len)
{
    if (dirlen > (size_t)INT32_MAX)
        return ENAMETOOLONG;
    int n = snprintf(out, len, "%.*s/%016llx.static", (int)dirlen, dir, (unsigned long long)layout_hash);
    return n < 0 || (size_t)n >= len ? ENAMETOOLONG : 0;
}

int seg_static_path(const char *seg_path, uint64_t layout_hash, char *out, size_t len)
{
    const char *slash = strrchr(seg_path, '/');
    return slash ? seg_static_path_in(seg_path, (size_t)(slash - seg_path), layout_hash, out, len)
                 : seg_static_path_in(".", 1, layout_hash, out, len);
}

int seg_check(const struct seg *s, char *err, size_t errlen)
{
    const struct seg_header *h = s->h;
    if (s->size < sizeof *h || memcmp(h->magic, SEG_MAGIC, 8) != 0)
        return fail(err, errlen, EINVAL, "not an hwemu segment (bad magic)");
    if (h->version != SEG_VERSION || h->header_size != sizeof *h)
        return fail(err, errlen, EINVAL, "segment version or header size differs from this hwemu's (format %u, "
                    "%u header bytes; this hwemu reads format %u, %zu); restart the engine with the same hwemu "
                    "build", h->version, h->header_size, SEG_VERSION, sizeof *h);
    if (h->file_size != s->size)
        return fail(err, errlen, EINVAL, "segment size does not match its header (truncated?)");
    uint64_t f = s->size;
    /* Every section inside the file, 8-byte aligned (atomics live in them), the ring a power
     * of two, the substep positive (readers divide by it). */
    uint32_t offs[] = {h->values_off, h->journal_off, h->slots_off,  h->hwm_off,
                       h->ring_off,   h->ledger_off,  h->ledger_size, h->quiet_off, h->slot_bits_off};
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++)
        if (offs[i] % 8)
            return fail(err, errlen, EINVAL, "segment sections are misaligned; it is damaged");
    if (!range_ok(h->values_off, h->n_values, sizeof(struct seg_value), f) ||
        !range_ok(h->journal_off, 1, sizeof(struct seg_journal), f) ||
        !range_ok(h->slots_off, h->n_slots, sizeof(struct seg_slot), f) ||
        !range_ok(h->hwm_off, h->n_values, sizeof(uint64_t), f) ||
        !range_ok(h->ring_off, h->ring_cap, sizeof(struct seg_event), f) ||
        !range_ok(h->ledger_off, 2, h->ledger_size, f) ||
        h->n_counters > h->n_values || h->first_quiet > h->n_values ||
        !range_ok(h->quiet_off, SEG_QUIET_WORDS(h->n_values - h->first_quiet), sizeof(uint64_t), f) ||
        !range_ok(h->slot_bits_off, SEG_QUIET_WORDS(h->n_slots), sizeof(uint64_t), f) ||
        h->ledger_size < sizeof(struct seg_ledger) + sizeof(uint64_t) * (uint64_t)h->n_counters ||
        (h->ring_cap & (h->ring_cap - 1)) != 0 || h->ring_cap == 0 || h->substep_ns <= 0)
        return fail(err, errlen, EINVAL, "segment sections lie outside the file; it is damaged");
    return 0;
}

int seg_check_static(const struct seg *s, const uint8_t *base, size_t size, char *err, size_t errlen)
{
    const struct seg_static_header *sh = (const struct seg_static_header *)base;
    const struct seg_header *h = s->h;
    if (size < sizeof *sh || memcmp(sh->magic, SEG_STATIC_MAGIC, 8) != 0)
        return fail(err, errlen, EINVAL, "not an hwemu static file (bad magic)");
    if (sh->version != SEG_VERSION || sh->header_size != sizeof *sh)
        return fail(err, errlen, EINVAL, "its version or header size differs from this hwemu's (format %u; this "
                    "hwemu reads format %u); restart the engine with the same hwemu build", sh->version, SEG_VERSION);
    if (sh->file_size != size)
        return fail(err, errlen, EINVAL, "its size does not match its header (truncated?)");
    if (sh->layout_hash != h->layout_hash || sh->n_entries != h->n_entries || sh->strings_size != h->strings_size ||
        sh->n_params != h->n_params)
        return fail(err, errlen, EINVAL, "it is not the static part of this segment (another layout); "
                    "restart the engine, which writes it again");
    uint64_t f = size;
    if (sh->n_quiet != h->n_values - h->first_quiet)
        return fail(err, errlen, EINVAL, "it is not the static part of this segment (another layout); "
                    "restart the engine, which writes it again");
    if (sh->entries_off % 8 || sh->strings_off % 8 || sh->params_off % 8 || sh->quiet_off % 8)
        return fail(err, errlen, EINVAL, "its sections are misaligned; it is damaged");
    if (!range_ok(sh->entries_off, sh->n_entries, sizeof(struct seg_entry), f) ||
        !range_ok(sh->quiet_off, sh->n_quiet, sizeof(struct seg_value), f) ||
        !range_ok(sh->strings_off, sh->strings_size, 1, f) ||
        !range_ok(sh->params_off, sh->n_params, sizeof(struct seg_param), f) || sh->strings_size == 0 ||
        ((const char *)base)[sh->strings_off + sh->strings_size - 1] != 0)
        return fail(err, errlen, EINVAL, "its sections lie outside the file; it is damaged");
    const struct seg_entry *e = (const struct seg_entry *)(base + sh->entries_off);
    for (uint32_t i = 0; i < sh->n_entries; i++) {
        if (e[i].path_off >= sh->strings_size || e[i].text_off > sh->strings_size ||
            e[i].text_len > sh->strings_size - e[i].text_off ||
            (e[i].value != SEG_NONE && e[i].value >= h->n_values) ||
            (e[i].slot != SEG_NONE && e[i].slot >= h->n_slots) ||
            (e[i].param != SEG_NONE && e[i].param >= sh->n_params) ||
            (e[i].parent != SEG_NONE && e[i].parent >= sh->n_entries))
            return fail(err, errlen, EINVAL, "an entry points outside its tables; it is damaged");
    }
    return 0;
}

void seg_bind(struct seg *s, const struct seg_header *h)
{
    s->h = (struct seg_header *)s->base;
    s->n_entries = h->n_entries;
    s->strings_size = h->strings_size;
    s->n_params = h->n_params;
    s->n_values = h->n_values;
    s->n_slots = h->n_slots;
    s->ring_cap = h->ring_cap;
    s->n_counters = h->n_counters;
    s->ledger_size = h->ledger_size;
    s->substep_ns = h->substep_ns > 0 ? h->substep_ns : 1000000;
    s->static_end = h->values_off + h->n_values * (uint32_t)sizeof(struct seg_value);
    s->values = (struct seg_value *)(s->base + h->values_off);
    s->first_quiet = h->first_quiet <= h->n_values ? h->first_quiet : h->n_values;
    s->qbits = (_Atomic uint64_t *)(s->base + h->quiet_off);
    s->sbits = (_Atomic uint64_t *)(s->base + h->slot_bits_off);
    s->journal = (struct seg_journal *)(s->base + h->journal_off);
    s->slots = (struct seg_slot *)(s->base + h->slots_off);
    s->hwm = (_Atomic uint64_t *)(s->base + h->hwm_off);
    s->ring = (struct seg_event *)(s->base + h->ring_off);
    s->ledger[0] = (struct seg_ledger *)(s->base + h->ledger_off);
    s->ledger[1] = (struct seg_ledger *)(s->base + h->ledger_off + h->ledger_size);
    s->pub_gen = atomic_load_explicit(&s->h->gen, memory_order_relaxed) & ~UINT64_C(1);
    s->pub_jseq = (atomic_load_explicit(&s->journal->seq, memory_order_relaxed) + 1) & ~UINT64_C(1);
}

void seg_bind_static(struct seg *s, const uint8_t *base)
{
    const struct seg_static_header *sh = (const struct seg_static_header *)base;
    s->entries = (const struct seg_entry *)(base + sh->entries_off);
    s->strings = (const char *)(base + sh->strings_off);
    s->params = (const struct seg_param *)(base + sh->params_off);
    s->quiet = (const struct seg_value *)(base + sh->quiet_off);
}

/* --- mapping and the SIGBUS guard --------------------------------------------------------- */

static size_t page_size(void)
{
    static size_t ps;
    if (!ps) {
        long p = sysconf(_SC_PAGESIZE);
        ps = p > 0 ? (size_t)p : 4096;
    }
    return ps;
}

/* Readers: the pages wholly inside [first page after the header, the first agent-writable
 * section) of the node file (the snapshot's values) are read-only. */
static void protect_static(struct seg *s)
{
    if (s->rw || !s->h)
        return;
    size_t ps = page_size();
    uint64_t lo = (sizeof(struct seg_header) + ps - 1) / ps * ps;
    uint64_t hi = s->h->slots_off;
    if (s->h->hwm_off < hi)
        hi = s->h->hwm_off;
    if (s->h->ring_off < hi)
        hi = s->h->ring_off;
    hi = hi / ps * ps;
    if (hi > lo && hi <= s->size)
        mprotect(s->base + lo, (size_t)(hi - lo), PROT_READ);
}

int seg_map(struct seg *s, int fd, size_t size, bool rw)
{
    size_t ps = page_size(), map = (size + ps - 1) / ps * ps;
    uint8_t *r;
    if (rw) {
        /* The engine: the file alone, one memory map a node (the kernel's vm.max_map_count bounds
         * a process's maps: 65,530 by default). Its strings are its template's private image, so
         * no scan runs in the node file, and nothing there needs the zero page after it. */
        if ((r = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
            return errno;
    } else {
        /* One reservation: the file's pages, then a zero page no string scan can run past. */
        map += ps;
        if ((r = mmap(NULL, map, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
            return errno;
        if (mmap(r, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
            int e = errno;
            munmap(r, map);
            return e;
        }
    }
    s->base = r;
    s->size = size;
    s->map_size = map;
    s->rw = rw;
    return 0;
}

struct guard_ent {
    _Atomic uintptr_t lo, hi;
    _Atomic int faulted;
};
static struct guard_ent *_Atomic guard_tab;
static _Atomic uint32_t guard_n;
static uint32_t guard_cap, guard_free; /* under guard_lock */
/* Tables outgrown: the handler may still be reading one, so they are kept (and stay reachable,
 * which is what a leak checker asks); capacities double from 16, so 32 cover any count. */
static struct guard_ent *guard_retired[32];
static uint32_t guard_nretired;
static _Atomic uint64_t guard_faults; /* any registered segment faulted, ever */
static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction guard_prev;

static void guard_handler(int sig, siginfo_t *si, void *ctx)
{
    uintptr_t a = (uintptr_t)si->si_addr;
    struct guard_ent *t = atomic_load_explicit(&guard_tab, memory_order_acquire);
    uint32_t n = atomic_load_explicit(&guard_n, memory_order_acquire);
    for (uint32_t i = 0; t && i < n; i++) {
        if (a < atomic_load_explicit(&t[i].lo, memory_order_relaxed) ||
            a >= atomic_load_explicit(&t[i].hi, memory_order_relaxed))
            continue;
        /* A lost page of a segment: a zero page in its place, so the access completes. */
        uintptr_t page = a / page_size() * page_size();
        if (mmap((void *)page, page_size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
                 0) == MAP_FAILED)
            break;
        atomic_store_explicit(&t[i].faulted, 1, memory_order_release);
        atomic_fetch_add_explicit(&guard_faults, 1, memory_order_release);
        return;
    }
    /* Not ours: whatever was there before us. */
    if ((guard_prev.sa_flags & SA_SIGINFO) && guard_prev.sa_sigaction) {
        guard_prev.sa_sigaction(sig, si, ctx);
        return;
    }
    if (guard_prev.sa_handler != SIG_DFL && guard_prev.sa_handler != SIG_IGN) {
        guard_prev.sa_handler(sig);
        return;
    }
    signal(sig, SIG_DFL); /* the fault repeats and the default action is taken */
}

void seg_guard_install(void)
{
    /* Again whenever someone else took SIGBUS since (a test harness, an agent's own handler,
     * which then becomes the one we pass faults outside segments to). */
    pthread_mutex_lock(&guard_lock);
    struct sigaction cur;
    if (sigaction(SIGBUS, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == guard_handler) {
        pthread_mutex_unlock(&guard_lock);
        return;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = guard_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &guard_prev);
    pthread_mutex_unlock(&guard_lock);
}

int seg_guard_add(const void *base, size_t size)
{
    pthread_mutex_lock(&guard_lock);
    struct guard_ent *t = atomic_load(&guard_tab);
    uint32_t n = atomic_load(&guard_n), at = n;
    for (uint32_t i = 0; guard_free && i < n; i++) /* a free slot only when one was freed */
        if (!atomic_load(&t[i].hi)) {
            at = i;
            guard_free--;
            break;
        }
    if (at == n && n == guard_cap) {
        /* grow: the handler may be reading the old table, so it is never freed (guard_retired) */
        uint32_t cap = guard_cap ? guard_cap * 2 : 16;
        struct guard_ent *nt = calloc(cap, sizeof *nt);
        if (!nt) {
            pthread_mutex_unlock(&guard_lock);
            return -1;
        }
        for (uint32_t i = 0; i < n; i++) {
            atomic_store(&nt[i].lo, atomic_load(&t[i].lo));
            atomic_store(&nt[i].hi, atomic_load(&t[i].hi));
            atomic_store(&nt[i].faulted, atomic_load(&t[i].faulted));
        }
        atomic_store_explicit(&guard_tab, nt, memory_order_release);
        if (t && guard_nretired < sizeof guard_retired / sizeof *guard_retired)
            guard_retired[guard_nretired++] = t;
        guard_cap = cap;
        t = nt;
    }
    atomic_store(&t[at].faulted, 0);
    atomic_store(&t[at].lo, (uintptr_t)base);
    atomic_store(&t[at].hi, (uintptr_t)base + size);
    if (at == n)
        atomic_store_explicit(&guard_n, n + 1, memory_order_release);
    pthread_mutex_unlock(&guard_lock);
    return (int)at;
}

void seg_guard_remove(int *slot)
{
    if (*slot < 0)
        return;
    pthread_mutex_lock(&guard_lock);
    struct guard_ent *t = atomic_load(&guard_tab);
    atomic_store(&t[*slot].hi, 0);
    atomic_store(&t[*slot].lo, 0);
    atomic_store(&t[*slot].faulted, 0);
    guard_free++;
    pthread_mutex_unlock(&guard_lock);
    *slot = -1;
}

bool seg_guard_faulted(int slot)
{
    if (slot < 0 || !atomic_load_explicit(&guard_faults, memory_order_acquire))
        return false;
    struct guard_ent *t = atomic_load_explicit(&guard_tab, memory_order_acquire);
    return atomic_load_explicit(&t[slot].faulted, memory_order_acquire) != 0;
}

void seg_guard_clear(int slot)
{
    if (slot < 0)
        return;
    struct guard_ent *t = atomic_load(&guard_tab);
    atomic_store(&t[slot].faulted, 0);
}

void seg_guard_register(struct seg *s)
{
    s->guard = seg_guard_add(s->base, s->size);
}

void seg_guard_unregister(struct seg *s)
{
    seg_guard_remove(&s->guard);
    if (s->st_base)
        seg_guard_remove(&s->st_guard);
}

bool seg_faulted(const struct seg *s)
{
    return seg_guard_faulted(s->guard) || (s->st_base && seg_guard_faulted(s->st_guard));
}

int seg_revalidate(struct seg *s)
{
    struct stat st;
    if (s->fd < 0 || fstat(s->fd, &st) != 0 || st.st_size < (off_t)s->size)
        return EIO;
    if (s->st_base && (s->st_fd < 0 || fstat(s->st_fd, &st) != 0 || st.st_size < (off_t)s->st_size))
        return EIO;
    if (mmap(s->base, s->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, s->fd, 0) == MAP_FAILED)
        return EIO;
    protect_static(s);
    if (s->st_base && mmap(s->st_base, s->st_size, PROT_READ, MAP_SHARED | MAP_FIXED, s->st_fd, 0) == MAP_FAILED)
        return EIO;
    seg_guard_clear(s->guard);
    if (s->st_base)
        seg_guard_clear(s->st_guard);
    return 0;
}

/* Maps size bytes of fd read-only and shared, then one zero page: the address, or NULL. */
static uint8_t *map_readonly(int fd, size_t size, size_t *map_size)
{
    size_t ps = page_size(), map = (size + ps - 1) / ps * ps + ps;
    uint8_t *r = mmap(NULL, map, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED)
        return NULL;
    if (mmap(r, size, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
        munmap(r, map);
        return NULL;
    }
    *map_size = map;
    return r;
}

int seg_attach_static(struct seg *s, const char *seg_path, char *err, size_t errlen)
{
    char path[4096];
    if (seg_static_path(seg_path, s->h->layout_hash, path, sizeof path))
        return fail(err, errlen, ENAMETOOLONG, "%s: the path of its static file is too long", seg_path);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return fail(err, errlen, e, "%s: cannot open its static file %s: %s (the engine writes it when it starts)",
                    seg_path, path, strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(struct seg_static_header)) {
        close(fd);
        return fail(err, errlen, EINVAL, "%s: its static file %s is too small to be one", seg_path, path);
    }
    size_t map_size = 0;
    uint8_t *base = map_readonly(fd, (size_t)st.st_size, &map_size);
    if (!base) {
        int e = errno;
        close(fd);
        return fail(err, errlen, e, "%s: cannot map its static file %s: %s", seg_path, path, strerror(e));
    }
    s->st_base = base;
    s->st_size = (size_t)st.st_size;
    s->st_map_size = map_size;
    s->st_fd = fd;
    s->st_guard = seg_guard_add(base, s->st_size);
    char why[200] = "the file shrank while it was checked";
    if (seg_check_static(s, base, s->st_size, why, sizeof why) || seg_guard_faulted(s->st_guard))
        return fail(err, errlen, EINVAL, "%s: its static file %s: %s", seg_path, path, why);
    seg_bind_static(s, base);
    return 0;
}

int seg_open(struct seg *s, const char *path, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->guard = -1;
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return fail(err, errlen, e, "%s: cannot open the segment: %s", path, strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(struct seg_header)) {
        close(fd);
        return fail(err, errlen, EINVAL, "%s: %s", path, "too small to be an hwemu segment");
    }
    int e = seg_map(s, fd, (size_t)st.st_size, false);
    if (e) {
        close(fd);
        return fail(err, errlen, e, "%s: cannot map the segment: %s", path, strerror(e));
    }
    s->h = (struct seg_header *)s->base;
    s->fd = fd;
    /* The file could shrink between the fstat and the checks: guard first. */
    seg_guard_install();
    seg_guard_register(s);
    char why[200] = "the file shrank while it was checked";
    if (seg_check(s, why, sizeof why) || seg_faulted(s)) {
        seg_close(s);
        return fail(err, errlen, EINVAL, "%s: %s", path, why);
    }
    seg_bind(s, s->h);
    e = seg_attach_static(s, path, err, errlen);
    if (e) {
        seg_close(s);
        return e;
    }
    protect_static(s);
    return 0;
}

void seg_close(struct seg *s)
{
    seg_guard_unregister(s);
    if (s->base)
        munmap(s->base, s->map_size ? s->map_size : s->size);
    if (s->fd >= 0)
        close(s->fd);
    if (s->st_base) {
        munmap(s->st_base, s->st_map_size);
        close(s->st_fd);
    }
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->guard = -1;
}

const char *seg_path(const struct seg *s, uint32_t entry)
{
    if (entry >= s->n_entries)
        return "";
    uint32_t off = s->entries[entry].path_off;
    return off < s->strings_size ? s->strings + off : "";
}

uint32_t seg_lookup(const struct seg *s, const char *path, size_t len)
{
    uint32_t lo = 0, hi = s->n_entries;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        /* seg_path bounds the offset; the string ends by the guard page at worst */
        const char *p = seg_path(s, mid);
        int c = strncmp(p, path, len);
        if (c == 0 && p[len] != 0)
            c = 1;
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return SEG_NONE;
}

/* --- slots (segment.h "Slots") ------------------------------------------------------------- */

static void load_value(const struct seg *s, uint32_t v, struct seg_value *out);

size_t seg_slot_name(const struct seg *s, uint32_t entry, char *buf, size_t cap)
{
    if (cap)
        buf[0] = 0;
    if (entry >= s->n_entries || cap < 2)
        return 0;
    const struct seg_entry *e = &s->entries[entry];
    if (!(e->flags & SEG_F_SLOT) || e->kind != SEG_DIR || e->value >= s->n_values || e->text_off > s->strings_size ||
        e->text_len > s->strings_size - e->text_off)
        return 0;
    struct seg_value v;
    load_value(s, e->value, &v);
    size_t idlen = v.type == SEG_V_TEXT && v.len <= sizeof v.text ? v.len : 0;
    if (!idlen)
        return 0;
    const char *pat = s->strings + e->text_off;
    size_t n = 0, max = cap - 1 < SEG_SLOT_NAME_MAX ? cap - 1 : SEG_SLOT_NAME_MAX;
    for (uint32_t i = 0; i < e->text_len; i++) {
        if (pat[i] != SEG_SLOT_MARK) {
            if (n + 1 > max)
                return buf[0] = 0, 0;
            buf[n++] = pat[i];
            continue;
        }
        if (n + idlen > max)
            return buf[0] = 0, 0;
        memcpy(buf + n, v.text, idlen);
        n += idlen;
    }
    for (size_t i = 0; i < n; i++)
        if (buf[i] == '/' || buf[i] == 0)
            return buf[0] = 0, 0; /* not a name: treat the slot as absent */
    buf[n] = 0;
    return n;
}

static bool slot_absent(const struct seg *s, uint32_t e)
{
    char name[SEG_SLOT_NAME_MAX + 1];
    return (s->entries[e].flags & SEG_F_SLOT) && !seg_slot_name(s, e, name, sizeof name);
}

bool seg_entry_present(const struct seg *s, uint32_t entry)
{
    for (int depth = 0; entry < s->n_entries && depth < 64; depth++) {
        if (slot_absent(s, entry))
            return false;
        uint32_t p = s->entries[entry].parent;
        if (p >= entry) /* a parent always sorts before its child; anything else ends the walk */
            break;
        entry = p;
    }
    return true;
}

/* The slot of directory parent (SEG_F_SLOTS) whose current name is comp: the placeholder path
 * replaces the component in buf (the resolved prefix buf[0..plen) then "/" comp). */
static uint32_t slot_by_name(const struct seg *s, char *buf, size_t plen, size_t *blen, const char *comp, size_t clen)
{
    char name[SEG_SLOT_NAME_MAX + 1];
    for (uint32_t k = 0; k < 100000; k++) {
        char ph[16], digits[12];
        int nd = 0, n = 0;
        uint32_t v = k;
        do
            digits[nd++] = (char)('0' + v % 10);
        while ((v /= 10) && nd < 11);
        ph[n++] = SEG_SLOT_MARK;
        while (nd)
            ph[n++] = digits[--nd];
        if (plen + 1 + (size_t)n + 1 > SEG_PATH_MAX)
            return SEG_NONE;
        char path[SEG_PATH_MAX];
        memcpy(path, buf, plen);
        path[plen] = '/';
        memcpy(path + plen + 1, ph, (size_t)n);
        uint32_t e = seg_lookup(s, path, plen + 1 + (size_t)n);
        if (e == SEG_NONE)
            return SEG_NONE;
        size_t l = seg_slot_name(s, e, name, sizeof name);
        if (l == clen && !memcmp(name, comp, clen)) {
            memcpy(buf + plen + 1, ph, (size_t)n);
            *blen = plen + 1 + (size_t)n;
            return e;
        }
    }
    return SEG_NONE;
}

/* Appends component comp to the resolved prefix buf (which names a directory or is empty). */
static int walk_push(char *buf, size_t *blen, const char *comp, size_t clen)
{
    if (clen == 1 && comp[0] == '.')
        return 0;
    if (clen == 2 && comp[0] == '.' && comp[1] == '.') {
        while (*blen && buf[*blen - 1] != '/')
            (*blen)--;
        if (*blen)
            (*blen)--; /* drop the slash; ".." of the root stays at the root */
        return 0;
    }
    if (*blen + clen + 2 > SEG_PATH_MAX)
        return ENAMETOOLONG;
    if (*blen)
        buf[(*blen)++] = '/';
    memcpy(buf + *blen, comp, clen);
    *blen += clen;
    return 0;
}

int seg_resolve(const struct seg *s, const char *path, size_t len, bool follow, uint32_t *entry)
{
    uint32_t last;
    return seg_resolve_ex(s, path, len, follow, entry, &last);
}

int seg_resolve_ex(const struct seg *s, const char *path, size_t len, bool follow, uint32_t *entry,
                   uint32_t *last_dir)
{
    *last_dir = SEG_NONE;
    /* pending: what is left to walk; done: the resolved prefix. Both fit SEG_PATH_MAX. */
    char pending[SEG_PATH_MAX], done[SEG_PATH_MAX];
    size_t plen, dlen = 0, pos = 0;
    int hops = 0;
    if (len >= SEG_PATH_MAX)
        return ENAMETOOLONG;
    memcpy(pending, path, len);
    plen = len;
    while (pos < plen) {
        while (pos < plen && pending[pos] == '/')
            pos++;
        if (pos >= plen)
            break;
        size_t start = pos;
        while (pos < plen && pending[pos] != '/')
            pos++;
        size_t clen = pos - start;
        bool dots = (clen == 1 && pending[start] == '.') ||
                    (clen == 2 && pending[start] == '.' && pending[start + 1] == '.');
        int rc = walk_push(done, &dlen, pending + start, clen);
        if (rc)
            return rc;
        if (dots)
            continue;
        uint32_t e = seg_lookup(s, done, dlen);
        if (e == SEG_NONE && dlen > clen) { /* a slot's current name? */
            size_t prefix = dlen - clen - 1;
            uint32_t pe = seg_lookup(s, done, prefix);
            if (pe != SEG_NONE && (s->entries[pe].flags & SEG_F_SLOTS))
                e = slot_by_name(s, done, prefix, &dlen, pending + start, clen);
        }
        if (e == SEG_NONE || slot_absent(s, e))
            return ENOENT;
        const struct seg_entry *en = &s->entries[e];
        uint8_t kind = en->kind;
        if (kind == SEG_DIR)
            *last_dir = e;
        if (en->flags & SEG_F_ABSENT)
            return ENOENT;
        bool last = true;
        for (size_t q = pos; q < plen; q++)
            if (pending[q] != '/')
                last = false;
        if (kind == SEG_LINK && (!last || follow)) {
            if (++hops > 40)
                return ELOOP;
            /* Replace the link by its target (relative to the link's directory), then walk on. */
            uint32_t toff = en->text_off, tlen = en->text_len;
            if (toff > s->strings_size || tlen > s->strings_size - toff)
                return ENOENT; /* a damaged entry */
            const char *t = s->strings + toff;
            size_t tl = tlen, rest = plen - pos;
            if (tl + 1 + rest >= SEG_PATH_MAX)
                return ENAMETOOLONG;
            memmove(pending + tl + 1, pending + pos, rest);
            memcpy(pending, t, tl);
            pending[tl] = '/';
            plen = tl + 1 + rest;
            pos = 0;
            while (dlen && done[dlen - 1] != '/')
                dlen--; /* back to the link's directory */
            if (dlen)
                dlen--;
            if (tl && pending[0] == '/')
                return ENOENT; /* absolute targets leave the node's tree */
            continue;
        }
        if (!last && kind != SEG_DIR)
            return ENOTDIR;
    }
    if (!dlen)
        return ENOENT; /* the node root itself is not an entry */
    uint32_t e = seg_lookup(s, done, dlen);
    if (e == SEG_NONE || (s->entries[e].flags & SEG_F_ABSENT) || slot_absent(s, e))
        return ENOENT;
    *entry = e;
    return 0;
}

/* One whole snapshot value (segment.h "Snapshot publication": the journal's when it names v,
 * else the copy's, under the journal's sequence). A sequence that never settles (an agent
 * storing into it) gives up after SEG_LATCH_TRIES tries with the last value read. */
static void load_value(const struct seg *s, uint32_t v, struct seg_value *out)
{
    const struct seg_journal *j = s->journal;
    for (int tries = 0; tries < SEG_LATCH_TRIES; tries++) {
        uint64_t q = atomic_load_explicit(&j->seq, memory_order_acquire);
        memcpy(out, seg_value_at(s, v), sizeof *out);
        uint32_t jv = j->value;
        if (q && !(q & 1) && jv == v)
            memcpy(out, &j->v, sizeof *out);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&j->seq, memory_order_relaxed) == q)
            return;
    }
}

/* No value of the copy is being written, or the one that is equals the journal's whole value:
 * journal sequence q (even and non-zero: the journal is whole; odd: it is being written, and
 * then no value of the copy is). */
static bool copy_whole(const struct seg *s, uint64_t q)
{
    const struct seg_journal *j = s->journal;
    uint32_t jv = j->value;
    return !q || (q & 1) || jv >= s->n_values || !memcmp(&s->values[jv], &j->v, sizeof j->v);
}

bool seg_values_read(const struct seg *s, void (*read)(const struct seg_value *values, void *ctx), void *ctx)
{
    /* A publication under way: wait for its end (an engine descheduled in the middle of this
     * node) on the reader's clock, unless this reader already waited this generation out. */
    uint64_t g = atomic_load_explicit(&s->h->gen, memory_order_acquire);
    _Atomic uint64_t *stuck = &((struct seg *)s)->stuck_gen; /* the reader's own memo */
    if (atomic_load_explicit(stuck, memory_order_relaxed) != g) {
        int64_t until = seg_now_ns() + SEG_PUBLISH_WAIT_NS;
        for (int spins = 0;; spins++) {
            g = atomic_load_explicit(&s->h->gen, memory_order_acquire);
            if (!(g & 1)) {
                read(s->values, ctx);
                atomic_thread_fence(memory_order_acquire);
                if (atomic_load_explicit(&s->h->gen, memory_order_relaxed) == g)
                    return true;
            }
            if (spins % 64 == 63 && seg_now_ns() > until)
                break;
        }
        atomic_store_explicit(stuck, atomic_load_explicit(&s->h->gen, memory_order_relaxed), memory_order_relaxed);
    }
    const struct seg_journal *j = s->journal;
    for (int tries = 0; tries < SEG_LATCH_TRIES; tries++) {
        uint64_t q = atomic_load_explicit(&j->seq, memory_order_acquire);
        if (!copy_whole(s, q))
            continue; /* the engine is inside a value's store (or was killed there) */
        read(s->values, ctx);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&j->seq, memory_order_relaxed) == q)
            return true;
    }
    read(s->values, ctx);
    return false;
}

bool seg_values_torn(const struct seg *s)
{
    if (!(atomic_load_explicit(&s->h->gen, memory_order_acquire) & 1))
        return false; /* no publication under way: every value is whole */
    for (int tries = 0; tries < SEG_LATCH_TRIES; tries++) {
        uint64_t q = atomic_load_explicit(&s->journal->seq, memory_order_acquire);
        if (copy_whole(s, q))
            return false;
    }
    return true;
}

bool seg_quiet_own(const struct seg *s, uint32_t v)
{
    uint32_t i = v - s->first_quiet;
    return atomic_load_explicit(&s->qbits[i / 64], memory_order_acquire) >> (i % 64) & 1;
}

const struct seg_value *seg_value_at(const struct seg *s, uint32_t v)
{
    return v < s->first_quiet || !s->quiet || seg_quiet_own(s, v) ? &s->values[v] : &s->quiet[v - s->first_quiet];
}

/* Marks quiet value v as the node's own (segment.h "Quiet values"): after its store, released. */
static void quiet_mark(struct seg *s, uint32_t v)
{
    if (v < s->first_quiet)
        return;
    uint32_t i = v - s->first_quiet;
    atomic_fetch_or_explicit(&s->qbits[i / 64], UINT64_C(1) << (i % 64), memory_order_release);
}

bool seg_value_load(const struct seg *s, uint32_t v, struct seg_value *out)
{
    if (v >= s->n_values)
        return false;
    load_value(s, v, out);
    return true;
}

static void raise_hwm(struct seg *s, uint32_t v, uint64_t raw)
{
    uint64_t cur = atomic_load_explicit(&s->hwm[v], memory_order_relaxed);
    while (cur < raw && !atomic_compare_exchange_weak_explicit(&s->hwm[v], &cur, raw, memory_order_release,
                                                               memory_order_relaxed))
        ;
}

static size_t put_u64(char *buf, uint64_t v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    buf[n] = '\n';
    return n + 1;
}

/* Counter value v at now_ns: its total (start_uj + acc) and its register count before the wrap
 * in *raw. Unsigned arithmetic throughout: a damaged value gives a wrong number, never a trap. */
static uint64_t counter_eval(const struct seg_value *v, int64_t substep_ns, int64_t now_ns, uint64_t *raw)
{
    uint64_t n = 0;
    if (now_ns > v->ctr.t0_ns && substep_ns > 0)
        n = ((uint64_t)now_ns - (uint64_t)v->ctr.t0_ns) / (uint64_t)substep_ns;
    if (n > v->nsub)
        n = v->nsub;
    unsigned __int128 nj = (unsigned __int128)v->ctr.power_uw * n + v->ctr.rem_nj;
    uint64_t acc = v->ctr.acc_uj + (uint64_t)(nj / 1000);
    uint64_t rem = (uint64_t)(nj % 1000);
    if (raw) {
        uint64_t unit = v->ctr.unit_nj ? v->ctr.unit_nj : 1000;
        uint64_t seed = (uint64_t)v->ctr.seed_raw_hi << 32 | v->ctr.seed_raw;
        *raw = seed + (uint64_t)(((unsigned __int128)acc * 1000 + rem) / unit);
    }
    return v->ctr.start_uj + acc;
}

uint64_t seg_counter_total(const struct seg_value *v, int64_t substep_ns, int64_t now_ns, uint64_t *shown)
{
    uint64_t raw;
    uint64_t total = counter_eval(v, substep_ns, now_ns, shown ? &raw : NULL);
    if (shown) {
        uint64_t unit = v->ctr.unit_nj ? v->ctr.unit_nj : 1000;
        uint64_t wrapped = v->wrap_bits >= 64 ? raw : raw & ((UINT64_C(1) << v->wrap_bits) - 1);
        *shown = v->shows_count ? wrapped : (uint64_t)((unsigned __int128)wrapped * unit / 1000);
    }
    return total;
}

uint64_t seg_counter_raw(struct seg *s, uint32_t vi, int64_t now_ns, uint8_t *wrap_bits, uint32_t *unit_nj)
{
    struct seg_value v;
    if (vi >= s->n_values)
        return 0;
    load_value(s, vi, &v);
    if (v.type != SEG_V_COUNTER)
        return 0;
    if (wrap_bits)
        *wrap_bits = v.wrap_bits;
    if (unit_nj)
        *unit_nj = v.ctr.unit_nj ? v.ctr.unit_nj : 1000;
    uint64_t raw;
    raise_hwm(s, vi, counter_eval(&v, s->substep_ns, now_ns, &raw));
    return raw;
}

uint64_t seg_resume_total(bool have_ledger, uint64_t ledger_uj, const struct seg_value *visible, uint64_t hwm,
                          int64_t substep_ns, int64_t tick_ns)
{
    uint64_t base = have_ledger ? ledger_uj : 0;
    if (base > SEG_TOTAL_MAX)
        base = SEG_TOTAL_MAX;
    if (tick_ns <= 0)
        tick_ns = 1000000000;
    if (substep_ns <= 0)
        substep_ns = 1000000;
    /* one step: the most any zone can draw over three ticks (uW * ns / 1e9 = uJ) */
    uint64_t step = (uint64_t)((unsigned __int128)SEG_POWER_MAX_UW * 3 * (uint64_t)tick_ns / 1000000000u);
    uint64_t total;
    uint64_t max_nsub = 2 * (uint64_t)(tick_ns / substep_ns) + 2;
    bool plausible = visible && visible->type == SEG_V_COUNTER && visible->ctr.power_uw <= SEG_POWER_MAX_UW &&
                     visible->nsub <= max_nsub;
    uint64_t h = plausible ? seg_counter_total(visible, substep_ns, INT64_MAX, NULL) : 0;
    if (plausible && h >= base && h - base <= step)
        total = h; /* >= every read of that snapshot, and >= any true high-water mark */
    else
        total = base + (hwm > base ? (hwm - base < step ? hwm - base : step) : 0);
    return total < SEG_TOTAL_MAX ? total : SEG_TOTAL_MAX;
}

/* The decimal number a text starts with (0 when none; saturated, never wrapping). */
static uint64_t text_u64(const char *t, size_t n, bool *ok)
{
    uint64_t v = 0;
    size_t i = 0;
    for (; i < n && t[i] >= '0' && t[i] <= '9'; i++)
        v = v > (UINT64_MAX - 9) / 10 ? UINT64_MAX : v * 10 + (uint64_t)(t[i] - '0');
    *ok = i > 0;
    return v;
}

static const char *read_entry(struct seg *s, uint32_t entry, int64_t now_ns, char *tmp, size_t *len, int hops);

/* A SEG_F_TURBO file's text ("Turbo" in segment.h): param a or b by its switch. */
static size_t turbo_text(struct seg *s, uint32_t param, int64_t now_ns, char *tmp)
{
    if (param >= s->n_params)
        return 0;
    struct seg_param p = s->params[param]; /* one copy: the static file is shared */
    char sw[SEG_TEXT_MAX];
    size_t n = 0;
    const char *t = p.related < s->n_entries ? read_entry(s, p.related, now_ns, sw, &n, 0) : NULL;
    bool num;
    uint64_t v = t ? text_u64(t, n, &num) : 0;
    bool off = t && num && (p.c ? v != 0 : v == 0);
    return put_u64(tmp, (uint64_t)(off ? p.b : p.a));
}

/* A SEG_F_CEIL file's text lowered to what its param's related entry shows, if that is less. */
static size_t ceil_text(struct seg *s, uint32_t param, int64_t now_ns, char *tmp, size_t len, int hops)
{
    if (param >= s->n_params)
        return len;
    uint32_t rel = s->params[param].related;
    char ct[SEG_TEXT_MAX];
    size_t cn = 0;
    const char *c = rel < s->n_entries ? read_entry(s, rel, now_ns, ct, &cn, hops - 1) : NULL;
    bool own_ok, ceil_ok;
    uint64_t own = text_u64(tmp, len, &own_ok), cap = c ? text_u64(c, cn, &ceil_ok) : 0;
    return c && own_ok && ceil_ok && cap < own ? put_u64(tmp, cap) : len;
}

const char *seg_read(struct seg *s, uint32_t entry, int64_t now_ns, char *tmp, size_t *len)
{
    return read_entry(s, entry, now_ns, tmp, len, SEG_CEIL_HOPS);
}

const char *seg_read_stored(struct seg *s, uint32_t entry, int64_t now_ns, char *tmp, size_t *len)
{
    return read_entry(s, entry, now_ns, tmp, len, 0);
}

/* seg_read with at most hops SEG_F_CEIL caps followed (0: none). */
static const char *read_entry(struct seg *s, uint32_t entry, int64_t now_ns, char *tmp, size_t *len, int hops)
{
    uint64_t faults = atomic_load_explicit(&guard_faults, memory_order_relaxed);
    if (faults && seg_faulted(s) && seg_revalidate(s)) {
        *len = 0;
        return NULL;
    }
    *len = 0;
    if (entry >= s->n_entries)
        return tmp;
    /* Each field of the (shared) entry read once, and bounded before it is used. */
    const struct seg_entry *e = &s->entries[entry];
    uint8_t kind = e->kind, cls = e->cls, flags = e->flags;
    uint32_t value = e->value, slot = e->slot, toff = e->text_off, tlen = e->text_len, param = e->param;
    const char *out = tmp;
    if (kind != SEG_FILE) {
        /* nothing to show */
    } else if (cls == SEG_S && (flags & SEG_F_TURBO)) {
        *len = turbo_text(s, param, now_ns, tmp);
    } else if (cls == SEG_R || value == SEG_NONE) {
        if (toff <= s->strings_size && tlen <= s->strings_size - toff) {
            *len = tlen;
            out = s->strings + toff;
        }
    } else if (value < s->n_values) {
        struct seg_value v;
        load_value(s, value, &v);
        if (v.type == SEG_V_COUNTER) {
            uint64_t shown;
            raise_hwm(s, value, seg_counter_total(&v, s->substep_ns, now_ns, &shown));
            *len = put_u64(tmp, shown);
        } else if (cls == SEG_A && slot < s->n_slots) {
            uint64_t seq;
            size_t n;
            char text[SEG_TEXT_MAX];
            if (seg_slot_load(s, slot, &seq, text, &n) && seq > v.a.applied) {
                memcpy(tmp, text, n);
                *len = n;
            } else {
                size_t l = v.len < sizeof v.a.text ? v.len : sizeof v.a.text;
                memcpy(tmp, v.a.text, l);
                *len = l;
            }
            if ((flags & SEG_F_CEIL) && hops > 0)
                *len = ceil_text(s, param, now_ns, tmp, *len, hops);
        } else {
            size_t l = v.len < SEG_TEXT_MAX ? v.len : SEG_TEXT_MAX;
            memcpy(tmp, v.text, l);
            *len = l;
        }
    }
    /* A page lost while we read it: what we read may be the guard's zeros. */
    if (atomic_load_explicit(&guard_faults, memory_order_acquire) != faults && seg_faulted(s)) {
        *len = 0;
        return NULL;
    }
    return out;
}

bool seg_slot_load(const struct seg *s, uint32_t slot, uint64_t *seq, char *text, size_t *len)
{
    if (slot >= s->n_slots)
        return false;
    if (!(atomic_load_explicit(&s->sbits[slot / 64], memory_order_acquire) >> (slot % 64) & 1))
        return false; /* never stored into: its page may be a hole, and a read would allocate it */
    struct seg_slot *sl = &s->slots[slot];
    for (int tries = 0; tries < 1000; tries++) {
        uint64_t a = atomic_load_explicit(&sl->seq, memory_order_acquire);
        if (a == 0)
            return false;
        if (a & 1)
            continue;
        uint32_t n = sl->len;
        if (n > SEG_TEXT_MAX)
            n = SEG_TEXT_MAX; /* untrusted: a writer may have put anything here */
        memcpy(text, sl->text, n);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&sl->seq, memory_order_relaxed) == a) {
            *seq = a;
            *len = n;
            return true;
        }
    }
    return false;
}

void seg_slot_store(struct seg *s, uint32_t entry, const char *text, size_t len, int64_t now_ns)
{
    if (entry >= s->n_entries)
        return;
    uint32_t slot = s->entries[entry].slot;
    if (slot >= s->n_slots)
        return;
    struct seg_slot *sl = &s->slots[slot];
    if (len > SEG_TEXT_MAX)
        len = SEG_TEXT_MAX;
    /* the slot's bit before its store completes: a reader that sees the store sees the bit */
    atomic_fetch_or_explicit(&s->sbits[slot / 64], UINT64_C(1) << (slot % 64), memory_order_seq_cst);
    /* Claim: even -> odd. A writer that died mid-store leaves the slot odd; after a bounded
     * wait the next writer takes it over, so one dead agent cannot wedge an attribute. A slot
     * that never settles (something keeps storing into it) is given up on, also counted. */
    uint64_t cur = atomic_load_explicit(&sl->seq, memory_order_relaxed);
    for (int spins = 0;; spins++) {
        if (spins > 200000) {
            atomic_fetch_add_explicit(&s->h->writes_refused_unsafely, 1, memory_order_relaxed);
            return;
        }
        if (!(cur & 1)) {
            if (atomic_compare_exchange_weak_explicit(&sl->seq, &cur, cur + 1, memory_order_acquire,
                                                      memory_order_relaxed))
                break;
            continue;
        }
        if (spins > 100000) {
            if (atomic_compare_exchange_weak_explicit(&sl->seq, &cur, cur + 2, memory_order_acquire,
                                                      memory_order_relaxed)) {
                atomic_fetch_add_explicit(&s->h->writes_refused_unsafely, 1, memory_order_relaxed);
                break;
            }
            continue;
        }
        cur = atomic_load_explicit(&sl->seq, memory_order_relaxed);
    }
    memcpy(sl->text, text, len);
    sl->len = (uint32_t)len;
    sl->time_ns = now_ns;
    atomic_fetch_add_explicit(&sl->seq, 1, memory_order_release);
    atomic_fetch_add_explicit(&s->h->slot_writes, 1, memory_order_release);
}

void seg_event_push(struct seg *s, uint32_t entry, int err, const char *text, size_t len, int64_t now_ns, int pid)
{
    uint64_t idx = atomic_fetch_add_explicit(&s->h->ring_head, 1, memory_order_relaxed);
    struct seg_event *ev = &s->ring[idx & (s->ring_cap - 1)];
    atomic_store_explicit(&ev->seq, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    if (len > SEG_TEXT_MAX)
        len = SEG_TEXT_MAX;
    ev->time_ns = now_ns;
    ev->entry = entry;
    ev->err = err;
    ev->len = (uint32_t)len;
    ev->pid = pid;
    memcpy(ev->text, text, len);
    atomic_store_explicit(&ev->seq, idx + 1, memory_order_release);
}

bool seg_event_pop(struct seg *s, uint64_t *tail, struct seg_event *out, uint64_t *lost)
{
    uint64_t head = atomic_load_explicit(&s->h->ring_head, memory_order_acquire);
    uint64_t cap = s->ring_cap;
    if (head < *tail)
        *tail = head; /* the ring was reset (or damaged): start over from its head */
    if (head - *tail > cap) {
        *lost += head - cap - *tail;
        *tail = head - cap;
    }
    while (*tail < head) {
        struct seg_event *ev = &s->ring[*tail & (cap - 1)];
        uint64_t seq = atomic_load_explicit(&ev->seq, memory_order_acquire);
        if (seq == *tail + 1) {
            memcpy(out, ev, sizeof *out);
            atomic_thread_fence(memory_order_acquire);
            if (atomic_load_explicit(&ev->seq, memory_order_relaxed) != seq) {
                (*lost)++; /* overwritten while copying */
                (*tail)++;
                continue;
            }
            if (out->len > SEG_TEXT_MAX)
                out->len = SEG_TEXT_MAX;
            (*tail)++;
            return true;
        }
        if (seq > *tail + 1) { /* lapped by producers */
            (*lost)++;
            (*tail)++;
            continue;
        }
        if (head - *tail > 64) { /* a producer died between claim and completion: skip it */
            (*lost)++;
            (*tail)++;
            continue;
        }
        return false; /* claimed but not complete yet: take it next time */
    }
    return false;
}

/* The engine's publication (segment.h "Snapshot publication"): its own generation and journal
 * sequence (pub_gen, pub_jseq: never read back from the file, where an agent could change them,
 * but once by seg_journal_heal), stored into the file for readers. Each store that starts a
 * section readers check is followed by a fence before the section's stores, and each section
 * is followed by a fence before the store that ends it. */
void seg_publish_begin(struct seg *s)
{
    s->pub_gen = (s->pub_gen & ~UINT64_C(1)) + 1; /* odd: a publication under way */
    atomic_store_explicit(&s->h->gen, s->pub_gen, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
}

void seg_publish_value(struct seg *s, uint32_t v, const struct seg_value *val)
{
    if (v >= s->n_values)
        return;
    struct seg_journal *j = s->journal;
    s->pub_jseq = (s->pub_jseq & ~UINT64_C(1)) + 1; /* odd: the journal is being written */
    atomic_store_explicit(&j->seq, s->pub_jseq, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    j->value = v;
    memcpy(&j->v, val, sizeof *val);
    atomic_thread_fence(memory_order_release);
    s->pub_jseq++; /* even: the journal holds v whole, and values[v] is being written */
    atomic_store_explicit(&j->seq, s->pub_jseq, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    memcpy(&s->values[v], val, sizeof *val);
    atomic_thread_fence(memory_order_release);
    quiet_mark(s, v); /* a quiet value's copy is whole: readers may take it now */
}

void seg_publish_end(struct seg *s, int64_t now_ns)
{
    atomic_thread_fence(memory_order_release);
    s->pub_gen++; /* even: the publication is whole */
    atomic_store_explicit(&s->h->gen, s->pub_gen, memory_order_release);
    atomic_store_explicit(&s->h->heartbeat_ns, now_ns, memory_order_release);
}

void seg_journal_heal(struct seg *s, const struct seg_value *tmpl)
{
    struct seg_journal *j = s->journal;
    uint64_t q = atomic_load_explicit(&j->seq, memory_order_acquire);
    uint32_t v = j->value;
    s->pub_jseq = (q + 1) & ~UINT64_C(1); /* the next sequence is past the file's, odd or even */
    if (q && !(q & 1) && v < s->n_values && j->v.type == tmpl[v].type) {
        if (memcmp(&s->values[v], &j->v, sizeof j->v))
            memcpy(&s->values[v], &j->v, sizeof j->v);
        atomic_thread_fence(memory_order_release);
        quiet_mark(s, v); /* killed after a quiet value's store and before its bit */
    }
}

static uint64_t ledger_check(uint64_t seq, int64_t wall_ns, const uint64_t *total, uint32_t n)
{
    uint64_t h = (1469598103934665603ULL ^ seq) * 1099511628211ULL;
    h = (h ^ (uint64_t)wall_ns) * 1099511628211ULL;
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ total[i]) * 1099511628211ULL;
    return h;
}

void seg_ledger_write(struct seg *s, uint64_t seq, const uint64_t *total_uj, int64_t wall_ns)
{
    struct seg_ledger *l = s->ledger[seq & 1];
    l->seq = 0; /* invalid while being written */
    atomic_thread_fence(memory_order_release);
    l->wall_ns = wall_ns;
    memcpy(l->total_uj, total_uj, sizeof *total_uj * s->n_counters);
    l->check = ledger_check(seq, wall_ns, total_uj, s->n_counters);
    atomic_thread_fence(memory_order_release);
    l->seq = seq;
}

bool seg_ledger_read(const struct seg *s, uint64_t *seq, uint64_t *total_uj)
{
    /* The newer copy first; each is copied out, then checked: what is returned is what was
     * checked, whatever an agent stores into the ledger meanwhile. */
    uint64_t q0 = s->ledger[0]->seq, q1 = s->ledger[1]->seq;
    int order[2] = {q1 > q0 ? 1 : 0, q1 > q0 ? 0 : 1};
    for (int k = 0; k < 2; k++) {
        const struct seg_ledger *l = s->ledger[order[k]];
        uint64_t q = l->seq, check = l->check;
        int64_t wall = l->wall_ns;
        if (!q)
            continue;
        memcpy(total_uj, l->total_uj, sizeof *total_uj * s->n_counters);
        if (check == ledger_check(q, wall, total_uj, s->n_counters)) {
            *seq = q;
            return true;
        }
    }
    return false;
}
