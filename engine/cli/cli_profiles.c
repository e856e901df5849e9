/* cli_profiles: `hwemu profiles list|show NAME`. */
#include "cli.h"
#include "load.h"
#include "profile.h"
#include "profile_show.h"
#include "profile_validate.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char help[] =
    "Usage: hwemu profiles list [--profiles-dir DIR]\n"
    "       hwemu profiles show NAME [--profiles-dir DIR]\n"
    "\n"
    "  list         one line per profile: name, the profile it extends (- for none), where it\n"
    "               comes from (builtin or the local file), description\n"
    "  show NAME    every fact of the merged profile with its source, then its sources\n"
    "\n"
    "Options:\n"
    "  --profiles-dir DIR   local profiles added to the builtin ones (env SIM_PROFILES_DIR)\n"
    "  -h, --help           this text\n";

int cmd_profiles(int argc, char **argv)
{
    static const struct option opts[] = {
        {"profiles-dir", required_argument, 0, 'p'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *dir = cli_env("SIM_PROFILES_DIR");
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long_only(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'p': dir = optarg; break;
        case 'h': fputs(help, stdout); return EXIT_OK;
        default: return cli_bad_option("profiles", argv, opts);
        }
    }
    if (optind >= argc)
        return cli_usage_error("profiles", "say what to do: list or show NAME");
    const char *what = argv[optind];
    bool show = !strcmp(what, "show");
    if (!show && strcmp(what, "list"))
        return cli_usage_error("profiles", "unknown subcommand \"%s\" (expected list or show)", what);
    if (show && optind + 1 >= argc)
        return cli_usage_error("profiles", "show needs a profile name (see 'hwemu profiles list')");
    if (optind + (show ? 2 : 1) < argc)
        return cli_usage_error("profiles", "unexpected argument \"%s\"", argv[optind + (show ? 2 : 1)]);

    struct profile_set ps = {0};
    int rc = model_load_profiles(&ps, dir) ? EXIT_INVALID : EXIT_OK;
    if (rc == EXIT_OK && show) {
        const char *name = argv[optind + 1];
        const struct profile *p = profiles_find(&ps, name);
        if (p) {
            profile_show(stdout, p);
        } else {
            const char *names[256];
            int n = 0;
            for (int i = 0; i < ps.n && n < 255; i++)
                names[n++] = ps.items[i].name;
            names[n] = NULL;
            const char *near = closest_word(name, names);
            fprintf(stderr, "hwemu profiles: no profile named \"%s\"%s%s%s; see 'hwemu profiles list'\n", name,
                    near ? " (did you mean \"" : "", near ? near : "", near ? "\"?)" : "");
            rc = EXIT_INVALID;
        }
    } else if (rc == EXIT_OK) {
        int w = 4, we = 1;
        for (int i = 0; i < ps.n; i++) {
            int l = (int)strlen(ps.items[i].name), le = ps.items[i].extends ? (int)strlen(ps.items[i].extends) : 1;
            w = l > w ? l : w;
            we = le > we ? le : we;
        }
        for (int i = 0; i < ps.n; i++) {
            const struct profile *p = &ps.items[i];
            printf("%-*s  %-*s  %s  %s\n", w, p->name, we, p->extends ? p->extends : "-",
                   p->builtin ? "builtin" : p->file, p->description);
        }
    }
    profiles_free(&ps);
    return rc;
}
