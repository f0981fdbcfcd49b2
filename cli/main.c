/* tfm — the transformer.c command-line tool. Dispatches to one subcommand per cli/cmd_*.c. */
#include "commands.h"

#include <stdio.h>
#include <string.h>

static const cli_command *const commands[] = {
    &cmd_init,
    &cmd_score,
    &cmd_bleu,
    &cmd_tokenize,
    &cmd_train,
    &cmd_translate,
    &cmd_eval,
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f) {
    fprintf(f, "usage: tfm <command> [options]   (tfm <command> --help for its options)\n\n"
               "The Transformer of \"Attention Is All You Need\" in C.\n\ncommands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++) fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
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
