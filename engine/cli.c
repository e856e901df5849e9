/* cli: shared CLI plumbing; see cli.h. */
#include "cli.h"

#include "diag.h"
#include "embedded.h"
#include "profile.h"
#include "spec.h"
#include "textfile.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const char *cli_env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "hwemu %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nRun 'hwemu %s --help' for usage.\n", cmd);
    return EXIT_USAGE;
}

int cli_load_profiles(struct profile_set *ps, const char *dir)
{
    struct diag d = {0};
    int rc = profiles_load(ps, dir, &d);
    diag_print(&d, stderr);
    if (rc)
        fprintf(stderr, "hwemu: %d problem%s in the hardware profiles; fix them and run again\n", d.count,
                d.count == 1 ? "" : "s");
    diag_free(&d);
    return rc ? EXIT_INVALID : EXIT_OK;
}

int cli_load_spec(struct cluster_spec *s, const char *path, struct profile_set *ps)
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
    return rc ? EXIT_INVALID : EXIT_OK;
}
