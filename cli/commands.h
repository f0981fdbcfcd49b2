/* The subcommands of `tfm`; each lives in its own cli/cmd_*.c file. */
#ifndef TFM_CLI_COMMANDS_H
#define TFM_CLI_COMMANDS_H

#include "args.h"

extern const cli_command cmd_init;
extern const cli_command cmd_score;
extern const cli_command cmd_bleu;
extern const cli_command cmd_tokenize;
extern const cli_command cmd_train;
extern const cli_command cmd_translate;
extern const cli_command cmd_eval;
extern const cli_command cmd_embed;
extern const cli_command cmd_similarity;
extern const cli_command cmd_generate;
extern const cli_command cmd_perplexity;
extern const cli_command cmd_attention;
extern const cli_command cmd_serve; /* cli/serve/cmd_serve.c */

/* "libmicrohttpd 0.9.75" when tfm serve is built, else NULL (cli/serve/cmd_serve.c). */
const char *cli_serve_library(void);

#endif
