/* Flag parsing shared by every subcommand: a table of options, --help generated from it, and a
 * clear message plus exit code 2 for anything unknown, missing or malformed. */
#ifndef TFM_CLI_ARGS_H
#define TFM_CLI_ARGS_H

#include <limits.h>

#include <stddef.h>

typedef enum { OPT_INT, OPT_FLOAT, OPT_STR, OPT_FLAG } opt_kind;

/* An OPT_INT whose variable holds this before parsing prints no default in --help: the caller
 * fills it in when the option is not given (its help text says how). */
#define OPT_INT_UNSET INT_MIN

typedef struct {
    const char *name;  /* "--d-model" */
    opt_kind kind;
    void *dst;         /* int*, float*, const char**, int* (flag set to 1) */
    int required;
    const char *help;  /* one line; the default is printed from *dst when not required */
} cli_opt;

typedef struct {
    const char *name;    /* "init" */
    const char *summary; /* one line for `tfm --help` */
    const char *usage;   /* "tfm init [options] --save M" */
    int (*run)(int argc, char **argv);
} cli_command;

/* Parses argv[1..] (argv[0] is the subcommand name). Returns 0 when parsed, 1 when --help was
 * printed (the caller exits 0), 2 on bad usage (message and usage printed to stderr). Integers
 * reject trailing garbage and overflow; `min_nonneg` style checks are the caller's. */
int cli_parse(const cli_command *cmd, int argc, char **argv, const cli_opt *opts, size_t n_opts);

/* After a successful cli_parse of the same argv and opts: the name of the first option given on
 * the command line whose variable lies in the bytes [lo, hi) (e.g. a struct of flags), else NULL.
 * tfm train uses it to refuse model flags that --init/--resume would ignore. */
const char *cli_given_within(int argc, char **argv, const cli_opt *opts, size_t n_opts, const void *lo,
                             const void *hi);

/* Prints "tfm <cmd>: error: ..." to stderr ("tfm: error: ..." when cmd is ""). */
void cli_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Exit codes: 0 success, 1 runtime error (bad file, bad data), 2 bad usage. */
enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

#endif
