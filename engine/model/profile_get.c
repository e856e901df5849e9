/* profile_get: see profile_get.h. */
#include "profile_get.h"

#include "ytree.h"

long long prof_int(const struct yt_node *tree, const char *path, long long dflt)
{
    long long v;
    return yt_int(yt_path(tree, path), &v) ? v : dflt;
}

double prof_num(const struct yt_node *tree, const char *path, double dflt)
{
    double v;
    return yt_double(yt_path(tree, path), &v) ? v : dflt;
}

const char *prof_str(const struct yt_node *tree, const char *path, const char *dflt)
{
    const char *s = yt_str(yt_path(tree, path));
    return s ? s : dflt;
}

bool prof_bool(const struct yt_node *tree, const char *path, bool dflt)
{
    bool v;
    return yt_bool(yt_path(tree, path), &v) ? v : dflt;
}
