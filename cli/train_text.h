/* tfm train --data / --text: training on a text corpus (cli/train_text.c). */
#ifndef TFM_CLI_TRAIN_TEXT_H
#define TFM_CLI_TRAIN_TEXT_H

#include "args.h"

/* Runs `tfm train --data ...`; returns the process exit code. */
int train_text_run(const cli_command *cmd, int argc, char **argv);

#endif
