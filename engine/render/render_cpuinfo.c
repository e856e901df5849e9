/* render_cpuinfo: /proc/cpuinfo text and CPU placement; see render_cpuinfo.h for the format. */
#include "render_cpuinfo.h"
#include "layout.h"
#include "seg_view.h"

#include "profile.h"
#include "ytree.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- topology from the profile's facts ------------------------------------------------------ */

struct cpuinfo_shape {
    const char *verbatim;   /* non-NULL: the CPUs come from this text */
    long long s, c, t;      /* sockets, cores per socket, threads per core */
    bool one_per_vcpu;
    int n;                  /* logical CPUs (without a verbatim text) */
};

/* a·b for positive factors, capped at INT_MAX: nothing indexed by an int can exceed it, and a
 * product that large already means no CPU number reaches it. */
static long long cpuinfo_mul_cap(long long a, long long b)
{
    long long r;
    if (__builtin_mul_overflow(a, b, &r) || r > INT_MAX)
        return INT_MAX;
    return r;
}

static struct cpuinfo_shape cpuinfo_shape_of(const struct yt_node *tree)
{
    struct cpuinfo_shape sh = {0};
    const char *v = prof_str(tree, "cpu.cpuinfoVerbatim", "");
    if (*v) {
        sh.verbatim = v;
        return sh;
    }
    sh.s = prof_int(tree, "cpu.sockets", 0);
    sh.c = prof_int(tree, "cpu.coresPerSocket", 0);
    sh.t = prof_int(tree, "cpu.threadsPerCore", 0);
    sh.one_per_vcpu = prof_bool(tree, "cpu.oneSocketPerVCPU", false);
    if (sh.s >= 1 && sh.c >= 1 && sh.t >= 1)
        sh.n = (int)cpuinfo_mul_cap(cpuinfo_mul_cap(sh.s, sh.c), sh.t);
    return sh;
}

/* Placement of CPU k (0 <= k < sh->n) under socket-major-smt-last. */
static struct cpuinfo_cpu cpuinfo_place(const struct cpuinfo_shape *sh, int k)
{
    struct cpuinfo_cpu cpu = {k, k, 0, 0};
    if (sh->one_per_vcpu)
        return cpu;
    long long sc = cpuinfo_mul_cap(sh->s, sh->c);
    cpu.socket = (int)((k % sc) / sh->c);
    cpu.core = (int)(k % sh->c);
    cpu.thread = (int)(k / sc);
    return cpu;
}

/* --- a verbatim cpuinfo, read as upstream reads it ------------------------------------------ */

struct cpuinfo_block {
    bool ok;                /* has an integer `processor` */
    int id, socket, core;
};

static bool cpuinfo_is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

static void cpuinfo_trim(const char **b, const char **e)
{
    while (*b < *e && cpuinfo_is_space(**b))
        (*b)++;
    while (*e > *b && cpuinfo_is_space((*e)[-1]))
        (*e)--;
}

/* A whole decimal int with an optional sign, nothing else. */
static bool cpuinfo_parse_int(const char *b, const char *e, int *out)
{
    bool neg = false;
    if (b < e && (*b == '+' || *b == '-'))
        neg = *b++ == '-';
    if (b == e)
        return false;
    long long v = 0;
    for (; b < e; b++) {
        if (*b < '0' || *b > '9')
            return false;
        v = v * 10 + (*b - '0');
        if (v > (long long)INT_MAX + 1)
            return false;
    }
    if (neg)
        v = -v;
    if (v > INT_MAX || v < INT_MIN)
        return false;
    *out = (int)v;
    return true;
}

static bool cpuinfo_key_is(const char *b, const char *e, const char *key)
{
    size_t n = strlen(key);
    return (size_t)(e - b) == n && !memcmp(b, key, n);
}

/* One block [b, e): its lines are "key: value" with both sides trimmed; the first line of a
 * key counts. Unreadable `physical id` or `core id` reads as 0. */
static struct cpuinfo_block cpuinfo_parse_block(const char *b, const char *e)
{
    struct cpuinfo_block blk = {0};
    bool seen_proc = false, seen_sock = false, seen_core = false;
    while (b < e) {
        const char *le = memchr(b, '\n', (size_t)(e - b));
        if (!le)
            le = e;
        const char *colon = memchr(b, ':', (size_t)(le - b));
        if (colon) {
            const char *kb = b, *ke = colon, *vb = colon + 1, *ve = le;
            cpuinfo_trim(&kb, &ke);
            cpuinfo_trim(&vb, &ve);
            if (!seen_proc && cpuinfo_key_is(kb, ke, "processor")) {
                seen_proc = true;
                blk.ok = cpuinfo_parse_int(vb, ve, &blk.id);
            } else if (!seen_sock && cpuinfo_key_is(kb, ke, "physical id")) {
                seen_sock = true;
                if (!cpuinfo_parse_int(vb, ve, &blk.socket))
                    blk.socket = 0;
            } else if (!seen_core && cpuinfo_key_is(kb, ke, "core id")) {
                seen_core = true;
                if (!cpuinfo_parse_int(vb, ve, &blk.core))
                    blk.core = 0;
            }
        }
        b = le < e ? le + 1 : e;
    }
    return blk;
}

/* Walks the blocks (the text split at every "\n\n") that name a processor, in text order,
 * until fn returns false. */
static void cpuinfo_each_block(const char *text, bool (*fn)(void *ctx, const struct cpuinfo_block *blk),
                               void *ctx)
{
    const char *p = text;
    for (;;) {
        const char *sep = strstr(p, "\n\n");
        const char *e = sep ? sep : p + strlen(p);
        struct cpuinfo_block blk = cpuinfo_parse_block(p, e);
        if (blk.ok && !fn(ctx, &blk))
            return;
        if (!sep)
            return;
        p = sep + 2;
    }
}

static bool cpuinfo_count_fn(void *ctx, const struct cpuinfo_block *blk)
{
    int *n = ctx;
    if (*n < INT_MAX)
        (*n)++;
    return true;
}

struct cpuinfo_find {
    int want;               /* processor number looked for */
    int pos, at;            /* blocks walked; position of the match, -1 until found */
    int socket, core;
    int earlier;            /* second walk: blocks before `at` on the same (socket, core) */
};

static bool cpuinfo_find_fn(void *ctx, const struct cpuinfo_block *blk)
{
    struct cpuinfo_find *f = ctx;
    if (blk->id == f->want) {
        f->at = f->pos;
        f->socket = blk->socket;
        f->core = blk->core;
        return false;
    }
    f->pos++;
    return true;
}

static bool cpuinfo_earlier_fn(void *ctx, const struct cpuinfo_block *blk)
{
    struct cpuinfo_find *f = ctx;
    if (f->pos++ >= f->at)
        return false;
    if (blk->socket == f->socket && blk->core == f->core)
        f->earlier++;
    return true;
}

struct cpuinfo_collect {
    struct cpuinfo_cpu *cpus;
    int n, cap;
};

static bool cpuinfo_collect_fn(void *ctx, const struct cpuinfo_block *blk)
{
    struct cpuinfo_collect *c = ctx;
    if (c->n >= c->cap)
        return false;
    struct cpuinfo_cpu cpu = {blk->id, blk->socket, blk->core, 0};
    for (int i = 0; i < c->n; i++)
        if (c->cpus[i].socket == cpu.socket && c->cpus[i].core == cpu.core)
            cpu.thread++;
    c->cpus[c->n++] = cpu;
    return true;
}

/* --- public: CPUs ---------------------------------------------------------------------------- */

int cpuinfo_ncpus(const struct yt_node *tree)
{
    struct cpuinfo_shape sh = cpuinfo_shape_of(tree);
    if (!sh.verbatim)
        return sh.n;
    int n = 0;
    cpuinfo_each_block(sh.verbatim, cpuinfo_count_fn, &n);
    return n;
}

void cpuinfo_cpu_topology(const struct yt_node *tree, int cpu, int *socket, int *core, int *thread)
{
    struct cpuinfo_shape sh = cpuinfo_shape_of(tree);
    struct cpuinfo_cpu where = {cpu, -1, -1, -1};
    if (!sh.verbatim) {
        if (cpu >= 0 && cpu < sh.n)
            where = cpuinfo_place(&sh, cpu);
    } else {
        struct cpuinfo_find f = {.want = cpu, .at = -1};
        cpuinfo_each_block(sh.verbatim, cpuinfo_find_fn, &f);
        if (f.at >= 0) {
            f.pos = 0;
            cpuinfo_each_block(sh.verbatim, cpuinfo_earlier_fn, &f);
            where = (struct cpuinfo_cpu){cpu, f.socket, f.core, f.earlier};
        }
    }
    if (socket)
        *socket = where.socket;
    if (core)
        *core = where.core;
    if (thread)
        *thread = where.thread;
}

int cpuinfo_cpus(const struct yt_node *tree, struct cpuinfo_cpu **out)
{
    *out = NULL;
    struct cpuinfo_shape sh = cpuinfo_shape_of(tree);
    int n = cpuinfo_ncpus(tree);
    if (n <= 0)
        return 0;
    struct cpuinfo_cpu *cpus = malloc(sizeof *cpus * (size_t)n);
    if (!cpus)
        return -1;
    if (!sh.verbatim) {
        for (int k = 0; k < n; k++)
            cpus[k] = cpuinfo_place(&sh, k);
    } else {
        struct cpuinfo_collect c = {cpus, 0, n};
        cpuinfo_each_block(sh.verbatim, cpuinfo_collect_fn, &c);
        n = c.n;
        if (!n) {
            free(cpus);
            return 0;
        }
        /* Stable insertion sort by number: a capture is nearly always in order already. */
        for (int i = 1; i < n; i++) {
            struct cpuinfo_cpu x = cpus[i];
            int j = i;
            for (; j > 0 && cpus[j - 1].id > x.id; j--)
                cpus[j] = cpus[j - 1];
            cpus[j] = x;
        }
    }
    *out = cpus;
    return n;
}

/* --- text ------------------------------------------------------------------------------------ */

struct cpuinfo_buf {
    char *p;
    size_t len, cap;
    bool oom;
};

static bool cpuinfo_reserve(struct cpuinfo_buf *b, size_t more)
{
    if (b->oom)
        return false;
    if (more <= b->cap - b->len)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < more) {
        if (cap > SIZE_MAX / 2) {
            b->oom = true;
            return false;
        }
        cap *= 2;
    }
    char *np = realloc(b->p, cap);
    if (!np) {
        b->oom = true;
        return false;
    }
    b->p = np;
    b->cap = cap;
    return true;
}

static void cpuinfo_put(struct cpuinfo_buf *b, const char *s, size_t n)
{
    if (!cpuinfo_reserve(b, n + 1))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static void cpuinfo_puts(struct cpuinfo_buf *b, const char *s)
{
    cpuinfo_put(b, s, strlen(s));
}

/* A string value on one line: CR and LF become spaces. */
static void cpuinfo_put_value(struct cpuinfo_buf *b, const char *s)
{
    size_t at = b->len, n = strlen(s);
    cpuinfo_put(b, s, n);
    for (size_t i = at; !b->oom && i < at + n; i++)
        if (b->p[i] == '\n' || b->p[i] == '\r')
            b->p[i] = ' ';
}

static void cpuinfo_put_int(struct cpuinfo_buf *b, long long v)
{
    char num[24];
    int n = snprintf(num, sizeof num, "%lld", v);
    cpuinfo_put(b, num, (size_t)n);
}

/* `key<tabs>: <integer>\n` */
static void cpuinfo_line_int(struct cpuinfo_buf *b, const char *keytabs, long long v)
{
    cpuinfo_puts(b, keytabs);
    cpuinfo_puts(b, ": ");
    cpuinfo_put_int(b, v);
    cpuinfo_puts(b, "\n");
}

/* MHz with three decimals, the kernel's "kHz/1000 . kHz%1000". The value is rounded to whole
 * kHz exactly as "%.3f" rounds it (to nearest, an exact tie to even: fma gives the product's
 * rounding error, so the decision is made on the exact x·1000), but the decimal point does not
 * depend on the locale. Non-finite values print as 0.000; beyond ±10^12 MHz they saturate. */
static void cpuinfo_put_mhz(struct cpuinfo_buf *b, double mhz)
{
    if (!isfinite(mhz))
        mhz = 0;
    bool neg = signbit(mhz);
    double a = fabs(mhz);
    if (a > 1e12)
        a = 1e12;
    double t = a * 1000.0;
    double err = fma(a, 1000.0, -t);        /* a·1000 = t + err exactly */
    long long whole = (long long)t;
    double over = (t - (double)whole - 0.5) + err; /* sign of (a·1000 − whole − ½) */
    if (over > 0 || (over == 0 && (whole & 1)))
        whole++;
    if (neg)
        cpuinfo_puts(b, "-");
    cpuinfo_put_int(b, whole / 1000);
    char frac[8];
    int n = snprintf(frac, sizeof frac, ".%03lld", whole % 1000);
    cpuinfo_put(b, frac, (size_t)n);
}

bool cpuinfo_has_word(const char *words, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = words; *p;) {
        while (*p && cpuinfo_is_space(*p))
            p++;
        const char *e = p;
        while (*e && !cpuinfo_is_space(*e))
            e++;
        if ((size_t)(e - p) == n && n && !memcmp(p, w, n))
            return true;
        p = e;
    }
    return false;
}

/* The words of `text` that pass keep(), single-spaced, each after one space. */
static bool cpuinfo_put_words(struct cpuinfo_buf *b, const char *text, bool (*keep)(const char *w, size_t n, bool hwp),
                              bool hwp)
{
    bool any = false;
    for (const char *p = text; *p;) {
        while (*p && cpuinfo_is_space(*p))
            p++;
        const char *e = p;
        while (*e && !cpuinfo_is_space(*e))
            e++;
        if (e > p && (!keep || keep(p, (size_t)(e - p), hwp))) {
            cpuinfo_puts(b, " ");
            cpuinfo_put(b, p, (size_t)(e - p));
            any = true;
        }
        p = e;
    }
    return any;
}

/* HWP's flags (cpufeatures.h word 14: hwp, hwp_notify, hwp_act_window, hwp_epp, hwp_pkg_req)
 * show only when the node has HWP (cpufreq.hwp): a profile that turns HWP off loses them. */
static bool cpuinfo_keep_flag(const char *w, size_t n, bool hwp)
{
    return hwp || n < 3 || memcmp(w, "hwp", 3) || (n > 3 && w[3] != '_');
}

/* The flags line: "flags\t\t:" and the words (the kernel prints the key without words too). */
static void cpuinfo_flags_line(struct cpuinfo_buf *b, const struct yt_node *tree)
{
    const char *given = prof_str(tree, "cpu.flags", "");
    bool hwp = prof_bool(tree, "cpufreq.hwp", false);
    const char *implied[3];
    int ni = 0;
    if (prof_bool(tree, "cpu.hypervisor", false))
        implied[ni++] = "hypervisor";
    if (hwp)
        implied[ni++] = "hwp";
    if (hwp && !strcmp(prof_str(tree, "cpufreq.driver", ""), "intel_pstate"))
        implied[ni++] = "hwp_epp";

    cpuinfo_puts(b, "flags\t\t:");
    cpuinfo_put_words(b, given, cpuinfo_keep_flag, hwp);
    for (int i = 0; i < ni; i++)
        if (!cpuinfo_has_word(given, implied[i])) {
            cpuinfo_puts(b, " ");
            cpuinfo_puts(b, implied[i]);
        }
    cpuinfo_puts(b, "\n");
}

static char *cpuinfo_dup(const char *s, size_t *len)
{
    size_t n = strlen(s);
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    memcpy(out, s, n + 1);
    if (len)
        *len = n;
    return out;
}

/* `cache size`: on AMD the L2 (CPUID 0x80000006, amd.c), elsewhere the last level (intel.c
 * init_intel_cacheinfo: L3, else L2): the sizeKB of that cpu.caches entry, 0 without one. */
static long long cpuinfo_cache_kb(const struct yt_node *tree)
{
    const struct yt_node *caches = yt_path(tree, "cpu.caches");
    if (!caches || caches->kind != YT_SEQ)
        return 0;
    bool amd = !strcmp(prof_str(tree, "cpu.vendorID", ""), "AuthenticAMD");
    long long best_level = 0, kb = 0;
    for (int k = 0; k < caches->n; k++) {
        long long level = prof_int(caches->vals[k], "level", 0);
        if (amd ? level == 2 : level >= 2 && level > best_level) {
            best_level = level;
            kb = prof_int(caches->vals[k], "sizeKB", 0);
        }
    }
    return kb > 0 ? kb : 0;
}

static int cpuinfo_ceil_log2(long long v)
{
    int b = 0;
    while (b < 31 && (1LL << b) < v)
        b++;
    return b;
}

char *render_cpuinfo(const struct yt_node *tree, size_t *len)
{
    struct cpuinfo_shape sh = cpuinfo_shape_of(tree);
    if (sh.verbatim)
        return cpuinfo_dup(sh.verbatim, len);

    /* What every block shares: vendor_id ... cache size (head) and fpu ... power management
     * (tail); the numbered lines between them are per CPU. */
    struct cpuinfo_buf head = {0}, tail = {0}, out = {0};
    const char *model_name = prof_str(tree, "cpu.modelName", "");
    cpuinfo_puts(&head, "vendor_id\t: ");
    cpuinfo_put_value(&head, prof_str(tree, "cpu.vendorID", ""));
    cpuinfo_puts(&head, "\n");
    cpuinfo_line_int(&head, "cpu family\t", prof_int(tree, "cpu.family", 0));
    cpuinfo_line_int(&head, "model\t\t", prof_int(tree, "cpu.model", 0));
    cpuinfo_puts(&head, "model name\t: ");
    cpuinfo_put_value(&head, *model_name ? model_name : "unknown");
    cpuinfo_puts(&head, "\n");
    cpuinfo_line_int(&head, "stepping\t", prof_int(tree, "cpu.stepping", 0));
    const char *microcode = prof_str(tree, "cpu.microcode", "");
    if (*microcode && strspn(microcode, "0x") != strlen(microcode)) { /* "", "0x0": revision 0, left out */
        cpuinfo_puts(&head, "microcode\t: ");
        cpuinfo_put_value(&head, microcode);
        cpuinfo_puts(&head, "\n");
    }
    cpuinfo_puts(&head, "cpu MHz\t\t: ");
    cpuinfo_put_mhz(&head, prof_num(tree, "cpu.cpuMHz", 0));
    cpuinfo_puts(&head, "\n");
    long long cache_kb = cpuinfo_cache_kb(tree);
    if (cache_kb > 0) {
        cpuinfo_puts(&head, "cache size\t: ");
        cpuinfo_put_int(&head, cache_kb);
        cpuinfo_puts(&head, " KB\n");
    }

    cpuinfo_puts(&tail, "fpu\t\t: yes\nfpu_exception\t: yes\n");
    cpuinfo_line_int(&tail, "cpuid level\t", prof_int(tree, "cpu.cpuidLevel", 0));
    cpuinfo_puts(&tail, "wp\t\t: yes\n");
    cpuinfo_flags_line(&tail, tree);
    const char *vmx = prof_str(tree, "cpu.vmxFlags", "");
    if (cpuinfo_has_word(prof_str(tree, "cpu.flags", ""), "vmx") && *vmx) {
        cpuinfo_puts(&tail, "vmx flags\t:");
        cpuinfo_put_words(&tail, vmx, NULL, false);
        cpuinfo_puts(&tail, "\n");
    }
    cpuinfo_puts(&tail, "bugs\t\t:");
    cpuinfo_put_words(&tail, prof_str(tree, "cpu.bugs", ""), NULL, false);
    cpuinfo_puts(&tail, "\n");
    /* bogomips: loops_per_jiffy/(500000/HZ) "." (lpj/(5000/HZ))%100 with the TSC's
     * lpj = tsc_khz·1000/HZ (tsc.c), i.e. tsc_khz/500 with two truncated decimals, whatever HZ. */
    long long tsc_khz = prof_int(tree, "cpu.tscKHz", 0);
    if (tsc_khz < 0)
        tsc_khz = 0;
    char num[48];
    snprintf(num, sizeof num, "bogomips\t: %lld.%02lld\n", tsc_khz / 500, tsc_khz / 5 % 100);
    cpuinfo_puts(&tail, num);
    long long tlb = prof_int(tree, "cpu.tlbSize", 0);
    if (tlb > 0) {
        cpuinfo_puts(&tail, "TLB size\t: ");
        cpuinfo_put_int(&tail, tlb);
        cpuinfo_puts(&tail, " 4K pages\n");
    }
    cpuinfo_puts(&tail, "clflush size\t: 64\ncache_alignment\t: 64\n");
    cpuinfo_puts(&tail, "address sizes\t: ");
    cpuinfo_put_int(&tail, prof_int(tree, "cpu.physAddrBits", 0));
    cpuinfo_puts(&tail, " bits physical, ");
    cpuinfo_put_int(&tail, prof_int(tree, "cpu.virtAddrBits", 0));
    cpuinfo_puts(&tail, " bits virtual\n");
    cpuinfo_puts(&tail, "power management:");
    cpuinfo_put_words(&tail, prof_str(tree, "cpu.powerManagement", ""), NULL, false);
    cpuinfo_puts(&tail, "\n\n");

    long long cores = sh.one_per_vcpu ? 1 : sh.c;
    long long siblings = sh.one_per_vcpu ? 1 : cpuinfo_mul_cap(sh.c, sh.t);
    /* APIC ids as render_topology derives them: thread bits, core bits, then the package */
    int smt_bits = sh.one_per_vcpu ? 0 : cpuinfo_ceil_log2(sh.t);
    int core_bits = sh.one_per_vcpu ? 0 : cpuinfo_ceil_log2(sh.c);

    /* Per block: the shared parts plus eight numbered lines of at most ~30 bytes each. */
    out.oom = head.oom || tail.oom;
    size_t per = head.len + tail.len + 260;
    if (sh.n > 0 && per <= SIZE_MAX / (size_t)sh.n)
        cpuinfo_reserve(&out, per * (size_t)sh.n + 1);
    cpuinfo_puts(&out, ""); /* an empty node still gets a NUL-terminated text */
    for (int k = 0; k < sh.n && !out.oom; k++) {
        struct cpuinfo_cpu cpu = cpuinfo_place(&sh, k);
        long long apic = sh.one_per_vcpu ? k
                                         : (long long)cpu.socket << (smt_bits + core_bits) |
                                               (long long)cpu.core << smt_bits | cpu.thread;
        cpuinfo_line_int(&out, "processor\t", k);
        cpuinfo_put(&out, head.p, head.len);
        cpuinfo_line_int(&out, "physical id\t", cpu.socket);
        cpuinfo_line_int(&out, "siblings\t", siblings);
        cpuinfo_line_int(&out, "core id\t\t", cpu.core);
        cpuinfo_line_int(&out, "cpu cores\t", cores);
        cpuinfo_line_int(&out, "apicid\t\t", apic);
        cpuinfo_line_int(&out, "initial apicid\t", apic);
        cpuinfo_put(&out, tail.p, tail.len);
    }
    free(head.p);
    free(tail.p);
    if (out.oom) {
        free(out.p);
        return NULL;
    }
    if (len)
        *len = out.len;
    return out.p;
}

/* The value of a policy file (cpufreq/policy<id>/<name>), SEG_NONE when the node has none. */
static uint32_t cpuinfo_policy_value(const struct node_layout *l, int id, const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "sys/devices/system/cpu/cpufreq/policy%d/%s", id, name);
    uint32_t e = segb_find(l->b, path);
    return e == SEG_NONE ? SEG_NONE : segb_value_of(l->b, e);
}

/* The busy-time counter of each CPU position (render_proc's BK_CPU_BUSY values) into busy[n],
 * SEG_NONE where there is none. */
static void cpuinfo_busy_counters(const struct node_layout *l, uint32_t *busy, int n)
{
    for (int k = 0; k < n; k++)
        busy[k] = SEG_NONE;
    for (uint32_t v = 0; v < l->nbinds; v++)
        if (l->binds[v].kind == BK_CPU_BUSY && l->binds[v].cpu < n)
            busy[l->binds[v].cpu] = v;
}

/* The cpuinfo entry: the text as above, and on a node with cpufreq policies a view
 * (seg_view.h SEG_VIEW_CPUINFO) whose `cpu MHz` of each CPU shows its policy's scaling_cur_freq,
 * as the kernel's arch_freq_get_on_cpu shows a busy CPU's running frequency (psutil's cpu_freq
 * reads it). With intel_pstate in active mode an idle CPU shows its policy's scaling_min_freq
 * instead (the view's three-number marker: the kernel's policy->cur, which that driver keeps at
 * policy->min). Without cpufreq, or when the view would not fit a reader's buffer, static text.
 * Call it after render_proc (the busy counters) and render_cpufreq (the policies' files). */
void render_cpuinfo_entry(struct node_layout *l, const struct yt_node *tree, const uint16_t *cpu_policy, int npolicy)
{
    size_t len = 0;
    char *text = render_cpuinfo(tree, &len);
    struct cpuinfo_cpu *cpus = NULL;
    int n = cpuinfo_cpus(tree, &cpus);
    if (!text || n < 0)
        abort();
    bool idle_min = !strcmp(prof_str(tree, "cpufreq.driver", ""), "intel_pstate");
    const char *key = "cpu MHz\t\t: ";
    size_t klen = strlen(key), cap = len + (size_t)n * 40 + 1, used = 0, marks = 0;
    char *tpl = malloc(cap);
    uint32_t *busy = malloc(sizeof *busy * (size_t)(n > 0 ? n : 1));
    if (!tpl || !busy)
        abort();
    cpuinfo_busy_counters(l, busy, n);
    const char *t = text, *end = text + len;
    bool ok = n > 0;
    for (int k = 0; ok && t < end; k++) {
        const char *m = strstr(t, key);
        if (!m) {
            memcpy(tpl + used, t, (size_t)(end - t));
            used += (size_t)(end - t);
            break;
        }
        m += klen;
        memcpy(tpl + used, t, (size_t)(m - t));
        used += (size_t)(m - t);
        t = strchr(m, '\n');
        int pi = k < npolicy && k < n ? cpu_policy[k] : -1;
        uint32_t v = pi >= 0 && pi < n ? cpuinfo_policy_value(l, cpus[pi].id, "scaling_cur_freq") : SEG_NONE;
        uint32_t vmin = idle_min && pi >= 0 && pi < n ? cpuinfo_policy_value(l, cpus[pi].id, "scaling_min_freq")
                                                      : SEG_NONE;
        if (!t || v == SEG_NONE) {
            ok = false;
            break;
        }
        if (vmin != SEG_NONE && busy[k] != SEG_NONE)
            used += (size_t)snprintf(tpl + used, cap - used, "\x01%u\x03%u\x03%u\x02", v, vmin, busy[k]);
        else
            used += (size_t)snprintf(tpl + used, cap - used, "\x01%u\x02", v);
        marks++;
    }
    if (ok && used + marks * 24 + 64 <= SEG_VIEW_MAX_TEXT) {
        tpl[used] = 0;
        uint32_t pa = segb_param(l->b, (struct seg_param){.a = (int64_t)used, .b = (int64_t)marks, .related = SEG_NONE},
                                 tpl);
        uint32_t v0 = segb_value_of(l->b, segb_find(l->b, "sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq"));
        segb_dynamic(l->b, "cpuinfo", 0444, SEG_S, v0 != SEG_NONE ? v0 : 0, SEG_VIEW_CPUINFO, pa);
    } else {
        segb_static(l->b, "cpuinfo", 0444, text, len);
    }
    free(tpl);
    free(busy);
    free(cpus);
    free(text);
}
