/* transformer.c — token-id files (docs/FORMATS.md).
 *
 * Plain text, one sequence per line, non-negative decimal token ids separated by spaces or tabs,
 * no padding. A line may be empty (an empty source sequence); a blank line (tfm_text_is_blank,
 * e.g. only U+00A0 or a vertical tab) is read as an empty one. Lines end in "\n" or "\r\n". */
#ifndef TFM_IDS_H
#define TFM_IDS_H

#include "tfm/export.h"

#include "tfm/status.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The longest line accepted in an id file, in bytes (newline excluded): 65,536. A longer line
 * is reported as an error rather than read in pieces. */
#define TFM_IDS_MAX_LINE_BYTES 65536

/** All lines of an id file: line i holds ids[offsets[i] .. offsets[i+1]). */
typedef struct {
    int32_t *ids;
    size_t *offsets; /* n_lines + 1 entries */
    size_t n_lines;
} tfm_id_lines;

/** Reads an id file. Errors (each message names the file and 1-based line, and the column for a
 * bad token): TFM_ERR_IO if it cannot be opened or read; TFM_ERR_FORMAT for a token that is not a
 * non-negative decimal integer (a negative number, a letter, ...), a line over
 * TFM_IDS_MAX_LINE_BYTES, a NUL byte, or a file with no lines at all; TFM_ERR_RANGE for an id
 * above 2^31−1; TFM_ERR_NOMEM. On error *out is left empty. */
TFM_API tfm_status tfm_id_lines_read(const char *path, tfm_id_lines *out);

/** Checks every id is < vocab. Errors: TFM_ERR_RANGE naming `path`, the line and the id. */
TFM_API tfm_status tfm_id_lines_check_vocab(const tfm_id_lines *lines, const char *path, int vocab);

/** Length of line i in ids. */
static inline size_t tfm_id_lines_len(const tfm_id_lines *lines, size_t i) {
    return lines->offsets[i + 1] - lines->offsets[i];
}

/** Releases the lines' memory and empties *lines (an emptied or zeroed struct is fine). */
TFM_API void tfm_id_lines_free(tfm_id_lines *lines);

#ifdef __cplusplus
}
#endif
#endif
