/* tfm — the transformer.c command-line tool. Dispatches to one subcommand per cli/cmd_*.c.
 *
 *   tfm [--threads N] <command> [options]
 *   tfm --version        the version and whether MPI (data-parallel training, docs/MPI.md) is in
 *
 * --threads N sets the library's thread count (tfm_set_threads; default OMP_NUM_THREADS, else
 * every core). Before anything else tfm re-executes itself once with GOMP_SPINCOUNT=10000 unless
 * OMP_WAIT_POLICY or GOMP_SPINCOUNT is set (tfm_reexec_for_shared_cores, docs/THREADS.md): the
 * OpenMP waiting policy that keeps tfm fast when other programs share the cores. */
#include "attention_png.h"
#include "commands.h"
#include "kernel_env.h"
#include "output.h"

#include "tfm/dist.h"
#include "tfm/threads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cli_command *const commands[] = {
    &cmd_init,
    &cmd_score,
    &cmd_bleu,
    &cmd_tokenize,
    &cmd_train,
    &cmd_translate,
    &cmd_eval,
    &cmd_embed,
    &cmd_similarity,
    &cmd_generate,
    &cmd_perplexity,
    &cmd_attention,
    &cmd_serve,
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f) {
    fprintf(f, "usage: tfm [--threads N] <command> [options]   (tfm <command> --help for its options)\n\n"
               "The Transformer of \"Attention Is All You Need\" in C.\n\n"
               "  --threads N  threads of the kernels (default: OMP_NUM_THREADS, else every core)\n"
               "  --version    the version, and whether this build trains with MPI (mpirun -np N tfm train)\n\n"
               "commands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++) fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
}

static int run_main(int argc, char **argv);

/* Every command's exit goes through cli_stdout_finish: a result printed to a full disk or a closed
 * pipe is an error (exit 1 naming standard output), never a silent success. */
int main(int argc, char **argv) {
    const char *cmd = argc >= 2 ? argv[1] : "";
    if (argc >= 4 && strcmp(argv[1], "--threads") == 0) cmd = argv[3];
    return cli_stdout_finish(cmd[0] == '-' ? "" : cmd, run_main(argc, argv)); /* "": tfm --version, --help */
}

static int run_main(int argc, char **argv) {
    (void)tfm_reexec_for_shared_cores(argv); /* returns only when it did not re-execute */
    int threads = 0;
    if (argc >= 2 && strcmp(argv[1], "--threads") == 0) {
        char *end = NULL;
        const long n = argc >= 3 ? strtol(argv[2], &end, 10) : 0;
        if (argc < 3 || *end != '\0' || n < 1 || n > 1024) {
            fprintf(stderr, "tfm: error: --threads needs an integer in [1, 1024]\n");
            return EXIT_USAGE;
        }
        threads = (int)n;
        argc -= 2;
        argv += 2;
    }
    tfm_set_threads(threads); /* 0: the default */
    tfm_kernel_opts kernels;
    if (cli_kernel_opts_from_env(&kernels) != 0) return EXIT_USAGE;
    cli_kernels_set(&kernels);
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--version") == 0) {
        char lib[256];
        printf("tfm %s (transformer.c)\n", TFM_VERSION);
        if (tfm_dist_compiled())
            printf("MPI: yes, %s (data-parallel training: mpirun -np N tfm train ...)\n",
                   tfm_dist_library(lib, sizeof lib));
        else
            printf("MPI: no (built without MPI; install libopenmpi-dev and rebuild to train with mpirun)\n");
        printf("BLAS: %s\n", tfm_blas_kernels());
        const char *http = cli_serve_library();
        printf("HTTP server (tfm serve): %s\n", http ? http : "no (built without libmicrohttpd: install libmicrohttpd-dev and rebuild)");
        const char *png = attention_png_library();
        printf("PNG heatmaps (tfm attention --png): %s\n", png ? png : "no (built without cairo: install libcairo2-dev and rebuild)");
        return 0;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(argv[1], commands[i]->name) == 0) return commands[i]->run(argc - 1, argv + 1);
    fprintf(stderr, "tfm: error: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return EXIT_USAGE;
}
