/* Helpers shared by the text-facing subcommands (translate, eval, train --data). */
#ifndef TFM_CLI_TEXT_IO_H
#define TFM_CLI_TEXT_IO_H

#include "output.h"
#include "tfm/tfm.h"

#include <stddef.h>

/* Reads every line of `path` (stdin if NULL or "-") with tfm_line_reader (include/tfm/fileio.h):
 * without "\n" / "\r\n". Returns 0 and prints "tfm <cmd>: error: ..." on failure (unreadable
 * file, NUL byte naming the line). */
int read_lines(const char *cmd, const char *path, char ***lines, size_t *n);
void free_lines(char **lines, size_t n);

/* The architectures a command runs: one tfm_arch, or MODEL_DECODES (encoder-decoder or
 * decoder-only: tfm score). */
#define MODEL_DECODES (-1)

/* Checks that the model at `path` (configuration c) has the architecture `want` (a tfm_arch or
 * MODEL_DECODES) before the command prints or trains anything. Prints, and returns 0, e.g.
 * "M is an encoder-only model (BERT): tfm translate needs an encoder-decoder model; use tfm embed
 * or tfm similarity for this one". */
int model_arch_ok(const char *cmd, const char *path, const tfm_config *c, int want);

/* Loads the tokenizer stored in model m (read from `path`, named in messages) and checks it fits
 * the model; prints a clear error and returns 0 if it has none or it does not fit. */
int model_tokenizer(const char *cmd, const char *path, const tfm_model *m, tfm_tokenizer **tok);

/* Loads a model, checks its architecture (model_arch_ok) and loads the tokenizer stored in it;
 * prints a clear error if any of it fails or the model has no tokenizer. Returns 0 on failure. */
int load_model_and_tokenizer(const char *cmd, const char *path, int want, tfm_model **m, tfm_tokenizer **tok);

#endif
