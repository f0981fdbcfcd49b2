#include "args.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_error(const char *cmd, const char *fmt, ...) {
    /* one line, one write: several processes (MPI ranks) may report at once on the same stderr,
     * and a line written in pieces would interleave with theirs */
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    const int n = vsnprintf(NULL, 0, fmt, ap);
    char *msg = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (msg) {
        vsnprintf(msg, (size_t)n + 1, fmt, ap2);
        fprintf(stderr, "tfm%s%s: error: %s\n", *cmd ? " " : "", cmd, msg);
        free(msg);
    } else {
        fprintf(stderr, "tfm%s%s: error: ", *cmd ? " " : "", cmd);
        vfprintf(stderr, fmt, ap2);
        fputc('\n', stderr);
    }
    va_end(ap2);
    va_end(ap);
}

static void print_help(FILE *f, const cli_command *cmd, const cli_opt *opts, size_t n) {
    fprintf(f, "usage: %s\n\n%s\n\noptions:\n", cmd->usage, cmd->summary);
    for (size_t i = 0; i < n; i++) {
        const cli_opt *o = &opts[i];
        const char *arg = o->kind == OPT_INT ? " N" : o->kind == OPT_FLOAT ? " X" : o->kind == OPT_STR ? " S" : "";
        char def[128] = "";
        if (o->required) {
            snprintf(def, sizeof def, " (required)");
        } else if (o->kind == OPT_INT && *(int *)o->dst != OPT_INT_UNSET) {
            snprintf(def, sizeof def, " (default %d)", *(int *)o->dst);
        } else if (o->kind == OPT_FLOAT) {
            snprintf(def, sizeof def, " (default %g)", (double)*(float *)o->dst);
        } else if (o->kind == OPT_STR && *(const char **)o->dst) {
            snprintf(def, sizeof def, " (default %s)", *(const char **)o->dst);
        }
        fprintf(f, "  %s%-*s %s%s\n", o->name, (int)(22 - strlen(o->name)), arg, o->help, def);
    }
    fprintf(f, "  --help                 print this help and exit\n");
}

static int parse_int(const char *s, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < INT_MIN || v > INT_MAX) return 0;
    *out = (int)v;
    return 1;
}

/* What strtof accepts, whole, finite and in range: a subnormal result (1e-39) is a number, though
 * strtof flags it with ERANGE; a value so small that it rounds to 0 (1e-50) or so large that it
 * overflows (1e39) is not. */
static int parse_float(const char *s, float *out) {
    char *end;
    errno = 0;
    float v = strtof(s, &end);
    if (end == s || *end != '\0' || !isfinite(v)) return 0;
    if (errno == ERANGE && !(v != 0.0f && fpclassify(v) == FP_SUBNORMAL)) return 0;
    if (errno != 0 && errno != ERANGE) return 0;
    *out = v;
    return 1;
}

int cli_parse(const cli_command *cmd, int argc, char **argv, const cli_opt *opts, size_t n_opts) {
    int seen[64] = {0};
    if (n_opts > 64) n_opts = 64;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            print_help(stdout, cmd, opts, n_opts);
            return 1;
        }
        size_t k = 0;
        while (k < n_opts && strcmp(opts[k].name, a) != 0) k++;
        if (k == n_opts) {
            cli_error(cmd->name, "unknown option '%s'", a);
            print_help(stderr, cmd, opts, n_opts);
            return 2;
        }
        const cli_opt *o = &opts[k];
        seen[k] = 1;
        if (o->kind == OPT_FLAG) {
            *(int *)o->dst = 1;
            continue;
        }
        if (i + 1 >= argc) {
            cli_error(cmd->name, "option %s needs a value", a);
            return 2;
        }
        const char *v = argv[++i];
        int ok = 1;
        if (o->kind == OPT_INT) ok = parse_int(v, (int *)o->dst);
        else if (o->kind == OPT_FLOAT) ok = parse_float(v, (float *)o->dst);
        else *(const char **)o->dst = v;
        if (!ok) {
            cli_error(cmd->name, "option %s expects %s, got '%s'", a,
                      o->kind == OPT_INT ? "an integer" : "a finite number in the range of a 32-bit float", v);
            return 2;
        }
    }
    for (size_t k = 0; k < n_opts; k++) {
        if (opts[k].required && !seen[k]) {
            cli_error(cmd->name, "missing required option %s", opts[k].name);
            fprintf(stderr, "usage: %s\n(try: tfm %s --help)\n", cmd->usage, cmd->name);
            return 2;
        }
    }
    return 0;
}

const char *cli_given_within(int argc, char **argv, const cli_opt *opts, size_t n_opts, const void *lo,
                             const void *hi) {
    for (int i = 1; i < argc; i++) {
        size_t k = 0;
        while (k < n_opts && strcmp(opts[k].name, argv[i]) != 0) k++;
        if (k == n_opts) continue;
        const char *dst = opts[k].dst;
        if (dst >= (const char *)lo && dst < (const char *)hi) return opts[k].name;
        if (opts[k].kind != OPT_FLAG) i++; /* its value */
    }
    return NULL;
}
