/* Every agent-writable attribute of every builtin profile, rendered as the engine renders it:
 * a value the kernel takes is accepted and reads back normalised at once; a value it refuses
 * fails with the kernel's errno and changes nothing (sysfs §2-6). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "node.h"
#include "profiles_fixture.h"
#include "seg_attr.h"
#include "seg_view.h"
#include "ytree.h"
#include "seg_tmp.h"


static int store(struct seg *s, uint32_t e, const char *v, char *out, size_t *olen)
{
    bool changes;
    int rc = seg_attr_store(s, e, v, strlen(v), seg_now_ns(), out, olen, &changes);
    if (!rc && changes)
        seg_slot_store(s, e, out, *olen, seg_now_ns());
    return rc;
}

static const char *show(struct seg *s, uint32_t e, char *tmp)
{
    static char buf[SEG_TEXT_MAX + 1];
    size_t n;
    const char *t = seg_read(s, e, seg_now_ns(), tmp, &n);
    memcpy(buf, t, n);
    buf[n] = 0;
    return buf;
}

/* The kernel's answer to a well-formed value of each attribute, given its constants. */
static void check_entry(struct seg *s, uint32_t e, int *checked)
{
    const struct seg_entry *en = &s->entries[e];
    const struct seg_param *p = en->param != SEG_NONE ? &s->params[en->param] : NULL;
    const char *path = seg_path(s, e);
    char out[SEG_TEXT_MAX], tmp[SEG_TEXT_MAX], before[SEG_TEXT_MAX + 1];
    size_t olen;
    snprintf(before, sizeof before, "%s", show(s, e, tmp));
    /* Garbage: every store parses first, so it is EINVAL (or the parse error) and changes nothing. */
    int rc = store(s, e, "?bad\n", out, &olen);
    if (en->validator == SV_IGNORE) {
        assert_int_equal(rc, 0);
    } else if (en->validator == SV_TRIGGER) { /* cpufreq/stats/reset reads no text: any write acts */
        assert_int_equal(rc, 0);
        snprintf(before, sizeof before, "1\n");
    } else if (en->validator == SV_UINT_CLAMP01 || en->validator == SV_SETSPEED) {
        assert_int_equal(rc, EINVAL);
    } else if (en->validator == SV_NVML_LIMIT && p->c) {
        assert_int_equal(rc, EOPNOTSUPP); /* a limit the GPU does not support refuses everything */
    } else {
        if (rc != EINVAL)
            fail_msg("%s: garbage gave %d, expected EINVAL", path, rc);
    }
    assert_string_equal(show(s, e, tmp), before);
    switch (en->validator) {
    case SV_RAPL_LIMIT:
        rc = store(s, e, "100062499\n", out, &olen);
        if (p->c) {
            assert_int_equal(rc, ENODATA); /* locked or disabled: any driver error is ENODATA */
            assert_string_equal(show(s, e, tmp), before);
        } else {
            assert_int_equal(rc, 0);
            char want[32];
            snprintf(want, sizeof want, "%llu\n", (unsigned long long)rapl_limit_readback(100062499, p->a, p->b));
            assert_string_equal(show(s, e, tmp), want);
        }
        break;
    case SV_RAPL_WINDOW:
        rc = store(s, e, "2500", out, &olen);
        assert_int_equal(rc, p->c ? ENODATA : 0);
        if (!p->c)
            assert_string_equal(show(s, e, tmp), "1952\n");
        break;
    case SV_ZONE_ENABLED:
        rc = store(s, e, "0", out, &olen);
        assert_int_equal(rc, p->a ? ENOSYS : 0);
        if (!p->a)
            assert_string_equal(show(s, e, tmp), "0\n");
        break;
    case SV_CT_ENABLED:
        assert_int_equal(store(s, e, "1", out, &olen), ENOSYS);
        break;
    case SV_FREQ_MAX: {
        assert_int_equal(store(s, e, "99999999999", out, &olen), 0);
        /* clamped to cpuinfo_max_freq with turbo: shown no higher than the policy's cpuinfo_max_freq
         * now (a turbo switch written off earlier in this loop: segment.h "Turbo") */
        long long want = p->b;
        if ((en->flags & SEG_F_CEIL) && p->related != SEG_NONE && atoll(show(s, p->related, tmp)) < want)
            want = atoll(show(s, p->related, tmp));
        snprintf(tmp, sizeof tmp, "%lld\n", want);
        assert_string_equal(show(s, e, out), tmp);
        break;
    }
    case SV_FREQ_MIN:
        assert_int_equal(store(s, e, "0", out, &olen), 0);
        snprintf(tmp, sizeof tmp, "%lld\n", (long long)p->a);
        assert_string_equal(show(s, e, out), tmp);
        break;
    case SV_GOVERNOR: {
        const char *words = s->strings + p->words_off;
        char first[32];
        snprintf(first, sizeof first, "%.*s", (int)strcspn(words, " "), words);
        assert_int_equal(store(s, e, first, out, &olen), 0);
        snprintf(tmp, sizeof tmp, "%s\n", first);
        assert_string_equal(show(s, e, out), tmp);
        assert_int_equal(store(s, e, "turbo", out, &olen), EINVAL);
        break;
    }
    case SV_EPP: {
        char gov[SEG_TEXT_MAX];
        snprintf(gov, sizeof gov, "%s", show(s, p->related, tmp));
        rc = store(s, e, "balance_power", out, &olen);
        assert_int_equal(rc, p->d && !strcmp(gov, "performance\n") ? EBUSY : 0);
        assert_int_equal(store(s, e, "performance\n", out, &olen), 0);
        assert_string_equal(show(s, e, tmp), "performance\n");
        assert_int_equal(store(s, e, "77", out, &olen), p->c ? 0 : EINVAL); /* raw EPP: intel_pstate only */
        break;
    }
    case SV_UINT_CLAMP01:
        assert_int_equal(store(s, e, "7", out, &olen), 0);
        assert_string_equal(show(s, e, tmp), "1\n");
        break;
    case SV_BOOL01:
        assert_int_equal(store(s, e, "n", out, &olen), 0);
        assert_string_equal(show(s, e, tmp), "0\n");
        break;
    case SV_UW_CLAMP:
        assert_int_equal(store(s, e, "99999999999999", out, &olen), 0);
        snprintf(tmp, sizeof tmp, "%lld\n", (long long)p->b);
        assert_string_equal(show(s, e, out), tmp);
        break;
    case SV_SETSPEED:
        assert_int_equal(store(s, e, "2000000", out, &olen), strcmp(show(s, p->related, tmp), "userspace\n") ? EINVAL : 0);
        break;
    case SV_IGNORE:
        assert_string_equal(show(s, e, tmp), before); /* taken, changes nothing */
        break;
    case SV_NVML_LIMIT: { /* decimal mW within [min, max] */
        snprintf(tmp, sizeof tmp, "%lld\n", (long long)(p->a + p->b) / 2);
        assert_int_equal(store(s, e, tmp, out, &olen), p->c ? EOPNOTSUPP : 0);
        if (!p->c)
            assert_string_equal(show(s, e, out), tmp);
        snprintf(tmp, sizeof tmp, "%lld", (long long)p->b + 1);
        assert_int_equal(store(s, e, tmp, out, &olen), p->c ? EOPNOTSUPP : EINVAL);
        break;
    }
    case SV_NVML_CLOCKS: /* the maximum clamped to the highest supported clock */
        assert_int_equal(store(s, e, "0,99999", out, &olen), 0);
        snprintf(tmp, sizeof tmp, "0 %lld\n", (long long)p->b);
        assert_string_equal(show(s, e, out), tmp);
        assert_int_equal(store(s, e, "none", out, &olen), 0);
        assert_string_equal(show(s, e, tmp), "none\n");
        break;
    case SV_AMDGPU_CAP: /* whole watts, truncated; above the maximum EINVAL */
        snprintf(tmp, sizeof tmp, "%lld", (long long)p->b + 999999);
        assert_int_equal(store(s, e, tmp, out, &olen), 0);
        snprintf(tmp, sizeof tmp, "%lld\n", (long long)p->b);
        assert_string_equal(show(s, e, out), tmp);
        snprintf(tmp, sizeof tmp, "%lld", (long long)p->b + 1000000);
        assert_int_equal(store(s, e, tmp, out, &olen), EINVAL);
        break;
    case SV_DPM_LEVEL:
        assert_int_equal(store(s, e, "high", out, &olen), 0);
        assert_string_equal(show(s, e, tmp), "high\n");
        assert_int_equal(store(s, e, "turbo", out, &olen), EINVAL);
        break;
    case SV_INTEL_PL1: /* 1/8 W units, any value taken */
        assert_int_equal(store(s, e, "100060000", out, &olen), 0);
        assert_string_equal(show(s, e, tmp), "100000000\n");
        break;
    case SV_MAX_MS:
        snprintf(tmp, sizeof tmp, "%lld", (long long)p->a + 1);
        assert_int_equal(store(s, e, tmp, out, &olen), EINVAL);
        assert_int_equal(store(s, e, "500", out, &olen), 0);
        assert_string_equal(show(s, e, tmp), "500\n");
        break;
    case SV_TRIGGER: /* cpufreq/stats/reset: any text, stored as a trigger */
        assert_int_equal(store(s, e, "whatever", out, &olen), 0);
        assert_string_equal(show(s, e, tmp), "1\n");
        break;
    default:
        fail_msg("%s: A file with validator %d", path, en->validator);
    }
    (*checked)++;
}

static void test_every_writable_attribute(void **st)
{
    char path[256], err[512];
    int total = 0;
    for (int i = 0; i < ps.n; i++) {
        struct node_template t;
        assert_int_equal(node_template_build(&t, ps.items[i].name, ps.items[i].tree, 20, 1000000000, NULL, err, sizeof err),
                         0);
        seg_tmp_path(path, sizeof path, "attrs.seg");
        struct seg s;
        assert_int_equal(seg_image_write(&t.image, path, "n", &s, err, sizeof err), 0);
        int checked = 0;
        for (uint32_t e = 0; e < s.n_entries; e++) {
            const struct seg_entry *en = &s.entries[e];
            /* every file with a write bit is either modelled (A) or a static 0644 file */
            if (en->kind == SEG_FILE && en->cls == SEG_A)
                check_entry(&s, e, &checked);
            if (en->kind == SEG_FILE && en->cls != SEG_A && seg_view_of(&s, e) == SEG_VIEW_NONE)
                assert_int_equal(en->validator, SV_NONE); /* S views keep their kind there (seg_view.h) */
        }
        fprintf(stderr, "%-30s %4d writable attributes checked\n", ps.items[i].name, checked);
        if (ps.items[i].tree && yt_get(ps.items[i].tree, "powercap"))
            assert_true(checked > 0);
        total += checked;
        seg_close(&s);
        seg_tmp_clean();
        node_template_free(&t);
    }
    assert_true(total > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_every_writable_attribute)};
    return cmocka_run_group_tests(tests, profiles_setup, profiles_teardown);
}
