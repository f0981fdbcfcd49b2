/* The line reader of include/tfm/fileio.h. Bytes come one at a time from stdio's buffer
 * (getc_unlocked: a macro over that buffer, about a nanosecond a byte), so a line from a pipe or a
 * terminal is returned as soon as its "\n" arrives, and a line is never read past the limit. The
 * line buffer grows to the longest line seen: after the first lines, reading allocates nothing. */
#define _POSIX_C_SOURCE 200809L /* getc_unlocked */

#include "core_internal.h"
#include "tfm/fileio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct tfm_line_reader {
    FILE *f;
    int owns_file; /* opened by tfm_line_reader_open: closed by free */
    char *name;
    size_t max_len; /* the longest line accepted, without its line end */
    char *line; /* the current line, NUL-terminated */
    size_t cap;
    size_t lineno; /* lines returned so far */
    int past_bom;  /* the file's first 3 bytes (or its first line) have been read: no BOM can follow */
};

/* U+FEFF ZERO WIDTH NO-BREAK SPACE encoded in UTF-8: a byte order mark when it starts a file. */
static const char k_bom[3] = {'\xEF', '\xBB', '\xBF'};

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

static tfm_status reader_make(FILE *f, int owns, const char *name, size_t max_line_bytes, tfm_line_reader **out) {
    tfm_line_reader *r = calloc(1, sizeof *r);
    if (r) {
        r->f = f;
        r->owns_file = owns;
        r->name = dup_str(name);
        r->cap = 256;
        r->line = malloc(r->cap);
        r->max_len = max_line_bytes ? max_line_bytes : SIZE_MAX - 2;
    }
    if (!r || !r->name || !r->line) {
        if (r) r->owns_file = 0; /* the caller closes f on failure */
        tfm_line_reader_free(r);
        return tfm_set_error(TFM_ERR_NOMEM, "%s: out of memory making a line reader", name);
    }
    *out = r;
    return TFM_OK;
}

tfm_status tfm_line_reader_open(const char *path, size_t max_line_bytes, tfm_line_reader **out) {
    RETURN_IF(!out, TFM_ERR_INVALID_ARG, "tfm_line_reader_open: NULL output");
    *out = NULL;
    RETURN_IF(!path, TFM_ERR_INVALID_ARG, "tfm_line_reader_open: NULL path");
    FILE *f = fopen(path, "rb");
    RETURN_IF(!f, TFM_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    tfm_status st = reader_make(f, 1, path, max_line_bytes, out);
    if (st != TFM_OK) fclose(f);
    return st;
}

tfm_status tfm_line_reader_from_stream(FILE *f, const char *name, size_t max_line_bytes, tfm_line_reader **out) {
    RETURN_IF(!out, TFM_ERR_INVALID_ARG, "tfm_line_reader_from_stream: NULL output");
    *out = NULL;
    RETURN_IF(!f || !name, TFM_ERR_INVALID_ARG, "tfm_line_reader_from_stream: NULL stream or name");
    return reader_make(f, 0, name, max_line_bytes, out);
}

void tfm_line_reader_free(tfm_line_reader *r) {
    if (!r) return;
    if (r->owns_file && r->f) fclose(r->f);
    free(r->name);
    free(r->line);
    free(r);
}

size_t tfm_line_reader_line_number(const tfm_line_reader *r) { return r->lineno; }

const char *tfm_line_reader_name(const tfm_line_reader *r) { return r->name; }

/* Grows the line buffer to hold at least `need` bytes. */
static tfm_status line_reserve(tfm_line_reader *r, size_t need) {
    if (need <= r->cap) return TFM_OK;
    size_t cap = r->cap;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
    char *p = realloc(r->line, cap);
    RETURN_IF(!p, TFM_ERR_NOMEM, "%s:%zu: out of memory reading a line of %zu bytes", r->name, r->lineno + 1, need);
    r->line = p;
    r->cap = cap;
    return TFM_OK;
}

static tfm_status read_error(const tfm_line_reader *r) {
    return tfm_set_error(TFM_ERR_IO, "error reading %s: %s", r->name, errno ? strerror(errno) : "read error");
}

tfm_status tfm_line_reader_next(tfm_line_reader *r, const char **line, size_t *len) {
    *line = NULL;
    if (len) *len = 0;
    size_t n = 0;
    int c = EOF, any = 0;
    errno = 0;
    while ((c = getc_unlocked(r->f)) != EOF) {
        any = 1;
        if (c == '\n') break;
        RETURN_IF(c == '\0', TFM_ERR_FORMAT, "%s:%zu: NUL byte at byte column %zu (not a text file?)", r->name,
                  r->lineno + 1, n + 1);
        /* one byte over the limit is allowed while it may be the '\r' of "\r\n" */
        RETURN_IF(n > r->max_len, TFM_ERR_FORMAT, "%s:%zu: line longer than the limit of %zu bytes", r->name,
                  r->lineno + 1, r->max_len);
        if (n + 2 > r->cap) TRY(line_reserve(r, n + 2));
        r->line[n++] = (char)c;
        /* a UTF-8 byte order mark at the start of the file is not text: dropped, as "\r" of
         * "\r\n" is (a file of a BOM alone has no lines, as an empty one) */
        if (n == 3 && !r->past_bom) {
            r->past_bom = 1;
            if (memcmp(r->line, k_bom, 3) == 0) {
                n = 0;
                any = 0;
            }
        }
    }
    if (c == EOF && ferror(r->f)) return read_error(r);
    r->past_bom = 1;
    if (!any) return TFM_OK; /* the end of the file: no more lines */
    if (n > 0 && r->line[n - 1] == '\r') n--;
    RETURN_IF(n > r->max_len, TFM_ERR_FORMAT, "%s:%zu: line longer than the limit of %zu bytes", r->name,
              r->lineno + 1, r->max_len);
    r->line[n] = '\0';
    r->lineno++;
    *line = r->line;
    if (len) *len = n;
    return TFM_OK;
}

tfm_status tfm_line_reader_count_rest(tfm_line_reader *r, size_t *n_lines) {
    size_t count = 0;
    int c, partial = 0;
    errno = 0;
    while ((c = getc_unlocked(r->f)) != EOF) {
        count += c == '\n';
        partial = c != '\n';
    }
    if (ferror(r->f)) return read_error(r);
    *n_lines = count + (size_t)partial;
    return TFM_OK;
}
