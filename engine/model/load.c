/* load: loading the profiles and a spec for a command, with every problem printed on stderr
 * for a person (file:line:col lines, then a one-line summary). See load.h. */
#include "load.h"

#include "diag.h"
#include "embedded.h"
#include "profile.h"
#include "spec.h"
#include "textfile.h"

#include <stdio.h>
#include <stdlib.h>

int model_load_profiles(struct profile_set *ps, const char *dir)
{
    struct diag d = {0};
    int rc = profiles_load(ps, dir, &d);
    diag_print(&d, stderr);
    if (rc)
        fprintf(stderr, "hwemu: %d problem%s in the hardware profiles; fix them and run again\n", d.count,
                d.count == 1 ? "" : "s");
    diag_free(&d);
    return rc ? -1 : 0;
}

int model_load_spec(struct cluster_spec *s, const char *path, struct profile_set *ps)
{
    struct diag d = {0};
    int rc;
    if (!path) {
        const struct embedded_file *f = embedded_find("specs/smoke.yaml");
        rc = spec_load(s, "builtin:specs/smoke.yaml", f->data, f->len, ps, &d);
    } else {
        size_t len;
        char *text = textfile_read(path, &len, &d);
        rc = text ? spec_load(s, path, text, len, ps, &d) : -1;
        free(text);
    }
    diag_print(&d, stderr);
    if (rc)
        fprintf(stderr, "hwemu: %s: %d problem%s; the spec was not loaded\n", path ? path : "builtin smoke spec",
                d.count, d.count == 1 ? "" : "s");
    diag_free(&d);
    return rc ? -1 : 0;
}
