/* embedded: lookup in the generated table; see embedded.h. */
#include "embedded.h"

#include <string.h>

const struct embedded_file *embedded_find_in(const struct embedded_file *table, const char *path)
{
    for (const struct embedded_file *f = table; f->path; f++)
        if (!strcmp(f->path, path))
            return f;
    return NULL;
}

const struct embedded_file *embedded_find(const char *path)
{
    return embedded_find_in(embedded_files, path);
}
