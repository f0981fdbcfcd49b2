/* libFuzzer target: the CLI argument parser (cli/args.c, cli_parse) with an option table of every
 * kind (integer, number, string, flag, required), the decoding flags of `tfm translate`/`tfm eval`
 * (cli/decoding.h, checked by make_config) and the --max-memory size parser (tfm_memory_parse).
 * The input is argv: arguments separated by NUL bytes (at most 64). Whatever the arguments, the
 * parser must return 0, 1 (--help) or 2 (usage error) without crashing, and a value it accepts must
 * be one it parsed. Seeds: fuzz/corpus/args/. */
#include "fuzz_util.h"

#include "args.h"
#include "decoding.h"
#include "tfm/memory.h"

#include <math.h>
#include <stdlib.h>

static int run(int argc, char **argv) {
    (void)argc, (void)argv;
    return 0;
}

static const cli_command cmd = {"fuzz", "the parser under fuzzing", "tfm fuzz [options]", run};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    enum { MAX_ARGS = 64 };
    char *copy = malloc(size + 1);
    if (!copy) return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "fuzz";
    for (size_t at = 0; at <= size && argc <= MAX_ARGS;) {
        argv[argc++] = copy + at;
        at += strlen(copy + at) + 1;
    }
    argv[argc] = NULL;

    int n = 7, flag = 0;
    float x = 0.5f;
    const char *s = "default", *req = NULL, *mem = NULL;
    decode_flags f = DECODE_FLAGS_DEFAULT;
    cli_opt opts[] = {
        {"--n", OPT_INT, &n, 0, "an integer"},
        {"--x", OPT_FLOAT, &x, 0, "a number"},
        {"--s", OPT_STR, &s, 0, "a string"},
        {"--flag", OPT_FLAG, &flag, 0, "a flag"},
        {"--req", OPT_STR, &req, 1, "a required string"},
        {"--mem", OPT_STR, &mem, 0, "a memory size"},
        DECODE_OPTS(f),
    };
    const int r = cli_parse(&cmd, argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (r < 0 || r > 2) __builtin_trap();
    if (r == 0) {
        if (!req || !isfinite(x) || !isfinite(f.lenpen) || !isfinite(f.max_len_a)) __builtin_trap();
        tfm_decode_config dc;
        (void)make_config("fuzz", &f, &dc);
        size_t bytes;
        if (mem) (void)tfm_memory_parse(mem, &bytes);
    }
    free(copy);
    return 0;
}
