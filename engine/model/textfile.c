/* textfile: whole-file reads; see textfile.h. */
#include "textfile.h"

#include "diag.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char *textfile_read(const char *path, size_t *len, struct diag *d)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        diag_add(d, path, "cannot open: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        diag_add(d, path, "is a directory, expected a YAML file");
        fclose(f);
        return NULL;
    }
    size_t cap = 8192, used = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (used + 1 >= cap) {
            if (cap >= TEXTFILE_MAX) {
                diag_add(d, path, "larger than %d MiB; is this the right file?", TEXTFILE_MAX >> 20);
                free(buf);
                fclose(f);
                return NULL;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb)
                break;
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + used, 1, cap - used - 1, f);
        used += got;
        if (got == 0) {
            if (ferror(f)) {
                diag_add(d, path, "read error: %s", strerror(errno));
                free(buf);
                fclose(f);
                return NULL;
            }
            break;
        }
    }
    fclose(f);
    if (!buf) {
        diag_add(d, path, "out of memory reading the file");
        return NULL;
    }
    buf[used] = 0;
    if (memchr(buf, 0, used)) {
        diag_add(d, path, "contains NUL bytes; expected a YAML text file");
        free(buf);
        return NULL;
    }
    if (len)
        *len = used;
    return buf;
}
