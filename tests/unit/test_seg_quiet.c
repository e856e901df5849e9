/* Unit tests of segment.h "Quiet values": the builder's split (quiet values take the last
 * indices, the same calls rendered twice), the static file's template copy that readers take
 * while a quiet value's bit is clear (and that reading it allocates none of the node file's
 * pages, nor its slot's: a slot's bit says it was stored into), a quiet value's first publication (its bit set, the node's copy read from then on, by
 * the engine's readers and by a reader that maps the files), a publication killed between a
 * quiet value's store and its bit or inside its store (the journal answers; the next engine's
 * heal puts it in place and sets the bit), and a split the second rendering does not match.
 * Expected texts are the ones the test writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "seg_attr.h"
#include "seg_build.h"
#include "seg_tmp.h"
#include "segment.h"

#define NQUIET 300 /* 19 KiB of quiet values: pages of their own past the live ones */

static char path[256];

struct fx {
    struct seg s;
    uint32_t v_ctr, v_live, v_q0, v_qlast;
};

/* The same calls for both renderings: a counter, then the quiet and live values interleaved as
 * a profile's per-CPU files are. */
static void render(struct seg_builder *b, struct fx *f)
{
    char p[64], t[16];
    f->v_ctr = segb_value_counter(b, 1000, 32, false);
    segb_dynamic(b, "energy_uj", 0444, SEG_S, f->v_ctr, SV_NONE, SEG_NONE);
    for (int i = 0; i < NQUIET; i++) {
        snprintf(p, sizeof p, "cpu%d/setting", i);
        snprintf(t, sizeof t, "%d\n", 1000 + i);
        uint32_t q = segb_value_quiet(b, t);
        segb_dynamic(b, p, 0644, SEG_A, q, SV_UW_CLAMP,
                     segb_param(b, (struct seg_param){.a = 0, .b = 1000000, .related = SEG_NONE}, NULL));
        if (i == 0)
            f->v_q0 = q;
        f->v_qlast = q;
        if (i == 0) {
            f->v_live = segb_value_text(b, "live\n");
            segb_dynamic(b, "cpu0/cur", 0444, SEG_S, f->v_live, SV_NONE, SEG_NONE);
        }
    }
}

/* On /dev/shm (a tmpfs, as the engine's default root): st_blocks counts the pages a file holds,
 * those a read through a shared mapping allocates too. */
static void shm_path(char *buf, size_t len, const char *name)
{
    snprintf(seg_tmp_dir, sizeof seg_tmp_dir, "/dev/shm/hwemu-test-quiet-%d", (int)getpid());
    mkdir(seg_tmp_dir, 0700);
    snprintf(buf, len, "%s/%s", seg_tmp_dir, name);
}

static int setup(void **st)
{
    shm_path(path, sizeof path, "quiet.seg");
    struct fx *f = calloc(1, sizeof *f);
    struct seg_builder *count = segb_new();
    render(count, f);
    assert_int_equal(segb_live_count(count), 2); /* the counter and the live text; NQUIET quiet */
    assert_int_equal(f->v_live, 2); /* unsplit: in the order made */
    segb_free(count);
    struct seg_builder *b = segb_new();
    segb_quiet_split(b, 2);
    render(b, f);
    assert_int_equal(f->v_ctr, 0);
    assert_int_equal(f->v_live, 1);
    assert_int_equal(f->v_q0, 2);
    assert_int_equal(f->v_qlast, 2 + NQUIET - 1);
    assert_int_equal(seg_tmp_write(b, path, &f->s), 0);
    *st = f;
    return 0;
}

static int teardown(void **st)
{
    struct fx *f = *st;
    seg_tmp_close(&f->s);
    free(f);
    return 0;
}

static const char *read_file(struct seg *s, const char *p, char *tmp, size_t *len)
{
    uint32_t e = seg_lookup(s, p, strlen(p));
    assert_int_not_equal(e, SEG_NONE);
    const char *t = seg_read(s, e, 1000, tmp, len);
    assert_non_null(t);
    return t;
}

static long long blocks(void)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (long long)st.st_blocks;
}

static void test_template_while_bit_clear(void **st)
{
    struct fx *f = *st;
    struct seg *s = &f->s;
    assert_int_equal(s->h->first_quiet, 2);
    assert_int_equal(s->first_quiet, 2);
    /* the node file holds the header, journal, bitmap and live values, and the ledger: the
     * quiet values' pages are holes */
    uint64_t qbytes = sizeof(struct seg_value) * NQUIET;
    assert_true((uint64_t)blocks() * 512 + qbytes / 2 <= s->size);
    long long before = blocks();
    char tmp[SEG_TEXT_MAX], want[16];
    size_t len;
    for (int i = 0; i < NQUIET; i++) {
        char p[64];
        snprintf(p, sizeof p, "cpu%d/setting", i);
        const char *t = read_file(s, p, tmp, &len);
        snprintf(want, sizeof want, "%d\n", 1000 + i);
        assert_int_equal(len, strlen(want));
        assert_memory_equal(t, want, len);
        assert_false(seg_quiet_own(s, f->v_q0 + (uint32_t)i));
    }
    assert_int_equal(blocks(), before); /* reading them allocated none of the node file's pages */
    /* whatever the node file holds at a quiet value's place is not read while its bit is clear */
    memset(&s->values[f->v_qlast], 0x5a, sizeof s->values[0]);
    snprintf(want, sizeof want, "%d\n", 1000 + NQUIET - 1);
    struct seg_value v;
    assert_true(seg_value_load(s, f->v_qlast, &v));
    assert_int_equal(v.type, SEG_V_TEXT);
    assert_memory_equal(v.text, want, v.len);
    assert_ptr_equal(seg_value_at(s, f->v_qlast), &s->quiet[NQUIET - 1]);
}

static struct seg_value text(const char *t)
{
    struct seg_value v = {.type = SEG_V_TEXT, .len = (uint8_t)strlen(t)};
    memcpy(v.text, t, v.len);
    return v;
}

static void test_first_publication(void **st)
{
    struct fx *f = *st;
    struct seg *s = &f->s;
    uint32_t q = f->v_q0 + 200; /* on a page of quiet values only */
    long long before = blocks();
    struct seg_value nv = text("4242\n");
    seg_publish_begin(s);
    seg_publish_value(s, q, &nv);
    seg_publish_end(s, 2000);
    assert_true(seg_quiet_own(s, q));
    assert_false(seg_quiet_own(s, q + 1));
    assert_true(blocks() > before); /* the node's own copy took its page */
    char tmp[SEG_TEXT_MAX];
    size_t len;
    const char *t = read_file(s, "cpu200/setting", tmp, &len);
    assert_int_equal(len, 5);
    assert_memory_equal(t, "4242\n", 5);
    t = read_file(s, "cpu201/setting", tmp, &len);
    assert_memory_equal(t, "1201\n", len);
    /* a reader that maps the files: the static file's template, the node's own copy */
    struct seg r;
    char err[256];
    assert_int_equal(seg_open(&r, path, err, sizeof err), 0);
    t = read_file(&r, "cpu200/setting", tmp, &len);
    assert_memory_equal(t, "4242\n", len);
    t = read_file(&r, "cpu9/setting", tmp, &len);
    assert_int_equal(len, 5);
    assert_memory_equal(t, "1009\n", 5);
    /* an agent's store into a slot: its bit set, the slot read (newer than the applied 0) */
    uint32_t e = seg_lookup(&f->s, "cpu250/setting", strlen("cpu250/setting"));
    uint32_t slot = s->entries[e].slot;
    assert_false(atomic_load(&s->sbits[slot / 64]) >> (slot % 64) & 1);
    uint64_t seq;
    assert_false(seg_slot_load(s, slot, &seq, tmp, &len));
    seg_slot_store(&r, e, "55\n", 3, 2500);
    assert_true(atomic_load(&s->sbits[slot / 64]) >> (slot % 64) & 1);
    t = read_file(s, "cpu250/setting", tmp, &len);
    assert_int_equal(len, 3);
    assert_memory_equal(t, "55\n", 3);
    seg_close(&r);
}

/* A killed engine's last act: the journal written whole, naming value q. */
static void journal_whole(struct seg_journal *j, uint32_t q, const struct seg_value *v)
{
    uint64_t jq = atomic_load(&j->seq);
    atomic_store(&j->seq, jq + 1);
    j->value = q;
    j->v = *v;
    atomic_store(&j->seq, jq + 2);
}

static void test_killed_publication(void **st)
{
    struct fx *f = *st;
    struct seg *s = &f->s;
    struct seg_value *tmpl = malloc(sizeof *tmpl * s->n_values);
    for (uint32_t v = 0; v < s->n_values; v++)
        tmpl[v] = *seg_value_at(s, v); /* the values' types, as a template has them */
    struct seg_journal *j = s->journal;
    struct seg_value got, nv = text("777\n");

    /* killed after the value's store and before its bit: the journal names it whole */
    uint32_t q = f->v_q0 + 3;
    seg_publish_begin(s);
    journal_whole(j, q, &nv);
    s->values[q] = nv;
    assert_false(seg_quiet_own(s, q));
    assert_true(seg_value_load(s, q, &got));
    assert_memory_equal(&got, &nv, sizeof nv);
    seg_journal_heal(s, tmpl); /* the next engine: in place already; the bit set */
    assert_true(seg_quiet_own(s, q));
    seg_publish_end(s, 3000);
    /* the journal moves on to another value: the node's copy answers */
    struct seg_value ctr = tmpl[f->v_ctr];
    ctr.ctr.acc_uj = 5;
    seg_publish_begin(s);
    seg_publish_value(s, f->v_ctr, &ctr);
    seg_publish_end(s, 3100);
    assert_true(seg_value_load(s, q, &got));
    assert_memory_equal(&got, &nv, sizeof nv);

    /* killed inside a quiet value's store: half of it in place, the bit clear */
    q = f->v_q0 + 4;
    struct seg_value nv2 = text("123456\n");
    seg_publish_begin(s);
    journal_whole(j, q, &nv2);
    memcpy(&s->values[q], &nv2, 8);
    assert_false(seg_quiet_own(s, q));
    assert_true(seg_value_load(s, q, &got)); /* the journal's, whole */
    assert_memory_equal(&got, &nv2, sizeof nv2);
    assert_true(seg_values_torn(s));
    seg_journal_heal(s, tmpl);
    assert_false(seg_values_torn(s));
    assert_true(seg_quiet_own(s, q));
    assert_memory_equal(&s->values[q], &nv2, sizeof nv2);
    seg_publish_end(s, 3200);

    /* a journal of another type is not put in place, nor its bit set */
    q = f->v_q0 + 5;
    seg_publish_begin(s);
    journal_whole(j, q, &ctr);
    seg_journal_heal(s, tmpl);
    assert_false(seg_quiet_own(s, q));
    seg_publish_end(s, 3300);
    free(tmpl);
}

static void test_split_mismatch_refused(void **st)
{
    (void)st;
    char p[256], err[300];
    shm_path(p, sizeof p, "mismatch.seg");
    struct seg_builder *b = segb_new();
    segb_quiet_split(b, 1);
    segb_dynamic(b, "a", 0444, SEG_S, segb_value_text(b, "a\n"), SV_NONE, SEG_NONE);
    segb_dynamic(b, "b", 0444, SEG_S, segb_value_text(b, "b\n"), SV_NONE, SEG_NONE); /* a second live one */
    struct seg_image img;
    assert_int_equal(segb_image(b, "p", 1, 1000000000, &img, err, sizeof err), EINVAL);
    assert_non_null(strstr(err, "not deterministic"));
    segb_free(b);
    seg_tmp_clean();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_template_while_bit_clear, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_publication, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_publication, setup, teardown),
        cmocka_unit_test(test_split_mismatch_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
