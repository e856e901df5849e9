/* seg_vandal: does to a node's segment what a hostile or broken agent could, for
 * tests/cli/test_hostile_segment.sh. It maps the file itself (read-write, as any process that
 * may write the node's slots can) and, by the layout it found at the start (segment.h):
 *   random SEED N      N random bytes at random offsets of the whole file
 *   header             hostile counts and offsets in the header, substep_ns = 0, a torn magic
 *   entries            junk in the entry table and the string pool's last NUL, in the node's
 *                      static file (segment.h "Files"), which every node of its layout shares
 *   static-truncate BYTES  the static file cut to BYTES
 *   hwm                every read high-water mark at 2^62
 *   ring               ring_head near 2^64 and events naming entries that do not exist
 *   slots              slot sequences odd (a writer that never finishes), lengths of 2^32-1
 *   gen MS             the publication generation bumped in a loop for MS milliseconds
 *   journal MS         the journal (segment.h "Snapshot publication", in the header's page, which
 *                      agents can store into) bumped in a loop for MS milliseconds, naming values
 *                      that do not exist and junk ones, left naming one that does not
 *   truncate BYTES     the file cut to BYTES
 * Exit 0, or 1 with a message when the file is not a segment. */
#include "segment.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: seg_vandal FILE random SEED N | header | entries | hwm | ring | slots | gen MS | "
                        "journal MS | truncate BYTES | static-truncate BYTES\n");
        return 2;
    }
    const char *what = argv[2];
    int fd = open(argv[1], O_RDWR);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || st.st_size < (off_t)sizeof(struct seg_header)) {
        perror(argv[1]);
        return 1;
    }
    if (!strcmp(what, "truncate"))
        return ftruncate(fd, argc > 3 ? atoll(argv[3]) : 0) ? 1 : 0;
    size_t size = (size_t)st.st_size;
    uint8_t *b = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (b == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    struct seg_header *h = (struct seg_header *)b, h0 = *h;
    if (memcmp(h0.magic, SEG_MAGIC, 8)) {
        fprintf(stderr, "%s: not a segment\n", argv[1]);
        return 1;
    }
    if (!strcmp(what, "random")) {
        srand(argc > 3 ? (unsigned)atoi(argv[3]) : 1);
        long n = argc > 4 ? atol(argv[4]) : 1000;
        for (long i = 0; i < n; i++)
            b[(size_t)rand() % size] = (uint8_t)rand();
    } else if (!strcmp(what, "header")) {
        h->n_counters = 0x7fffffff;
        h->n_slots = 0xfffffff0;
        h->ring_cap = 3;
        h->n_entries = 0xffffffff;
        h->strings_size = 0xffffffff;
        h->values_off = 0xfffffff8;
        h->ledger_off = 0xfffffff8;
        h->substep_ns = 0;
        h->file_size = 1;
        h->magic[7] = 'X';
    } else if (!strcmp(what, "entries") || !strcmp(what, "static-truncate")) {
        char sp[4096];
        struct stat ss;
        if (seg_static_path(argv[1], h0.layout_hash, sp, sizeof sp) == 0)
            chmod(sp, 0644); /* read-only on disk: its owner can still make it writable */
        int sfd = open(sp, O_RDWR);
        if (sfd < 0 || fstat(sfd, &ss) || ss.st_size < (off_t)sizeof(struct seg_static_header)) {
            perror(sp);
            return 1;
        }
        if (!strcmp(what, "static-truncate"))
            return ftruncate(sfd, argc > 3 ? atoll(argv[3]) : 0) ? 1 : 0;
        uint8_t *sb = mmap(NULL, (size_t)ss.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, sfd, 0);
        if (sb == MAP_FAILED) {
            perror("mmap");
            return 1;
        }
        struct seg_static_header sh = *(struct seg_static_header *)sb;
        struct seg_entry *e = (struct seg_entry *)(sb + sh.entries_off);
        for (uint32_t i = 0; i < sh.n_entries; i += 3) {
            e[i].path_off = 0xfffffff0u - i;
            e[i].value = 0x7ffffff0u + i;
            e[i].slot = 0x7ffffff0u + i;
            e[i].param = 0xfffffffeu;
            e[i].parent = 0xfffffffeu;
            e[i].text_off = 0xffffff00u;
            e[i].text_len = 0xffffffffu;
        }
        sb[sh.strings_off + sh.strings_size - 1] = 'x';
    } else if (!strcmp(what, "hwm")) {
        uint64_t *m = (uint64_t *)(b + h0.hwm_off);
        for (uint32_t v = 0; v < h0.n_values; v++)
            m[v] = UINT64_C(1) << 62;
    } else if (!strcmp(what, "ring")) {
        struct seg_event *r = (struct seg_event *)(b + h0.ring_off);
        for (uint32_t i = 0; i < h0.ring_cap; i++) {
            r[i].entry = 0xfffffff0u;
            r[i].len = 0xffffffffu;
            r[i].seq = i + 1;
        }
        h->ring_head = UINT64_MAX - 5;
    } else if (!strcmp(what, "slots")) {
        struct seg_slot *sl = (struct seg_slot *)(b + h0.slots_off);
        for (uint32_t i = 0; i < h0.n_slots; i++) {
            sl[i].seq = 2 * i + 1001;
            sl[i].len = 0xffffffffu;
        }
        h->slot_writes += 1;
    } else if (!strcmp(what, "gen")) {
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        long ms = argc > 3 ? atol(argv[3]) : 500;
        do {
            for (int i = 0; i < 10000; i++)
                h->gen++;
            clock_gettime(CLOCK_MONOTONIC, &t);
        } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
    } else if (!strcmp(what, "journal")) {
        if (h0.journal_off > size || size - h0.journal_off < sizeof(struct seg_journal)) {
            fprintf(stderr, "%s: no journal where the header says\n", argv[1]);
            return 1;
        }
        struct seg_journal *j = (struct seg_journal *)(b + h0.journal_off);
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        long ms = argc > 3 ? atol(argv[3]) : 500;
        uint32_t k = 0;
        do {
            for (int i = 0; i < 10000; i++, k++) {
                j->seq++;
                j->value = k % 3 ? 0xfffffff0u - k : k % (h0.n_values + 1);
                memset(&j->v, (int)(k & 0xff), sizeof j->v);
            }
            clock_gettime(CLOCK_MONOTONIC, &t);
        } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
        j->value = 0xfffffff0u;
        j->seq = (j->seq | 1) + 1;
    } else {
        fprintf(stderr, "seg_vandal: unknown attack %s\n", what);
        return 2;
    }
    msync(b, size, MS_SYNC);
    return 0;
}
