/* emu: node selection, path translation, metadata and writes; see emu.h.
 * Initialisation runs once (the shim's constructor, or the first wrapper to need it) and is
 * guarded by an atomic state so that any thread may race into it. */
#include "emu.h"

#include "emu_hide.h"
#include "seg_attr.h"
#include "seg_faults.h"
#include "seg_msr.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

static struct seg the_seg;
static _Atomic int state; /* 0 new, 1 initialising, 2 ready, 3 nothing to emulate */
static char cwd[PATH_MAX];
static _Atomic int cwd_known;
static _Atomic int cwd_emulated; /* the tracked cwd is the node's, not the kernel's */

static void say_once(const char *what)
{
    static _Atomic int said;
    if (!atomic_exchange(&said, 1)) {
        /* one write(2): no stdio (we may be inside it) */
        char msg[1200];
        int n = snprintf(msg, sizeof msg, "hwemu-shim: %s\n", what);
        if (n > 0 && write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1) < 0)
            return;
    }
}

/* The kernel's working directory ("" when unknown), for the start-up checks below. */
static const char *getcwd_now(void)
{
    static char buf[PATH_MAX];
    return getcwd(buf, sizeof buf) ? buf : "";
}

/* Is dir, an emulated working directory handed down, still where this process stands? The
 * kernel's cwd did not move when the parent went there (the node's directory may not exist on
 * the host), so it is taken unless the kernel's cwd is that very directory of the host (then
 * getcwd says the same) or the name is not a directory of the node. */
static bool cwd_candidate(const char *dir, const char *kernel_cwd)
{
    if (!dir || dir[0] != '/' || strlen(dir) >= sizeof cwd)
        return false;
    uint32_t e;
    enum emu_root r;
    if (emu_path(dir, true, &e, &r) || the_seg.entries[e].kind != SEG_DIR)
        return false;
    if (kernel_cwd) /* HWEMU_CWD_BASE: the kernel's cwd when the emulated chdir was made */
        return !strcmp(kernel_cwd, getcwd_now());
    struct stat a, b; /* PWD, as glibc's get_current_dir_name trusts it: only when it is not "." */
    if (syscall(SYS_newfstatat, AT_FDCWD, dir, &a, 0) != 0 || syscall(SYS_newfstatat, AT_FDCWD, ".", &b, 0) != 0)
        return true;
    return a.st_dev != b.st_dev || a.st_ino != b.st_ino;
}

/* The working directory a parent left in an emulated directory: HWEMU_CWD (set by the shim's
 * chdir, inherited by children that pass environ on) when the kernel's cwd is still the one it
 * was made from, else PWD, which shells (dash, bash) export after `cd` from their own variables
 * rather than environ. NULL: the kernel's cwd is the truth. */
static const char *inherited_cwd(void)
{
    const char *h = getenv("HWEMU_CWD"), *base = getenv("HWEMU_CWD_BASE");
    if (h && base && cwd_candidate(h, base))
        return h;
    const char *pwd = getenv("PWD");
    return cwd_candidate(pwd, NULL) ? pwd : NULL;
}

int emu_init(void)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&state, &expected, 1)) {
        while (atomic_load(&state) == 1)
            ; /* another thread is mapping: a few microseconds */
        return atomic_load(&state) == 2 ? 0 : -1;
    }
    const char *node = getenv("HWEMU_NODE");
    char path[PATH_MAX], err[900];
    if (!seg_path_from_env(path, sizeof path)) {
        atomic_store(&state, 3); /* loaded without a node: pass everything through */
        return -1;
    }
    if (seg_open(&the_seg, path, err, sizeof err)) {
        char msg[1100];
        snprintf(msg, sizeof msg, "cannot emulate node %s: %s; is `hwemu serve` running with this root "
                 "(HWEMU_ROOT / SIM_HWEMU_ROOT)? Every file passes through to the host.",
                 node ? node : "(HWEMU_SEGMENT)", err);
        say_once(msg);
        atomic_store(&state, 3);
        return -1;
    }
    int64_t age = seg_now_ns() - atomic_load(&the_seg.h->heartbeat_ns);
    int64_t tick = the_seg.h->tick_ns > 0 ? the_seg.h->tick_ns : 1000000000;
    /* under --time emulated the engine's clock file says whether it runs (docs/time.md): an engine
     * waiting for its agents publishes nothing for as long as they take */
    const char *time_mode = getenv("HWEMU_TIME");
    if (age > 3 * tick + 1000000000LL && !(time_mode && !strcmp(time_mode, "emulated"))) {
        char msg[600];
        snprintf(msg, sizeof msg, "node %s: its engine last published %.0f s ago; the node's values stay as they "
                 "were until `hwemu serve` runs again with this root", the_seg.h->node, (double)age / 1e9);
        say_once(msg);
    }
    /* An emulated working directory (a parent did chdir into the node's tree, where the
     * kernel's cwd could not follow) is handed down in HWEMU_CWD. */
    atomic_store(&state, 2);
    const char *ecwd = inherited_cwd();
    if (ecwd) {
        strcpy(cwd, ecwd);
        atomic_store(&cwd_emulated, 1);
        atomic_store(&cwd_known, 1);
    } else if (getcwd(cwd, sizeof cwd)) {
        atomic_store(&cwd_known, 1);
    }
    return 0;
}

struct seg *emu_seg(void)
{
    int st = atomic_load_explicit(&state, memory_order_acquire);
    if (st == 2)
        return &the_seg;
    if (st == 0 && emu_init() == 0)
        return &the_seg;
    return NULL;
}

bool emu_cwd_emulated(void)
{
    return atomic_load_explicit(&cwd_emulated, memory_order_relaxed) && atomic_load(&cwd_known);
}

void emu_set_cwd(const char *abs, bool emulated)
{
    atomic_store(&cwd_known, 0);
    atomic_store(&cwd_emulated, emulated);
    size_t n = strlen(abs);
    if (n < sizeof cwd) {
        memcpy(cwd, abs, n + 1);
        atomic_store(&cwd_known, 1);
    }
}

/* Does path start with prefix as whole components? Returns what follows ("" or "/..."). */
static const char *under(const char *path, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(path, prefix, n) || (path[n] && path[n] != '/'))
        return NULL;
    return path + n;
}

const char *emu_absolute(const char *path, char *buf, size_t len)
{
    if (path[0] == '/')
        return path;
    if (!atomic_load(&cwd_known))
        return NULL;
    int n = snprintf(buf, len, "%s/%s", cwd, path);
    return n > 0 && (size_t)n < len ? buf : NULL;
}

bool emu_owned(const struct seg *s, uint32_t e)
{
    /* A parent always sorts before its child, so the walk up ends whatever the root's parent
     * index is. */
    while (e < s->n_entries) {
        if (s->entries[e].flags & SEG_F_OWNED)
            return true;
        uint32_t p = s->entries[e].parent;
        if (p >= e)
            break;
        e = p;
    }
    return false;
}

static int resolve_in(struct seg *s, const char *rel, size_t len, bool follow, bool owned_root, uint32_t *entry)
{
    uint32_t last;
    int rc = seg_resolve_ex(s, rel, len, follow, entry, &last);
    if (rc == ENOENT && !owned_root)
        /* Under a directory the node owns (at any depth above), a missing name is missing;
         * anywhere else it is the host's path. */
        return last != SEG_NONE && emu_owned(s, last) ? rc : EMU_PASS;
    return rc;
}

/* A per-process cache of resolved absolute paths: agents read the same few files again and
 * again, and a walk through the tree costs a binary search per component. Each slot is
 * guarded by its own sequence (odd while written), so readers on any thread, or in a signal
 * handler, never block and never take a torn slot. */
#define CACHE_SLOTS 512
#define CACHE_PATH 200
struct cache_slot {
    _Atomic uint32_t seq;
    uint32_t entry;
    uint8_t root, follow;
    uint16_t len;
    char path[CACHE_PATH];
};
static struct cache_slot cache[CACHE_SLOTS];

static uint32_t path_hash(const char *p, size_t n, bool follow)
{
    uint32_t h = 2166136261u ^ (follow ? 1u : 0u);
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 16777619u;
    return h;
}

static bool cache_get(const char *p, size_t n, bool follow, uint32_t *entry, enum emu_root *root)
{
    struct cache_slot *c = &cache[path_hash(p, n, follow) % CACHE_SLOTS];
    uint32_t s1 = atomic_load_explicit(&c->seq, memory_order_acquire);
    if ((s1 & 1) || c->len != n || c->follow != follow || memcmp(c->path, p, n))
        return false;
    uint32_t e = c->entry;
    enum emu_root r = (enum emu_root)c->root;
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&c->seq, memory_order_relaxed) != s1)
        return false;
    *entry = e;
    *root = r;
    return true;
}

static void cache_put(const char *p, size_t n, bool follow, uint32_t entry, enum emu_root root)
{
    if (n > CACHE_PATH)
        return;
    struct cache_slot *c = &cache[path_hash(p, n, follow) % CACHE_SLOTS];
    uint32_t s1 = atomic_load_explicit(&c->seq, memory_order_relaxed);
    if ((s1 & 1) || !atomic_compare_exchange_strong(&c->seq, &s1, s1 + 1))
        return; /* another writer has it: skip, it is only a cache */
    memcpy(c->path, p, n);
    c->len = (uint16_t)n;
    c->follow = follow;
    c->entry = entry;
    c->root = (uint8_t)root;
    atomic_store_explicit(&c->seq, s1 + 2, memory_order_release);
}

static int emu_path_uncached(const char *path, bool follow, uint32_t *entry, enum emu_root *root);

/* Is e a slot directory or under one (segment.h "Slots")? */
static bool under_slot(const struct seg *s, uint32_t e)
{
    for (int depth = 0; s && e < s->n_entries && depth < 64; depth++) {
        if (s->entries[e].flags & SEG_F_SLOT)
            return true;
        uint32_t p = s->entries[e].parent;
        if (p >= e)
            break;
        e = p;
    }
    return false;
}

/* The node-relative path of entry as agents name it: each slot placeholder replaced by the
 * slot's current name (an absent slot keeps its placeholder: the path no longer exists). */
static const char *agent_rel(const struct seg *s, uint32_t entry, char *buf, size_t cap)
{
    const char *p = seg_path(s, entry);
    if (!strchr(p, SEG_SLOT_MARK))
        return p;
    size_t o = 0;
    for (const char *c = p; *c;) {
        const char *end = strchr(c, '/');
        size_t clen = end ? (size_t)(end - c) : strlen(c);
        const char *comp = c;
        char name[SEG_SLOT_NAME_MAX + 1];
        size_t nlen = clen;
        if (clen && c[0] == SEG_SLOT_MARK) {
            uint32_t se = seg_lookup(s, p, (size_t)(c - p) + clen);
            size_t l = se == SEG_NONE ? 0 : seg_slot_name(s, se, name, sizeof name);
            if (l)
                comp = name, nlen = l;
        }
        if (o + nlen + 2 > cap)
            return p;
        if (o)
            buf[o++] = '/';
        memcpy(buf + o, comp, nlen);
        o += nlen;
        c = end ? end + 1 : c + clen;
    }
    buf[o] = 0;
    return buf;
}

int emu_path(const char *path, bool follow, uint32_t *entry, enum emu_root *root)
{
    if (!path)
        return EMU_PASS;
    if (path[0] == '/' && !(path[1] == 's' || path[1] == 'h' || path[1] == 'p' || path[1] == 'd'))
        return emu_lib_hidden(emu_seg(), path) ? ENOENT : EMU_PASS; /* a driver library the node lacks */
    size_t n = strlen(path);
    if (path[0] == '/' && cache_get(path, n, follow, entry, root))
        return 0;
    int rc = emu_path_uncached(path, follow, entry, root);
    if (rc == 0 && path[0] == '/' && !under_slot(emu_seg(), *entry))
        cache_put(path, n, follow, *entry, *root); /* a slot's name changes: never cached */
    return rc;
}

/* The node's file for a cgroup's cpuset file name (v1 cpuset.cpus, cpuset.effective_cpus, v2
 * cpuset.cpus.effective, and the same for mems), whatever cgroup directory it is in: the CPUs
 * and memory nodes the process may use, which hwloc (topology-linux.c) and runtimes that size
 * thread pools read. NULL for any other name. */
static const char *cpuset_file(const char *name)
{
    if (!strcmp(name, "cpuset.cpus") || !strcmp(name, "cpuset.effective_cpus") || !strcmp(name, "cpuset.cpus.effective"))
        return "cgroup/cpuset.cpus";
    if (!strcmp(name, "cpuset.mems") || !strcmp(name, "cpuset.effective_mems") || !strcmp(name, "cpuset.mems.effective"))
        return "cgroup/cpuset.mems";
    return NULL;
}

static int emu_path_uncached(const char *path, bool follow, uint32_t *entry, enum emu_root *root)
{
    if (!path)
        return EMU_PASS;
    size_t plen = strlen(path);
    if (plen && path[plen - 1] == '/')
        follow = true; /* "link/" names the directory the link points to */
    /* Cheap rejection first: only /sys, /host-sys, /proc and /dev (or relative names) can be ours. */
    if (path[0] == '/' && !(path[1] == 's' || path[1] == 'h' || path[1] == 'p' || path[1] == 'd'))
        return EMU_PASS;
    struct seg *s = emu_seg();
    if (!s)
        return EMU_PASS;
    char buf[SEG_PATH_MAX + 16], rel[SEG_PATH_MAX];
    const char *abs = emu_absolute(path, buf, sizeof buf);
    if (!abs)
        return EMU_PASS;
    const char *rest;
    if ((rest = under(abs, "/host-sys"))) {
        int n = snprintf(rel, sizeof rel, "sys%s", rest);
        if (n < 0 || (size_t)n >= sizeof rel)
            return ENAMETOOLONG;
        *root = EMU_ROOT_HOST_SYS;
        return resolve_in(s, rel, (size_t)n, follow, true, entry);
    }
    if ((rest = under(abs, "/sys/fs/cgroup")) && rest[0] == '/') {
        const char *file = cpuset_file(strrchr(rest, '/') + 1);
        uint32_t e = file ? seg_lookup(s, file, strlen(file)) : SEG_NONE;
        if (e != SEG_NONE) {
            /* a cgroup the node renders (a job's, docs/interfaces.md "Job cgroups") shows its own
             * cpuset; any other cgroup directory (the process's own) the node's CPUs */
            int n = snprintf(rel, sizeof rel, "sys/fs/cgroup%s", rest);
            uint32_t own;
            *root = EMU_ROOT_SYS;
            *entry = n > 0 && (size_t)n < sizeof rel && seg_resolve(s, rel, (size_t)n, follow, &own) == 0 ? own : e;
            return 0;
        }
    }
    if ((rest = under(abs, "/sys"))) {
        int n = snprintf(rel, sizeof rel, "sys%s", rest);
        if (n < 0 || (size_t)n >= sizeof rel)
            return ENAMETOOLONG;
        *root = EMU_ROOT_SYS;
        return resolve_in(s, rel, (size_t)n, follow, false, entry);
    }
    if ((rest = under(abs, "/dev"))) {
        /* /dev lists the node's devices, then the host's; a name of a device class the nodes
         * emulate (emu_hide.h: nvidia*, dri, kfd, cpu, ipmi*, hsmp) is the node's or absent,
         * whatever the host has; every other name is the host's */
        const char *name = rest + strspn(rest, "/");
        size_t nlen = strcspn(name, "/");
        *root = EMU_ROOT_DEV;
        if (!nlen) {
            uint32_t e = seg_lookup(s, "dev", 3);
            if (e == SEG_NONE)
                return EMU_PASS;
            *entry = e;
            return 0;
        }
        if (!emu_dev_class(name, nlen))
            return EMU_PASS;
        int n = snprintf(rel, sizeof rel, "dev/%s", name);
        if (n < 0 || (size_t)n >= sizeof rel)
            return ENAMETOOLONG;
        return resolve_in(s, rel, (size_t)n, follow, true, entry);
    }
    if (!strcmp(abs, "/proc/cpuinfo")) {
        *root = EMU_ROOT_PROC;
        uint32_t e = seg_lookup(s, "cpuinfo", 7);
        if (e == SEG_NONE)
            return EMU_PASS;
        *entry = e;
        return 0;
    }
    /* /proc itself and what the node renders under proc/: its files (stat, loadavg, uptime,
     * meminfo, modules) and its jobs' processes (proc/<pid>/..., slot directories the node owns:
     * docs/interfaces.md "Jobs as processes"). /proc lists the node's entries, then the host's;
     * every other /proc path (self, the agent's own pid, every host process) is the host's. */
    if ((rest = under(abs, "/proc"))) {
        uint32_t e;
        if (!rest[0] || !rest[strspn(rest, "/")]) {
            if ((e = seg_lookup(s, "proc", 4)) == SEG_NONE)
                return EMU_PASS;
            *root = EMU_ROOT_PROC;
            *entry = e;
            return 0;
        }
        int n = snprintf(rel, sizeof rel, "proc%s", rest);
        if (n < 0 || (size_t)n >= sizeof rel)
            return EMU_PASS;
        *root = EMU_ROOT_PROC;
        return resolve_in(s, rel, (size_t)n, follow, false, entry);
    }
    return emu_lib_hidden(s, abs) ? ENOENT : EMU_PASS;
}

int emu_path_at(uint32_t dir, enum emu_root root, const char *path, bool follow, uint32_t *entry)
{
    struct seg *s = emu_seg();
    if (!s)
        return EMU_PASS;
    if (path[0] == '/') {
        enum emu_root r2;
        return emu_path(path, follow, entry, &r2);
    }
    if (root == EMU_ROOT_PROC || root == EMU_ROOT_DEV) {
        /* /proc's and /dev's names are mapped one by one (cpuinfo is not under proc/ in the
         * segment; /dev's other names are the host's): the agent's path of the same name, as
         * emu_path maps it */
        char abs[SEG_PATH_MAX + 16];
        int k = emu_agent_path(dir, root, abs, sizeof abs);
        if (k < 0 || (size_t)snprintf(abs + k, sizeof abs - (size_t)k, "/%s", path) >= sizeof abs - (size_t)k)
            return ENAMETOOLONG;
        enum emu_root r2;
        return emu_path(abs, follow, entry, &r2);
    }
    size_t plen = strlen(path);
    if (plen && path[plen - 1] == '/')
        follow = true;
    char rel[SEG_PATH_MAX];
    int n = snprintf(rel, sizeof rel, "%s/%s", seg_path(s, dir), path);
    if (n < 0 || (size_t)n >= sizeof rel)
        return ENAMETOOLONG;
    return resolve_in(s, rel, (size_t)n, follow, root != EMU_ROOT_SYS, entry);
}

int emu_agent_path(uint32_t entry, enum emu_root root, char *buf, size_t len)
{
    struct seg *s = emu_seg();
    char named[SEG_PATH_MAX];
    const char *p = s ? agent_rel(s, entry, named, sizeof named) : "";
    int n;
    if (root == EMU_ROOT_PROC && !strcmp(p, "proc"))
        n = snprintf(buf, len, "/proc");
    else if (root == EMU_ROOT_PROC)
        n = snprintf(buf, len, "/proc/%s", strncmp(p, "proc/", 5) ? p : p + 5);
    else if (!strncmp(p, "cgroup/", 7))
        n = snprintf(buf, len, "/sys/fs/cgroup/%s", p + 7); /* the unified hierarchy's root */
    else
        n = snprintf(buf, len, "%s%s", root == EMU_ROOT_HOST_SYS ? "/host-" : "/", p);
    return n >= 0 && (size_t)n < len ? n : -1;
}

static int64_t (*now_fn)(void) = seg_now_ns;

int64_t emu_now_ns(void)
{
    return now_fn();
}

void emu_set_clock(int64_t (*now)(void))
{
    now_fn = now;
}

/* The host's boot time (CLOCK_REALTIME less CLOCK_BOOTTIME, both from the vDSO), in seconds,
 * rounded so every stat agrees: sysfs and procfs inodes are made at or soon after boot. */
static int64_t boot_time_s(void)
{
    static _Atomic int64_t cached;
    int64_t b = atomic_load_explicit(&cached, memory_order_relaxed);
    if (b)
        return b;
    struct timespec rt, up;
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_BOOTTIME, &up);
    b = (int64_t)rt.tv_sec - (int64_t)up.tv_sec;
    atomic_store_explicit(&cached, b, memory_order_relaxed);
    return b;
}

void emu_stat(uint32_t entry, enum emu_root root, struct stat *st)
{
    struct seg *s = emu_seg();
    const struct seg_entry *e = &s->entries[entry];
    memset(st, 0, sizeof *st);
    st->st_atim.tv_sec = st->st_mtim.tv_sec = st->st_ctim.tv_sec = boot_time_s();
    /* sysfs (major 0, an anonymous device) and procfs each look like one file system */
    st->st_dev = root == EMU_ROOT_PROC ? makedev(0, 22) : makedev(0, 21);
    st->st_ino = 0x48570000u + entry;
    st->st_nlink = e->kind == SEG_DIR ? 2 : 1;
    st->st_blksize = 4096;
    st->st_mode = (e->kind == SEG_DIR ? S_IFDIR : e->kind == SEG_LINK ? S_IFLNK : S_IFREG) | e->mode;
    if (root == EMU_ROOT_DEV) { /* character devices on devtmpfs (device numbers: emu.h) */
        st->st_dev = makedev(0, 5);
        if (e->kind == SEG_DIR)
            return;
        st->st_mode = S_IFCHR | e->mode;
        st->st_rdev = e->cls == SEG_M ? makedev(SEG_MSR_MAJOR, (unsigned)seg_msr_cpu(s, entry))
                    : e->cls == SEG_I ? makedev(EMU_IPMI_MAJOR, 0)
                                      : makedev(195, 255);
        return;
    }
    if (e->kind == SEG_FILE)
        st->st_size = root == EMU_ROOT_PROC ? 0 : 4096; /* a sysfs attribute is a page; a seq file 0 */
    if (e->kind == SEG_LINK)
        st->st_size = e->text_len;
}

void emu_stat_to_statx(const struct stat *st, struct statx *sx)
{
    memset(sx, 0, sizeof *sx);
    sx->stx_mask = STATX_BASIC_STATS;
    sx->stx_blksize = (uint32_t)st->st_blksize;
    sx->stx_nlink = (uint32_t)st->st_nlink;
    sx->stx_mode = (uint16_t)st->st_mode;
    sx->stx_ino = st->st_ino;
    sx->stx_size = (uint64_t)st->st_size;
    sx->stx_dev_major = major(st->st_dev);
    sx->stx_dev_minor = minor(st->st_dev);
    sx->stx_rdev_major = major(st->st_rdev);
    sx->stx_rdev_minor = minor(st->st_rdev);
    sx->stx_atime.tv_sec = st->st_atim.tv_sec;
    sx->stx_mtime.tv_sec = st->st_mtim.tv_sec;
    sx->stx_ctime.tv_sec = st->st_ctim.tv_sec;
}

void emu_stat_to64(const struct stat *s, struct stat64 *d)
{
    memset(d, 0, sizeof *d);
    d->st_dev = s->st_dev;
    d->st_ino = s->st_ino;
    d->st_mode = s->st_mode;
    d->st_nlink = s->st_nlink;
    d->st_uid = s->st_uid;
    d->st_gid = s->st_gid;
    d->st_rdev = s->st_rdev;
    d->st_size = s->st_size;
    d->st_blksize = s->st_blksize;
    d->st_blocks = s->st_blocks;
    d->st_atim = s->st_atim;
    d->st_mtim = s->st_mtim;
    d->st_ctim = s->st_ctim;
}

int emu_open_check(uint32_t entry, int flags)
{
    const struct seg_entry *e = &emu_seg()->entries[entry];
    int acc = flags & O_ACCMODE;
    if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
        return EEXIST;
    if (e->kind == SEG_DIR)
        return acc != O_RDONLY ? EISDIR : 0;
    if (flags & O_DIRECTORY)
        return ENOTDIR;
    if ((acc == O_WRONLY || acc == O_RDWR) && !(e->mode & 0222))
        return EACCES;
    if ((acc == O_RDONLY || acc == O_RDWR) && !(e->mode & 0444))
        return EACCES;
    return 0;
}

void emu_statfs(enum emu_root root, struct statfs *sf)
{
    memset(sf, 0, sizeof *sf);
    sf->f_type = root == EMU_ROOT_PROC  ? 0x9fa0     /* PROC_SUPER_MAGIC */
               : root == EMU_ROOT_DEV ? 0x01021994 /* TMPFS_MAGIC: devtmpfs */
                                      : 0x62656572; /* SYSFS_MAGIC */
    sf->f_bsize = 4096;
    sf->f_namelen = 255;
    sf->f_frsize = 4096;
}

int emu_access(uint32_t entry, int mode, unsigned uid)
{
    const struct seg_entry *e = &emu_seg()->entries[entry];
    unsigned bits = e->mode;
    if (uid == 0)
        return (mode & X_OK) && e->kind == SEG_FILE && !(bits & 0111) ? EACCES : 0;
    if (((mode & R_OK) && !(bits & 0004)) || ((mode & W_OK) && !(bits & 0002)) || ((mode & X_OK) && !(bits & 0001)))
        return EACCES;
    return 0;
}

int emu_device_check(uint32_t entry, unsigned euid)
{
    const struct seg_entry *e = &emu_seg()->entries[entry];
    if (e->cls != SEG_M && e->cls != SEG_I)
        return 0;
    return euid == 0 || (e->mode & 0006) ? 0 : EACCES;
}

bool emu_is_msr(uint32_t entry)
{
    return emu_seg()->entries[entry].cls == SEG_M;
}

ssize_t emu_msr_read(uint32_t entry, int flags, int64_t off, size_t n, unsigned char reg[8])
{
    if (off < 0)
        return -EINVAL; /* ksys_pread64's check, before the file is looked at */
    if ((flags & O_PATH) || (flags & O_ACCMODE) == O_WRONLY)
        return -EBADF;
    if (n > EMU_MAX_RW_COUNT)
        n = EMU_MAX_RW_COUNT; /* vfs_read cuts the count before the driver sees it */
    if (n % 8)
        return -EINVAL;
    if (n == 0)
        return 0;
    uint64_t v;
    struct seg_faults f;
    if (seg_faults_read(emu_seg(), &f) && f.off_err > 0)
        return -f.off_err; /* the node lost its power (docs/faults.md power-loss) */
    int err = seg_msr_read(emu_seg(), entry, (uint32_t)off, emu_now_ns(), &v);
    if (err)
        return -err;
    for (int i = 0; i < 8; i++)
        reg[i] = (unsigned char)(v >> (8 * i)); /* u32 lo, u32 hi, little-endian */
    return (ssize_t)n;
}

ssize_t emu_msr_write(uint32_t entry, int64_t off, const void *buf, size_t n, int pid)
{
    if (n % 8)
        return -EINVAL;
    struct seg_faults f;
    if (seg_faults_read(emu_seg(), &f) && f.off_err > 0)
        return -f.off_err;
    const unsigned char *b = buf;
    for (size_t k = 0; k + 8 <= n; k += 8) {
        uint64_t v = 0;
        for (int i = 7; i >= 0; i--)
            v = v << 8 | b[k + (size_t)i];
        int err = seg_msr_write(emu_seg(), entry, (uint32_t)off, v, pid);
        if (err)
            return k ? (ssize_t)k : -err;
    }
    return (ssize_t)n;
}

int emu_write(uint32_t entry, const char *buf, size_t len, int pid)
{
    if (emu_seg()->entries[entry].cls == SEG_I)
        return EINVAL; /* ipmi_devintf has no write: vfs_write refuses a file without one */
    return seg_attr_write(emu_seg(), entry, buf, len, pid);
}

/* How many directories <prefix><digits> the node has (its CPUs, its NUMA nodes). */
static int count_numbered_dirs(const char *prefix)
{
    struct seg *s = emu_seg();
    size_t len = strlen(prefix);
    int n = 0;
    for (uint32_t i = 0; s && i < s->n_entries; i++) {
        const char *p = seg_path(s, i);
        if (s->entries[i].kind == SEG_DIR && !strncmp(p, prefix, len) && p[len] >= '0' && p[len] <= '9' &&
            !strchr(p + len, '/'))
            n++;
    }
    return n;
}

int emu_ncpus(void)
{
    static _Atomic int cached = -1;
    int n = atomic_load(&cached);
    if (n < 0)
        atomic_store(&cached, n = count_numbered_dirs("sys/devices/system/cpu/cpu"));
    return n;
}

int emu_nnodes(void)
{
    static _Atomic int cached = -1;
    int n = atomic_load(&cached);
    if (n < 0)
        atomic_store(&cached, n = count_numbered_dirs("sys/devices/system/node/node"));
    return n;
}
