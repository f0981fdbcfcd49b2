/* transformer.c — text files in, files out: the one line reader and the one atomic file writer
 * that the library and the `tfm` tool use for every text, id, checkpoint and tokenizer file.
 *
 * Line reader: lines of any length (or up to a limit), "\n" or "\r\n" line ends, a last line
 * without "\n" kept, NUL bytes refused, 1-based line numbers for error messages.
 *
 * Atomic writer: a file appears under its final name complete or not at all. The bytes go to a
 * temporary file created with mkstemp beside the target (same folder, so the rename cannot cross
 * file systems), which gets the usual permissions 0666 & ~umask (read from /proc/self/status,
 * 022 where that is unavailable: the process umask is never changed), then fsync, rename over the
 * target, and an fsync of the folder so the new name survives a power loss. On any error the
 * previous file at the target path is untouched and the temporary file is removed.
 *
 * Thread-safety: a reader or a writer is used by one thread at a time; different ones are
 * independent. */
#ifndef TFM_FILEIO_H
#define TFM_FILEIO_H

#include "tfm/export.h"

#include "tfm/status.h"

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- line reader ------------------------------------------------------------------------- */

typedef struct tfm_line_reader tfm_line_reader;

/** Opens the file `path` for reading line by line. max_line_bytes is the longest line accepted,
 * in bytes without its line end (0: no limit). Errors: TFM_ERR_IO ("cannot open PATH: reason"),
 * TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_line_reader_open(const char *path, size_t max_line_bytes, tfm_line_reader **out);

/** The same over a stream the caller opened (stdin, a pipe); tfm_line_reader_free() does not
 * close it. `name` (copied) stands for the stream in messages, e.g. "<stdin>". */
TFM_API tfm_status tfm_line_reader_from_stream(FILE *f, const char *name, size_t max_line_bytes, tfm_line_reader **out);

/** The next line: *line points to its bytes without "\n" or "\r\n" (a lone "\r" at the end of the
 * last line is dropped too), and without a UTF-8 byte order mark (EF BB BF) that starts the file
 * (Windows editors write one; it is not text, so a file reads the same with and without it: a
 * U+FEFF anywhere else is kept), NUL-terminated, *len bytes long, valid until the next call or
 * tfm_line_reader_free(). At the end of the file *line is NULL and *len 0 (an empty file has no
 * lines; "a\n" and "a" have one). len may be NULL.
 * Errors (name = the path or stream name, LINE = 1-based line number):
 *   TFM_ERR_FORMAT "NAME:LINE: NUL byte at byte column C (not a text file?)",
 *   TFM_ERR_FORMAT "NAME:LINE: line longer than the limit of N bytes",
 *   TFM_ERR_IO "error reading NAME: reason", TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_line_reader_next(tfm_line_reader *r, const char **line, size_t *len);

/** The 1-based number of the line the last tfm_line_reader_next() returned (0 before the first). */
TFM_API size_t tfm_line_reader_line_number(const tfm_line_reader *r);

/** The path or stream name given when the reader was made. */
TFM_API const char *tfm_line_reader_name(const tfm_line_reader *r);

/** Counts the lines not read yet (no length limit, NUL bytes not checked), consuming them; for
 * messages such as "a has 5 lines but b has 7". Errors: TFM_ERR_IO. */
TFM_API tfm_status tfm_line_reader_count_rest(tfm_line_reader *r, size_t *n_lines);

/** Frees the reader and closes its file (not a stream given to from_stream). NULL is allowed. */
TFM_API void tfm_line_reader_free(tfm_line_reader *r);

/** What tfm_text_file_scan found: lines, and of them blank ones (tfm_text_is_blank). */
typedef struct {
    size_t lines;
    size_t blank;
} tfm_text_file_stats;

/** Reads every line of the text file `path` (max_line_bytes as tfm_line_reader_open) and checks
 * what training checks of it, without a tokenizer, so that a command can refuse bad input before
 * any work (a tokenizer trained for minutes, then "invalid UTF-8 on line 9,000"). Errors: those of
 * the line reader (cannot open, NUL byte, line too long: PATH:LINE), TFM_ERR_FORMAT
 * "PATH:LINE: invalid UTF-8 at byte offset B of the line". */
TFM_API tfm_status tfm_text_file_scan(const char *path, size_t max_line_bytes, tfm_text_file_stats *st);

/* ---- atomic file writer ------------------------------------------------------------------ */

typedef struct tfm_atomic_file tfm_atomic_file;

/** Starts writing `path` atomically: creates "PATH.tmp.XXXXXX" beside it with mode
 * 0666 & ~umask, holding an flock on it until commit or abort. First it removes the temporary
 * files of `path` that a writer killed before its rename left behind ("PATH.tmp." and six
 * characters, not locked by a live writer), so repeated crashes do not fill the folder. Write through tfm_atomic_file_stream(), then tfm_atomic_file_commit() (or
 * tfm_atomic_file_abort() to give up). A `path` that exists and is neither a regular file nor a
 * folder (a device such as /dev/null or /dev/full, a FIFO) is opened and written in place, not
 * atomically: a rename would replace the device by a regular file. A `path` that is a symlink to
 * an existing file replaces that file (its temporary file is made beside it) and stays a link. Errors: TFM_ERR_IO naming the path ("cannot save to PATH:
 * DIR is not an existing folder", or the system's reason), TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_atomic_file_open(const char *path, tfm_atomic_file **out);

/** The stdio stream of the temporary file. Do not fclose() it. */
TFM_API FILE *tfm_atomic_file_stream(tfm_atomic_file *af);

/** Finishes: flush, fsync, close, rename over the target path (a device or FIFO: flush and close,
 * every failure reported as "cannot write PATH: reason"), fsync of the folder (best effort:
 * some file systems refuse it, and the file is in place by then). Frees `af` whatever happens.
 * Errors: TFM_ERR_IO naming the file (a write error seen by the stream, a full disk, a rename
 * refused, e.g. because the target is a folder); the previous target file is then untouched and
 * the temporary file removed. */
TFM_API tfm_status tfm_atomic_file_commit(tfm_atomic_file *af);

/** Gives up: closes and removes the temporary file, leaves the target untouched, frees `af`.
 * NULL is allowed. */
TFM_API void tfm_atomic_file_abort(tfm_atomic_file *af);

/** Checks, before any work, that a file could be saved at `path`: its folder exists and is a
 * folder (nothing is created). For commands and training runs that must fail before hours of work,
 * not at the end. Errors: TFM_ERR_IO with the message tfm_atomic_file_open() would give ("cannot
 * save to PATH: DIR is not an existing folder", "... the folder name is too long"). */
TFM_API tfm_status tfm_atomic_file_check_folder(const char *path);

/** Writes `len` bytes of `data` to `path` atomically (open, one write, commit). Errors: those of
 * tfm_atomic_file_open() and tfm_atomic_file_commit(). */
TFM_API tfm_status tfm_atomic_file_write(const char *path, const void *data, size_t len);

#ifdef __cplusplus
}
#endif
#endif
