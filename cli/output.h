/* The one way every subcommand writes its outputs (docs/HARDENING.md, kinds 6 and 7): checked
 * before any work (the folder takes a file; no output is the same file as an input), then written
 * with every write, the final flush and the close checked, so a full disk or a closed pipe is an
 * error naming the output, never a silent exit 0. */
#ifndef TFM_CLI_OUTPUT_H
#define TFM_CLI_OUTPUT_H

#include "tfm/fileio.h"

#include <stddef.h>
#include <stdio.h>

/* A path a command reads or writes and the flag that named it, for messages ("--ref"). */
typedef struct {
    const char *flag;
    const char *path;
} cli_path;

/* Checks, before any work, that a file can be written at `path`, so a long run does not fail only
 * at its end: its folder exists ("cannot save to PATH: DIR is not an existing folder"), a temporary
 * file can be created there (then removed: nothing is left behind), and `path` is not a folder.
 * Prints the error naming the path and returns 0 if not. NULL and "-" (standard output) pass. */
int output_dir_ok(const char *cmd, const char *path);

/* Checks every output of a command before any work: output_dir_ok for each, then that no output is
 * the same file as an input or as another output, by device and inode after following symlinks
 * (stat), so a symlink or a hard link to an input counts as the input. Only regular files are
 * compared: NULL, "-" (standard input/output), a device such as /dev/null and a path that does not
 * exist yet never clash with an input; two outputs clash also when neither exists yet and both name
 * the same file in the same folder. On a clash prints "--output PATH is the same file as --ref PATH: refusing
 * to overwrite an input" (both flags and paths named) and returns 0. */
int cli_outputs_ok(const char *cmd, const cli_path *in, size_t n_in, const cli_path *out, size_t n_out);

/* An output being written: standard output, or a tfm_atomic_file (temporary file renamed over the
 * path on success, so a failed run never leaves a partial file under the final name). */
typedef struct {
    FILE *f;
    tfm_atomic_file *af; /* NULL for standard output */
    const char *path;    /* NULL for standard output */
} cli_output;

/* Opens `path` for writing (standard output if NULL or "-"). Prints the error, returns 0 on
 * failure. */
int cli_output_open(const char *cmd, const char *path, cli_output *o);

/* Finishes the output. ok = 1: checks that no write failed (ferror), flushes, and for a file
 * fsyncs, closes and renames it into place; prints "cannot write PATH: reason" (or "standard
 * output") and returns 0 if any of it failed. ok = 0: a file's temporary is removed; returns 0. */
int cli_output_close(const char *cmd, cli_output *o, int ok);

/* Writes lines (each followed by "\n") to `path` (cli_output: atomically, or standard output if
 * NULL or "-"). Returns 0 and prints an error on failure. */
int write_lines(const char *cmd, const char *path, char *const *lines, size_t n);

/* Called by main after every command with its exit code: flushes and closes standard output and,
 * when the command succeeded (rc 0) but a write to standard output failed at any point (ferror),
 * or the flush or close fails, prints "tfm CMD: error: cannot write standard output: reason" and
 * returns 1. Otherwise returns rc. A closed standard output that nothing was written to passes. */
int cli_stdout_finish(const char *cmd, int rc);

#endif
