/* seg_tmp: a directory of the test process's own for the segments a unit test writes. Each
 * segment's static file lands next to it (engine/segment/segment.h "Files") and is shared by
 * every segment of the same layout in that directory, so tests running at once must not share
 * one: /tmp/hwemu-test-<pid>/, made by seg_tmp_path and removed whole by seg_tmp_clean. */
#ifndef HWEMU_TEST_SEG_TMP_H
#define HWEMU_TEST_SEG_TMP_H
#include "seg_build.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char seg_tmp_dir[64];

/* <dir>/name into buf; the directory is made when missing. */
__attribute__((unused)) static char *seg_tmp_path(char *buf, size_t len, const char *name)
{
    snprintf(seg_tmp_dir, sizeof seg_tmp_dir, "/tmp/hwemu-test-%d", (int)getpid());
    mkdir(seg_tmp_dir, 0700);
    snprintf(buf, len, "%s/%s", seg_tmp_dir, name);
    return buf;
}

/* Removes every file of the directory (segments, static files), then the directory. */
__attribute__((unused)) static void seg_tmp_clean(void)
{
    DIR *d = seg_tmp_dir[0] ? opendir(seg_tmp_dir) : NULL;
    if (!d)
        return;
    struct dirent *de;
    char p[400];
    while ((de = readdir(d)))
        if (de->d_name[0] != '.' || (de->d_name[1] && (de->d_name[1] != '.' || de->d_name[2]))) {
            snprintf(p, sizeof p, "%s/%s", seg_tmp_dir, de->d_name);
            unlink(p);
        }
    closedir(d);
    rmdir(seg_tmp_dir);
}

/* Writes builder b (then freed) as the segment at path of node "n-0", profile "p", with a 1 s
 * tick; a refusal is printed. 0 or the errno segb_write gave. */
__attribute__((unused)) static int seg_tmp_write(struct seg_builder *b, const char *path, struct seg *out)
{
    char err[256];
    int rc = segb_write(b, path, "n-0", "p", 1, 1000000000, out, err, sizeof err);
    segb_free(b);
    if (rc)
        fprintf(stderr, "%s\n", err);
    return rc;
}

/* The engine's side of a publication, as the tests make one: a private copy of s's values to
 * change (seg_tmp_scratch), then every value that differs published through the journal
 * (seg_tmp_publish, which frees the copy; segment.h "Snapshot publication"). */
__attribute__((unused)) static struct seg_value *seg_tmp_scratch(const struct seg *s)
{
    struct seg_value *c = malloc(sizeof *c * (s->n_values + 1));
    if (!c)
        abort();
    for (uint32_t v = 0; v < s->n_values; v++)
        c[v] = *seg_value_at(s, v); /* a quiet value: the template's until published */
    return c;
}

__attribute__((unused)) static void seg_tmp_publish(struct seg *s, struct seg_value *c, int64_t now_ns)
{
    seg_publish_begin(s);
    for (uint32_t v = 0; v < s->n_values; v++)
        if (memcmp(&c[v], seg_value_at(s, v), sizeof *c))
            seg_publish_value(s, v, &c[v]);
    seg_publish_end(s, now_ns);
    free(c);
}

/* Closes s and removes the directory with everything in it. */
__attribute__((unused)) static void seg_tmp_close(struct seg *s)
{
    seg_close(s);
    seg_tmp_clean();
}
#endif
