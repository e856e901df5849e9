/* pyargs: what rocm-smi and amd-smi inherit from being Python programs: argparse's parsing
 * and error texts, repr() of a float, int(), str.isdigit() and json.dumps of a string. Nothing
 * here writes to stdout or stderr except where a function says so (py_fail, py_help). */
#ifndef HWEMU_FAKESMI_PYARGS_H
#define HWEMU_FAKESMI_PYARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Python's repr(float): the shortest digits that read back exactly, ".0" on whole numbers,
 * exponent form below 1e-4 and from 1e16 (750000000 / 1e6 -> "750.0", 7222000 / 1e6 ->
 * "7.222"). */
void py_float(double v, char *buf, size_t cap);
/* Python's int(str) for a decimal literal: surrounding whitespace, a sign, digits with single
 * underscores between them. False when it is not one, or does not fit 64 bits. */
bool py_int(const char *s, long long *out);
/* Python's str.isdigit() for ASCII: non-empty and digits only. */
bool py_isdigit(const char *s);
/* json.dumps of a string (ensure_ascii) to f. */
void py_json_str(FILE *f, const char *s);

/* argparse. A parser is built from its option strings in registration order, "-h/--help
 * -d/--device ...", so prefix abbreviation resolves and collides as in the real tool. The
 * options fakesmi models are named by their long flag in a table; any other option is real
 * but not modelled, and parsing stops at it. */
#define PY_PLUS (-1)     /* nargs='+' */
#define PY_OPT_MAX 128   /* option groups per parser */
#define PY_EXTRA_MAX 256 /* unrecognized arguments kept */

struct py_model {
    const char *flag;    /* the long flag, such as "--device" */
    int nargs;           /* 0 for a flag, n values, or PY_PLUS */
    const char *metavar; /* "DEVICE", "PWR_TYPE WATTS" */
    bool is_int;         /* type=int */
};

struct py_opt {
    const char *flags[4];        /* option strings in registration order */
    int nflags;
    const struct py_model *model; /* NULL: real, not modelled */
    bool seen;
    int order;                    /* rank of its first appearance */
    const char *const *vals;      /* the last occurrence's values */
    int nvals;
    const char *explicit_val;     /* storage for a value given as --opt=value or -d0 */
};

struct py_args {
    const char *prog;
    char spec[2048]; /* the option strings, cut in place */
    struct py_opt opt[PY_OPT_MAX];
    int nopt;
    const char *extras[PY_EXTRA_MAX]; /* arguments no option took */
    int nextras;
    int nseen;
    bool help;              /* -h or --help: print_help and exit 0 */
    const char *unmodelled; /* the first real option fakesmi does not model */
    char err[2048];         /* the argparse error after a failed parse */
};

/* Builds a parser from spec; models ends with a NULL flag. */
void py_parser(struct py_args *p, const char *prog, const char *spec, const struct py_model *models);
/* Parses args as parse_known_args does, stopping at -h and at an unmodelled option: 0, or -1
 * with the argparse error message in p->err. */
int py_parse(struct py_args *p, int argc, char **argv);
/* The modelled option of that long flag when the arguments gave it, else NULL. */
const struct py_opt *py_get(const struct py_args *p, const char *flag);
/* The option given in the order-th place (0 first), NULL past the last. */
const struct py_opt *py_nth(const struct py_args *p, int order);
/* The unrecognized arguments joined by spaces, in buf. */
const char *py_extras(const struct py_args *p, char *buf, size_t cap);
/* ArgumentParser.error: usage and "<prog>: error: <msg>" on stderr; returns 2. */
int py_fail(const struct py_args *p, const char *msg);
/* -h: the usage line and the emulated options on stdout; returns 0. */
int py_help(const struct py_args *p);

#endif
