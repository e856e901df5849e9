/* cli: shared CLI plumbing; see cli.h. */
#include "cli.h"


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
