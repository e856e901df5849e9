/* seg_attr: kernel store() semantics of agent-writable attributes; see seg_attr.h.
 * One store function per validator (the table `stores`), as sysfs pairs each attribute's show
 * with its store; each cites what it imitates in the reference (sysfs §N marks: docs/sources.md). */
#include "seg_attr.h"
#include "seg_faults.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* kstrto*: at most one trailing newline; no leading or other trailing blanks (§1.4). */
static int strip_newline(const char *buf, size_t *len)
{
    if (*len && buf[*len - 1] == '\n')
        (*len)--;
    return *len ? 0 : EINVAL;
}

static int parse_unsigned(const char *buf, size_t len, unsigned base, unsigned long long *out)
{
    if (strip_newline(buf, &len))
        return EINVAL;
    size_t i = 0;
    if (buf[i] == '+')
        i++;
    if (i >= len)
        return EINVAL;
    if (base == 0) {
        base = 10;
        if (buf[i] == '0' && i + 1 < len && (buf[i + 1] == 'x' || buf[i + 1] == 'X')) {
            base = 16;
            i += 2;
            if (i >= len)
                return EINVAL;
        } else if (buf[i] == '0' && i + 1 < len) {
            base = 8;
            i++;
        }
    }
    unsigned long long v = 0;
    for (; i < len; i++) {
        int c = (unsigned char)buf[i], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (base == 16 && isxdigit(c))
            d = tolower(c) - 'a' + 10;
        else
            return EINVAL;
        if (d >= (int)base)
            return EINVAL;
        if (v > (~0ULL - (unsigned)d) / base)
            return ERANGE;
        v = v * base + (unsigned)d;
    }
    *out = v;
    return 0;
}

int kstrtoull10(const char *buf, size_t len, unsigned long long *out)
{
    return parse_unsigned(buf, len, 10, out);
}

int kstrtoul0(const char *buf, size_t len, unsigned long long *out)
{
    return parse_unsigned(buf, len, 0, out);
}

int kstrtobool(const char *buf, size_t len, bool *out)
{
    if (!len)
        return EINVAL;
    switch (buf[0]) {
    case 'y': case 'Y': case 't': case 'T': case '1':
        *out = true;
        return 0;
    case 'n': case 'N': case 'f': case 'F': case '0':
        *out = false;
        return 0;
    case 'o': case 'O':
        if (len >= 2 && (buf[1] == 'n' || buf[1] == 'N')) {
            *out = true;
            return 0;
        }
        if (len >= 2 && (buf[1] == 'f' || buf[1] == 'F')) {
            *out = false;
            return 0;
        }
        return EINVAL;
    default:
        return EINVAL;
    }
}

uint64_t rapl_limit_readback(uint64_t uw, uint64_t unit_uw, unsigned bits)
{
    if (!unit_uw)
        return uw;
    uint64_t raw = uw / unit_uw;
    if (bits < 64)
        raw &= (UINT64_C(1) << bits) - 1;
    return raw * unit_uw;
}

uint64_t rapl_window_readback(uint64_t us, uint64_t unit_us)
{
    if (!unit_us)
        return us;
    unsigned y, f;
    if (us < unit_us) {
        y = 0;
        f = 0;
    } else {
        uint64_t v = us / unit_us;
        y = 63 - (unsigned)__builtin_clzll(v);
        if (y > 31)
            return ((UINT64_C(1) << 31) * 7 * unit_us) / 4; /* raw 0x7F: Y=31, F=3 */
        f = (unsigned)((4 * (v - (UINT64_C(1) << y))) >> y);
    }
    return ((UINT64_C(1) << y) * (4 + f) * unit_us) / 4;
}

static size_t put_u64(char *out, unsigned long long v)
{
    return (size_t)snprintf(out, SEG_TEXT_MAX, "%llu\n", v);
}

/* The first whitespace-delimited word of buf (sscanf("%Ns")), at most max bytes. */
static size_t first_word(const char *buf, size_t len, const char **start, size_t max)
{
    size_t i = 0;
    while (i < len && isspace((unsigned char)buf[i]))
        i++;
    size_t j = i;
    while (j < len && !isspace((unsigned char)buf[j]) && j - i < max)
        j++;
    *start = buf + i;
    return j - i;
}

/* Is word (case-insensitive) in the space-separated list? Returns its canonical spelling. */
static const char *in_words(const char *list, const char *word, size_t wl)
{
    for (const char *p = list; p && *p;) {
        while (*p == ' ')
            p++;
        size_t l = strcspn(p, " ");
        if (l && l == wl && !strncasecmp(p, word, l))
            return p;
        p += l;
    }
    return NULL;
}

/* Current text of a related entry (its slot if newer, else the snapshot), without newline. */
static size_t related_text(struct seg *s, uint32_t entry, int64_t now_ns, char *buf)
{
    if (entry == SEG_NONE || entry >= s->n_entries)
        return 0;
    char tmp[SEG_TEXT_MAX];
    size_t n;
    const char *t = seg_read(s, entry, now_ns, tmp, &n);
    if (!t)
        n = 0; /* the segment lost pages: read as empty */
    if (n >= SEG_TEXT_MAX)
        n = SEG_TEXT_MAX - 1;
    memcpy(buf, t, n);
    if (n && buf[n - 1] == '\n')
        n--;
    buf[n] = 0;
    return n;
}

/* --- one store function per validator, as sysfs pairs each attribute's show with its store ----- */

/* One write as a store function sees it. The function decides it: the normalised text into out
 * (SEG_TEXT_MAX bytes) and its length into *outlen, and 0; or the errno the writer gets. */
struct attr_write {
    struct seg *s;
    uint32_t entry;
    const struct seg_param *p; /* the entry's constants (all zero when it has none) */
    const char *words;         /* p's word list, "" when none */
    const char *buf;           /* the bytes written, at most SEG_READ_MAX */
    size_t len;
    int64_t now_ns;
    char *out;
    size_t *outlen;
    bool *changes; /* true; a store that takes the write but changes nothing sets it false */
};

typedef int (*store_fn)(const struct attr_write *w);

/* The write taken as the decimal v and newline. */
static int taken_u64(const struct attr_write *w, unsigned long long v)
{
    *w->outlen = put_u64(w->out, v);
    return 0;
}

/* Taken, and nothing changes (no slot store). */
static int taken_unchanged(const struct attr_write *w)
{
    *w->changes = false;
    *w->outlen = 0;
    return 0;
}

static int store_ignore(const struct attr_write *w)
{
    return taken_unchanged(w);
}

static int store_ct_enabled(const struct attr_write *w) /* §2.2 */
{
    bool b;
    return kstrtobool(w->buf, w->len, &b) ? EINVAL : ENOSYS;
}

static int store_zone_enabled(const struct attr_write *w) /* §2.3, §3.3: locked PL1 -> ENOSYS */
{
    bool b;
    if (kstrtobool(w->buf, w->len, &b))
        return EINVAL;
    if (w->p->a)
        return ENOSYS;
    return taken_u64(w, b);
}

static int store_rapl_limit(const struct attr_write *w) /* §2.3, §3.4 */
{
    unsigned long long v;
    if (kstrtoull10(w->buf, w->len, &v))
        return EINVAL;
    if (w->p->c)
        return ENODATA;
    return taken_u64(w, rapl_limit_readback(v, (uint64_t)w->p->a, (unsigned)w->p->b));
}

static int store_rapl_window(const struct attr_write *w)
{
    unsigned long long v;
    if (kstrtoull10(w->buf, w->len, &v))
        return EINVAL;
    if (w->p->c)
        return ENODATA;
    return taken_u64(w, rapl_window_readback(v, (uint64_t)w->p->a));
}

/* The write taken as v clamped into [lo, hi]. */
static int taken_clamped(const struct attr_write *w, unsigned long long v, unsigned long long lo,
                         unsigned long long hi)
{
    if (v < lo)
        v = lo;
    if (v > hi)
        v = hi;
    return taken_u64(w, v);
}

static int store_freq_max(const struct attr_write *w) /* §4.2: errors raw from kstrtoul, then clamped */
{
    unsigned long long v;
    int rc;
    if ((rc = kstrtoul0(w->buf, w->len, &v)))
        return rc;
    return taken_clamped(w, v, (unsigned long long)w->p->a, (unsigned long long)w->p->b);
}

static int store_freq_min(const struct attr_write *w) /* as max, and at most the related max's value */
{
    unsigned long long v, hi = (unsigned long long)w->p->b, mx;
    int rc;
    if ((rc = kstrtoul0(w->buf, w->len, &v)))
        return rc;
    char rel[SEG_TEXT_MAX];
    if (related_text(w->s, w->p->related, w->now_ns, rel) && !kstrtoull10(rel, strlen(rel), &mx) && mx < hi)
        hi = mx;
    return taken_clamped(w, v, (unsigned long long)w->p->a, hi);
}

static int store_governor(const struct attr_write *w) /* §4.2: sscanf("%15s"), case-insensitive */
{
    const char *word;
    size_t wl = first_word(w->buf, w->len, &word, 15);
    const char *canon = wl ? in_words(w->words, word, wl) : NULL;
    if (!canon)
        return EINVAL;
    memcpy(w->out, canon, wl);
    w->out[wl] = '\n';
    *w->outlen = wl + 1;
    return 0;
}

static const char epp_names[][20] = {"performance", "balance_performance", "balance_power", "power", "default"};

static int store_epp(const struct attr_write *w) /* §5.2 (intel_pstate, c=1: raw numbers too), §6.2 (amd-pstate) */
{
    const struct seg_param *p = w->p;
    const char *word;
    size_t wl = first_word(w->buf, w->len, &word, 20);
    if (!wl)
        return EINVAL;
    int idx = -1;
    for (int i = 0; i < 5; i++)
        if (strlen(epp_names[i]) == wl && !strncmp(epp_names[i], word, wl) && in_words(w->words, word, wl))
            idx = i;
    bool performance = idx == 0;
    unsigned long long v = 0;
    int rc;
    if (idx < 0) {
        if (!p->c)
            return EINVAL;
        /* intel_pstate: kstrtouint (ERANGE past 32 bits), then above 255 -> EINVAL */
        if ((rc = kstrtoull10(w->buf, w->len, &v)))
            return rc;
        if (v > UINT_MAX)
            return ERANGE;
        if (v > 255)
            return EINVAL;
        performance = v == 0;
    }
    if (p->d) {
        char gov[SEG_TEXT_MAX];
        if (related_text(w->s, p->related, w->now_ns, gov) && !strcmp(gov, "performance") && !performance)
            return EBUSY;
    }
    if (idx < 0)
        return taken_u64(w, v);
    *w->outlen = (size_t)snprintf(w->out, SEG_TEXT_MAX, "%s\n", epp_names[idx]);
    return 0;
}

static int store_uint_clamp01(const struct attr_write *w) /* §5.1 no_turbo: sscanf("%u"), clamped */
{
    const char *word;
    size_t wl = first_word(w->buf, w->len, &word, 20);
    size_t digits = 0;
    bool nonzero = false;
    while (digits < wl && isdigit((unsigned char)word[digits]))
        nonzero |= word[digits++] != '0';
    if (!digits)
        return EINVAL;
    return taken_u64(w, nonzero); /* any non-zero number means 1 */
}

static int store_bool01(const struct attr_write *w)
{
    bool b;
    if (kstrtobool(w->buf, w->len, &b))
        return EINVAL;
    return taken_u64(w, b);
}

static int store_uw_clamp(const struct attr_write *w)
{
    unsigned long long v;
    int rc;
    if ((rc = kstrtoull10(w->buf, w->len, &v)))
        return rc;
    return taken_clamped(w, v, (unsigned long long)w->p->a, (unsigned long long)w->p->b);
}

/* The value of the attribute `name` in the same directory as entry (a policy's scaling_min_freq
 * beside its scaling_setspeed), or dflt when there is none or it is not a number. */
static unsigned long long sibling_u64(const struct attr_write *w, const char *name, unsigned long long dflt)
{
    const char *path = seg_path(w->s, w->entry);
    const char *slash = path ? strrchr(path, '/') : NULL;
    char sib[512], text[SEG_TEXT_MAX];
    unsigned long long v;
    if (!slash || (size_t)(slash - path) + 1 + strlen(name) >= sizeof sib)
        return dflt;
    int n = snprintf(sib, sizeof sib, "%.*s/%s", (int)(slash - path), path, name);
    uint32_t e = seg_lookup(w->s, sib, (size_t)n);
    size_t len = e == SEG_NONE ? 0 : related_text(w->s, e, w->now_ns, text);
    return len && !kstrtoull10(text, len, &v) ? v : dflt;
}

/* scaling_setspeed under the userspace governor: store_scaling_setspeed's sscanf("%u"), then
 * cpufreq_userspace.c's cpufreq_set -> __cpufreq_driver_target(policy, freq, RELATION_L), which
 * clamps the frequency into [policy->min, policy->max]; show_speed prints policy->cur, the
 * frequency set (kernels up to 6.18; a 2025 patch shows the raw setspeed instead). So the file
 * reads back the written frequency clamped into the policy's scaling_min_freq..scaling_max_freq. */
static int store_setspeed(const struct attr_write *w)
{
    char gov[SEG_TEXT_MAX];
    if (!related_text(w->s, w->p->related, w->now_ns, gov) || strcmp(gov, "userspace"))
        return EINVAL;
    const char *word;
    size_t wl = first_word(w->buf, w->len, &word, 20);
    unsigned long long v;
    if (!wl || kstrtoull10(word, wl, &v))
        return EINVAL;
    unsigned long long lo = sibling_u64(w, "scaling_min_freq", 0), hi = sibling_u64(w, "scaling_max_freq", v);
    return taken_clamped(w, v, lo, hi < lo ? lo : hi);
}

static int store_nvml_limit(const struct attr_write *w) /* nvmlDeviceSetPowerManagementLimit's range check */
{
    unsigned long long v;
    if (w->p->c)
        return EOPNOTSUPP;
    if (kstrtoull10(w->buf, w->len, &v) || v < (unsigned long long)w->p->a || v > (unsigned long long)w->p->b)
        return EINVAL;
    return taken_u64(w, v);
}

/* locked_gpu_clocks / locked_memory_clocks: "none" resets; "<min> <max>" (or "min,max", or one
 * value for both) locks, the maximum clamped to the highest supported clock (a = lowest, b =
 * highest supported, MHz), as nvidia-smi -lgc reports it. */
static int store_nvml_clocks(const struct attr_write *w)
{
    const char *word;
    size_t wl = first_word(w->buf, w->len, &word, 8);
    if (wl == 4 && !strncmp(word, "none", 4)) {
        memcpy(w->out, "none\n", 5);
        *w->outlen = 5;
        return 0;
    }
    char text[SEG_TEXT_MAX];
    size_t n = w->len < sizeof text - 1 ? w->len : sizeof text - 1;
    memcpy(text, w->buf, n);
    text[n] = 0;
    unsigned long long lo, hi;
    char tail;
    int got = sscanf(text, "%llu%*[ ,]%llu %c", &lo, &hi, &tail);
    if (got == 1 || (got == 0 && sscanf(text, "%llu %c", &lo, &tail) == 1))
        hi = lo;
    else if (got != 2)
        return EINVAL;
    if (hi > (unsigned long long)w->p->b)
        hi = (unsigned long long)w->p->b;
    if (lo > hi || hi < (unsigned long long)w->p->a)
        return EINVAL;
    *w->outlen = (size_t)snprintf(w->out, SEG_TEXT_MAX, "%llu %llu\n", lo, hi);
    return 0;
}

static int store_amdgpu_cap(const struct attr_write *w) /* §9.1 swsmu: kstrtou32, whole watts, outside [min, max] -> EINVAL */
{
    unsigned long long v;
    int rc;
    if ((rc = kstrtoull10(w->buf, w->len, &v)))
        return rc;
    if (v > 0xffffffffULL)
        return ERANGE;
    /* amdgpu_hwmon_set_power_cap divides by 1000000 first, so 1..999999 uW is 0 W like 0 itself;
     * smu_set_power_limit then range-checks the watts and turns a 0 W limit into the current one
     * (`if (!limit) limit = smu->current_power_limit`): the cap reads back unchanged at once. */
    unsigned long long uw = v / 1000000 * 1000000;
    if (uw == 0 && w->p->a == 0)
        return taken_unchanged(w);
    if (uw < (unsigned long long)w->p->a || uw > (unsigned long long)w->p->b)
        return EINVAL;
    return taken_u64(w, uw);
}

/* power_dpm_force_performance_level (§9.2): the first keyword the text starts with, in the
 * kernel's order; profile_exit leaves a profile mode (EINVAL outside one). Writing the current
 * level is a no-op in the kernel; here it stores the same word again, which reads the same. */
static int store_dpm_level(const struct attr_write *w)
{
    static const char *const order[] = {"low", "high", "auto", "manual", "profile_exit", "profile_standard",
                                        "profile_min_sclk", "profile_min_mclk", "profile_peak", "perf_determinism",
                                        NULL};
    const char *hit = NULL;
    for (int i = 0; order[i] && !hit; i++)
        if (w->len >= strlen(order[i]) && !strncmp(w->buf, order[i], strlen(order[i])))
            hit = order[i];
    if (!hit || (*w->words && !in_words(w->words, hit, strlen(hit)) && strcmp(hit, "profile_exit")))
        return EINVAL;
    char cur[SEG_TEXT_MAX];
    related_text(w->s, w->entry, w->now_ns, cur);
    if (!strcmp(hit, "profile_exit")) {
        if (strncmp(cur, "profile_", 8))
            return EINVAL;
        hit = "auto";
    }
    *w->outlen = (size_t)snprintf(w->out, SEG_TEXT_MAX, "%s\n", hit);
    return 0;
}

static int store_intel_pl1(const struct attr_write *w) /* §10.1: any value; 1/8 W units, round to nearest; the hardware clamps */
{
    unsigned long long v;
    int rc;
    if ((rc = kstrtoul0(w->buf, w->len, &v)))
        return rc;
    /* only 0 turns the limit off (i915's PL1_DISABLE); any other value is at least one
     * 1/8 W step, and the rounding saturates instead of wrapping past 2^64 */
    if (v) {
        unsigned long long q = v / 125000 + (v % 125000 >= 62500);
        v = q ? (q > ULLONG_MAX / 125000 ? ULLONG_MAX / 125000 : q) * 125000 : 125000;
    }
    return taken_u64(w, v);
}

static int store_max_ms(const struct attr_write *w) /* power1_max_interval: ms, above the longest window -> EINVAL */
{
    unsigned long long v;
    int rc;
    if ((rc = kstrtoul0(w->buf, w->len, &v)))
        return rc;
    if (v > (unsigned long long)w->p->a)
        return EINVAL;
    return taken_u64(w, v);
}

static int store_trigger(const struct attr_write *w) /* cpufreq_stats.c store_reset: the text is not read */
{
    memcpy(w->out, "1\n", 2);
    *w->outlen = 2;
    return 0;
}

/* Every validator's store; SV_NONE has none (an attribute without a store: §1.2, the device core
 * answers EIO). A validator added to seg_attr.h without a store here fails the assertion below
 * (one at the end) or test_seg_attr's test_every_validator_stores (one left out between). */
static const store_fn stores[] = {
    [SV_NONE] = NULL,
    [SV_IGNORE] = store_ignore,
    [SV_CT_ENABLED] = store_ct_enabled,
    [SV_ZONE_ENABLED] = store_zone_enabled,
    [SV_RAPL_LIMIT] = store_rapl_limit,
    [SV_RAPL_WINDOW] = store_rapl_window,
    [SV_FREQ_MIN] = store_freq_min,
    [SV_FREQ_MAX] = store_freq_max,
    [SV_GOVERNOR] = store_governor,
    [SV_EPP] = store_epp,
    [SV_UINT_CLAMP01] = store_uint_clamp01,
    [SV_BOOL01] = store_bool01,
    [SV_UW_CLAMP] = store_uw_clamp,
    [SV_SETSPEED] = store_setspeed,
    [SV_NVML_LIMIT] = store_nvml_limit,
    [SV_NVML_CLOCKS] = store_nvml_clocks,
    [SV_AMDGPU_CAP] = store_amdgpu_cap,
    [SV_DPM_LEVEL] = store_dpm_level,
    [SV_INTEL_PL1] = store_intel_pl1,
    [SV_MAX_MS] = store_max_ms,
    [SV_TRIGGER] = store_trigger,
};
_Static_assert(sizeof stores / sizeof stores[0] == SV_COUNT, "seg_attr.c: a validator of seg_attr.h has no store");

int seg_attr_store(struct seg *s, uint32_t entry, const char *buf, size_t len, int64_t now_ns, char *out,
                   size_t *outlen, bool *changes)
{
    if (entry >= s->n_entries)
        return EIO;
    const struct seg_entry *e = &s->entries[entry];
    static const struct seg_param none = {0, 0, 0, 0, SEG_NONE, SEG_NONE};
    /* read once: the entry may be shared memory (readers) */
    uint32_t param = e->param;
    uint16_t validator = e->validator;
    const struct seg_param *p = param < s->n_params ? &s->params[param] : &none;
    const char *words = p->words_off != SEG_NONE && p->words_off < s->strings_size ? s->strings + p->words_off
                                                                                      : "";
    *changes = true;
    if (len > SEG_READ_MAX)
        len = SEG_READ_MAX; /* kernfs hands at most a page to one store (§1.4) */
    store_fn store = validator < SV_COUNT ? stores[validator] : NULL;
    if (!store)
        return EIO; /* an attribute without a store (§1.2: device core answers EIO) */
    const struct attr_write w = {s, entry, p, words, buf, len, now_ns, out, outlen, changes};
    return store(&w);
}

int seg_attr_write(struct seg *s, uint32_t entry, const char *buf, size_t len, int pid)
{
    if (entry >= s->n_entries)
        return EIO;
    const struct seg_entry *e = &s->entries[entry];
    int64_t now = seg_now_ns();
    if (len > SEG_READ_MAX)
        len = SEG_READ_MAX;
    /* kstrto* stop at a NUL: libpowercap pads its writes with them */
    size_t n = strnlen(buf, len);
    int err = 0;
    char out[SEG_TEXT_MAX];
    size_t olen = 0;
    bool changes = false;
    struct seg_faults f;
    bool faulty = e->cls == SEG_A && seg_faults_read(s, &f);
    if (faulty && f.off_err > 0)
        err = f.off_err; /* the node lost its power (docs/faults.md power-loss) */
    else if (faulty && f.write_err > 0)
        err = f.write_err; /* refused by the firmware for a while (docs/faults.md write-refused) */
    else if (faulty && (err = seg_faults_locked_errno(f.pkg_locked, seg_path(s, entry))))
        ; /* a locked RAPL limit (limit-locked) */
    else if (e->cls == SEG_A)
        err = seg_attr_store(s, entry, buf, n, now, out, &olen, &changes);
    if (!err && changes)
        seg_slot_store(s, entry, out, olen, now);
    seg_event_push(s, entry, err, buf, n, now, pid);
    return err;
}
