/* A text file as lines, and a line of ids, for the tokenizer tests (test_wordpiece.c, test_bpe.c): read with the
 * project's line reader, so "\r\n" ends a line and a BOM at the start is dropped, as the tool
 * reads text. */
#ifndef TFM_TEST_LINES_H
#define TFM_TEST_LINES_H

#include "tfm/fileio.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char **text; /* [n] NUL-terminated lines */
    size_t *len;
    size_t n;
} test_lines;

static inline void test_lines_free(test_lines *l) {
    for (size_t i = 0; i < l->n; i++) free(l->text[i]);
    free(l->text);
    free(l->len);
    memset(l, 0, sizeof *l);
}

/* Reads every line of path into *out; returns 0 (with the reader's message on stderr) when the file
 * cannot be read. */
static inline int test_lines_read(const char *path, test_lines *out) {
    tfm_line_reader *r;
    memset(out, 0, sizeof *out);
    if (tfm_line_reader_open(path, 0, &r) != TFM_OK) {
        fprintf(stderr, "%s\n", tfm_last_error());
        return 0;
    }
    size_t cap = 0;
    const char *line;
    size_t n;
    while (tfm_line_reader_next(r, &line, &n) == TFM_OK && line) {
        if (out->n == cap) {
            cap = cap ? 2 * cap : 512;
            out->text = realloc(out->text, cap * sizeof *out->text);
            out->len = realloc(out->len, cap * sizeof *out->len);
        }
        out->text[out->n] = malloc(n + 1);
        memcpy(out->text[out->n], line, n + 1);
        out->len[out->n++] = n;
    }
    tfm_line_reader_free(r);
    return 1;
}

/* "101 7592 102" -> ids; returns the count (at most cap). Stops at the first non-number. */
static inline size_t test_parse_ids(const char *s, int32_t *ids, size_t cap) {
    size_t n = 0;
    char *end;
    for (long v = strtol(s, &end, 10); end != s && n < cap; v = strtol(s, &end, 10)) {
        ids[n++] = (int32_t)v;
        s = end;
    }
    return n;
}

#endif
