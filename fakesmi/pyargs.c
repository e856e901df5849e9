/* pyargs: Python's argparse, float repr, int() and json string escaping, as rocm-smi and
 * amd-smi show them; see pyargs.h. */
#include "pyargs.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void py_float(double v, char *buf, size_t cap)
{
    if (isnan(v) || isinf(v)) {
        snprintf(buf, cap, "%s", isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
        return;
    }
    /* The shortest %e that reads back as v gives the digits and the exponent. */
    char e[40];
    for (int prec = 0; prec < 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec, v);
        if (strtod(e, NULL) == v)
            break;
    }
    char digits[24];
    int nd = 0;
    const char *p = e + (e[0] == '-');
    for (; *p != 'e'; p++)
        if (isdigit((unsigned char)*p))
            digits[nd++] = *p;
    int exp = atoi(p + 1);
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    char out[64];
    int k = 0;
    if (signbit(v))
        out[k++] = '-';
    if (v == 0) {
        k += sprintf(out + k, "0.0");
    } else if (exp < -4 || exp >= 16) {
        out[k++] = digits[0];
        if (nd > 1)
            k += sprintf(out + k, ".%.*s", nd - 1, digits + 1);
        k += sprintf(out + k, "e%c%02d", exp < 0 ? '-' : '+', abs(exp));
    } else if (exp < 0) {
        k += sprintf(out + k, "0.%.*s%.*s", -exp - 1, "000", nd, digits); /* exp is -4..-1 */
    } else {
        for (int d = 0; d <= exp || d < nd; d++) {
            if (d == exp + 1)
                out[k++] = '.';
            out[k++] = d < nd ? digits[d] : '0';
        }
        if (nd <= exp + 1)
            k += sprintf(out + k, ".0");
    }
    out[k] = 0;
    snprintf(buf, cap, "%s", out);
}

bool py_int(const char *s, long long *out)
{
    while (isspace((unsigned char)*s))
        s++;
    bool neg = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    long long v = 0;
    bool digit_before = false;
    for (; *s && !isspace((unsigned char)*s); s++) {
        if (*s == '_' && digit_before && isdigit((unsigned char)s[1])) {
            digit_before = false;
            continue;
        }
        if (!isdigit((unsigned char)*s) || v > (INT64_MAX - (*s - '0')) / 10)
            return false;
        v = v * 10 + (*s - '0');
        digit_before = true;
    }
    while (isspace((unsigned char)*s))
        s++;
    if (!digit_before || *s)
        return false;
    *out = neg ? -v : v;
    return true;
}

bool py_isdigit(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return false;
    return true;
}

/* One UTF-8 sequence at *s: its code point, or U+FFFD for a malformed byte. */
static unsigned utf8_next(const unsigned char **s)
{
    const unsigned char *p = *s;
    int n = p[0] >= 0xf0 ? 3 : p[0] >= 0xe0 ? 2 : p[0] >= 0xc0 ? 1 : 0;
    unsigned cp = p[0] & (0x3f >> n);
    for (int i = 1; i <= n; i++) {
        if ((p[i] & 0xc0) != 0x80) {
            *s = p + 1;
            return 0xfffd;
        }
        cp = cp << 6 | (p[i] & 0x3f);
    }
    *s = p + (n ? n + 1 : 1);
    return n ? cp : 0xfffd;
}

/* The two-character escape json.dumps uses for c, or 0. */
static char short_escape(unsigned char c)
{
    switch (c) {
    case '"': return '"';
    case '\\': return '\\';
    case '\n': return 'n';
    case '\r': return 'r';
    case '\t': return 't';
    case '\b': return 'b';
    case '\f': return 'f';
    }
    return 0;
}

void py_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        if (short_escape(*p)) {
            fprintf(f, "\\%c", short_escape(*p++));
        } else if (*p < 0x20) {
            fprintf(f, "\\u%04x", *p++);
        } else if (*p < 0x80) {
            fputc(*p++, f);
        } else {
            unsigned cp = utf8_next(&p);
            if (cp > 0xffff)
                fprintf(f, "\\u%04x\\u%04x", 0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff));
            else
                fprintf(f, "\\u%04x", cp);
        }
    }
    fputc('"', f);
}

void py_parser(struct py_args *p, const char *prog, const char *spec, const struct py_model *models)
{
    memset(p, 0, sizeof *p);
    p->prog = prog;
    snprintf(p->spec, sizeof p->spec, "%s", spec);
    for (char *group = strtok(p->spec, " "); group && p->nopt < PY_OPT_MAX; group = strtok(NULL, " ")) {
        struct py_opt *o = &p->opt[p->nopt++];
        for (char *f = group; f && o->nflags < 4; o->nflags++) {
            o->flags[o->nflags] = f;
            if ((f = strchr(f, '/')))
                *f++ = 0;
        }
        for (const struct py_model *m = models; m->flag; m++)
            if (!strcmp(m->flag, o->flags[o->nflags - 1]))
                o->model = m;
    }
}

static struct py_opt *find_flag(struct py_args *p, const char *flag)
{
    for (int i = 0; i < p->nopt; i++)
        for (int k = 0; k < p->opt[i].nflags; k++)
            if (!strcmp(p->opt[i].flags[k], flag))
                return &p->opt[i];
    return NULL;
}

/* argparse's _negative_number_matcher, '^-\d+$|^-\d*\.\d+$': such an argument is a value. */
static bool negative_number(const char *a)
{
    const char *s = a + 1;
    size_t int_digits = strspn(s, "0123456789");
    if (!s[int_digits])
        return int_digits > 0;
    return s[int_digits] == '.' && s[int_digits + 1] && strspn(s + int_digits + 1, "0123456789") == strlen(s + int_digits + 1);
}

/* Does argparse take the argument as an option string rather than a value? */
static bool option_like(const char *a)
{
    return a[0] == '-' && a[1] && !negative_number(a) && !strchr(a, ' ');
}

/* The option's name in messages, "-d/--device". */
static const char *opt_name(const struct py_opt *o, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    for (int k = 0; k < o->nflags; k++)
        n += snprintf(buf + n, n < cap ? cap - n : 0, "%s%s", k ? "/" : "", o->flags[k]);
    return buf;
}

/* _parse_optional: the option an argument names, exactly, as --opt=value, as a unique prefix
 * of a long option, or as a short option with the rest attached (-d0, -PM). *explicit is the
 * attached value or NULL. Returns the option (NULL when unknown) or sets p->err on an
 * ambiguous prefix. */
static struct py_opt *lookup(struct py_args *p, const char *arg, char *flag, size_t flagcap, const char **explicit)
{
    struct py_opt *o = find_flag(p, arg);
    *explicit = NULL;
    snprintf(flag, flagcap, "%s", arg);
    if (o)
        return o;
    if (arg[1] == '-') {
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        snprintf(flag, flagcap, "%.*s", (int)len, arg);
        if (eq && (o = find_flag(p, flag))) {
            *explicit = eq + 1;
            return o;
        }
        char matches[1800] = "";
        size_t n = 0;
        int count = 0;
        for (int i = 0; i < p->nopt; i++)
            for (int k = 0; k < p->opt[i].nflags; k++) {
                const char *f = p->opt[i].flags[k];
                if (f[1] == '-' && !strncmp(f, arg, len)) {
                    n += snprintf(matches + n, n < sizeof matches ? sizeof matches - n : 0, "%s%s", count ? ", " : "", f);
                    o = &p->opt[i];
                    if (!count++)
                        snprintf(flag, flagcap, "%s", f);
                }
            }
        if (count > 1) {
            snprintf(p->err, sizeof p->err, "ambiguous option: %s could match %s", arg, matches);
            return NULL;
        }
        if (count == 1)
            *explicit = eq ? eq + 1 : NULL;
        return o;
    }
    snprintf(flag, flagcap, "%.2s", arg);
    if (strlen(arg) > 2 && (o = find_flag(p, flag)))
        *explicit = arg + 2;
    return o;
}

static void record(struct py_args *p, struct py_opt *o, const char *const *vals, int n)
{
    if (!o->seen)
        o->order = p->nseen++;
    o->seen = true;
    o->vals = vals;
    o->nvals = n;
}

static void add_extra(struct py_args *p, const char *a)
{
    if (p->nextras < PY_EXTRA_MAX)
        p->extras[p->nextras++] = a;
}

/* Takes the values of option o given as flag at argv[*i]; 0, or -1 with p->err. */
static int take_values(struct py_args *p, struct py_opt *o, int argc, char **argv, int *i, const char *explicit)
{
    char name[128];
    const struct py_model *m = o->model;
    int n = 0;
    if (explicit) {
        /* argparse takes exactly one attached value. */
        if (m->nargs != 1 && m->nargs != PY_PLUS) {
            snprintf(p->err, sizeof p->err, "argument %s: expected %d arguments", opt_name(o, name, sizeof name), m->nargs);
            return -1;
        }
        o->explicit_val = explicit;
        record(p, o, &o->explicit_val, 1);
    } else {
        while (*i + 1 + n < argc && (m->nargs == PY_PLUS || n < m->nargs) && !option_like(argv[*i + 1 + n]) &&
               strcmp(argv[*i + 1 + n], "--"))
            n++;
        if (n == 0 || (m->nargs > 1 && n != m->nargs)) {
            opt_name(o, name, sizeof name);
            if (m->nargs == PY_PLUS)
                snprintf(p->err, sizeof p->err, "argument %s: expected at least one argument", name);
            else if (m->nargs == 1)
                snprintf(p->err, sizeof p->err, "argument %s: expected one argument", name);
            else
                snprintf(p->err, sizeof p->err, "argument %s: expected %d arguments", name, m->nargs);
            return -1;
        }
        record(p, o, (const char *const *)&argv[*i + 1], n);
        *i += n;
    }
    for (int k = 0; m->is_int && k < o->nvals; k++) {
        long long v;
        if (!py_int(o->vals[k], &v)) {
            snprintf(p->err, sizeof p->err, "argument %s: invalid int value: '%s'", opt_name(o, name, sizeof name),
                     o->vals[k]);
            return -1;
        }
    }
    return 0;
}

int py_parse(struct py_args *p, int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i], *explicit;
        char flag[64], name[128];
        if (!strcmp(arg, "--")) {
            while (++i < argc)
                add_extra(p, argv[i]);
            break;
        }
        if (!option_like(arg)) {
            add_extra(p, arg);
            continue;
        }
        struct py_opt *o = lookup(p, arg, flag, sizeof flag, &explicit);
        if (p->err[0])
            return -1;
        if (!o)
            add_extra(p, arg);
        while (o) {
            if (!o->model) {
                p->unmodelled = o->flags[0];
                for (int k = 1; k < o->nflags; k++)
                    if (!strcmp(o->flags[k], flag))
                        p->unmodelled = o->flags[k];
                return 0;
            }
            if (!strcmp(o->model->flag, "--help")) {
                p->help = true;
                return 0;
            }
            if (o->model->nargs) {
                if (take_values(p, o, argc, argv, &i, explicit))
                    return -1;
                break;
            }
            if (explicit && (flag[1] == '-' || !*explicit)) {
                snprintf(p->err, sizeof p->err, "argument %s: ignored explicit argument '%s'",
                         opt_name(o, name, sizeof name), explicit);
                return -1;
            }
            record(p, o, NULL, 0);
            if (!explicit)
                break;
            /* -PM: a flag, then the next single-character flag. */
            char next[3] = {flag[0], explicit[0], 0};
            struct py_opt *n = find_flag(p, next);
            if (!n) {
                snprintf(p->err, sizeof p->err, "argument %s: ignored explicit argument '%s'",
                         opt_name(o, name, sizeof name), explicit);
                return -1;
            }
            snprintf(flag, sizeof flag, "%s", next);
            explicit = explicit[1] ? explicit + 1 : NULL;
            o = n;
        }
    }
    return 0;
}

const struct py_opt *py_get(const struct py_args *p, const char *flag)
{
    for (int i = 0; i < p->nopt; i++)
        if (p->opt[i].seen && p->opt[i].model && !strcmp(p->opt[i].model->flag, flag))
            return &p->opt[i];
    return NULL;
}

const struct py_opt *py_nth(const struct py_args *p, int order)
{
    for (int i = 0; i < p->nopt; i++)
        if (p->opt[i].seen && p->opt[i].order == order)
            return &p->opt[i];
    return NULL;
}

const char *py_extras(const struct py_args *p, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < p->nextras && n < cap; i++)
        n += snprintf(buf + n, cap - n, "%s%s", i ? " " : "", p->extras[i]);
    return buf;
}

/* The usage line of the modelled options, "usage: rocm-smi [-h] [-d DEVICE [DEVICE ...]]". */
static void usage(const struct py_args *p, FILE *f)
{
    fprintf(f, "usage: %s", p->prog);
    for (int i = 0; i < p->nopt; i++) {
        const struct py_model *m = p->opt[i].model;
        if (!m)
            continue;
        fprintf(f, " [%s", p->opt[i].flags[0]);
        if (m->nargs == PY_PLUS)
            fprintf(f, " %s [%s ...]", m->metavar, m->metavar);
        else if (m->nargs)
            fprintf(f, " %s", m->metavar);
        fputc(']', f);
    }
    fputc('\n', f);
}

int py_fail(const struct py_args *p, const char *msg)
{
    fflush(stdout);
    usage(p, stderr);
    fprintf(stderr, "%s: error: %s\n", p->prog, msg);
    return 2;
}

int py_help(const struct py_args *p)
{
    usage(p, stdout);
    fputs("\nOptions emulated by fakesmi:\n", stdout);
    for (int i = 0; i < p->nopt; i++) {
        if (!p->opt[i].model)
            continue;
        fputs("  ", stdout);
        for (int k = 0; k < p->opt[i].nflags; k++)
            printf("%s%s", k ? ", " : "", p->opt[i].flags[k]);
        putchar('\n');
    }
    return 0;
}
