/* Helpers shared by the text-facing subcommands (translate, eval, train --data). */
#ifndef TFM_CLI_TEXT_IO_H
#define TFM_CLI_TEXT_IO_H

#include "tfm/tfm.h"

#include <stddef.h>

/* Reads every line of `path` (stdin if NULL or "-") with tfm_line_reader (include/tfm/fileio.h):
 * without "\n" / "\r\n". Returns 0 and prints "tfm <cmd>: error: ..." on failure (unreadable
 * file, NUL byte naming the line). */
int read_lines(const char *cmd, const char *path, char ***lines, size_t *n);
void free_lines(char **lines, size_t n);

/* Loads a model and the tokenizer stored in it; prints a clear error if either fails or the model
 * has no tokenizer. Returns 0 on failure. */
int load_model_and_tokenizer(const char *cmd, const char *path, tfm_model **m, tfm_tokenizer **tok);

/* Checks, before any work, that a file can be written at `path`, so a long run does not fail only
 * at its end: its folder exists ("cannot save to PATH: DIR is not an existing folder"), a temporary
 * file can be created there (then removed: nothing is left behind), and `path` is not a folder.
 * Prints the error naming the path and returns 0 if not. NULL and "-" (standard output) pass. */
int output_dir_ok(const char *cmd, const char *path);

/* Writes lines (each followed by "\n") to `path` atomically (tfm_atomic_file: temporary file,
 * fsync, rename), or to stdout if path is NULL or "-". Returns 0 and prints an error on failure. */
int write_lines(const char *cmd, const char *path, char *const *lines, size_t n);

#endif
