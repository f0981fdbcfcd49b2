/* Reader of the small text golden files written by tests/reference/make_golden_optim.py:
 * lines "name count" each followed by `count` numbers; '#' lines are comments. */
#ifndef TFM_GOLDEN_TXT_H
#define TFM_GOLDEN_TXT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads array `name` of exactly n values from `path` into out. Returns 1 on success, 0 (with a
 * message on stderr naming the file and array) otherwise. */
static inline int golden_txt_read(const char *path, const char *name, float *out, size_t n) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "golden: cannot open %s\n", path);
        return 0;
    }
    char tok[256];
    int ok = 0;
    while (fscanf(f, "%255s", tok) == 1) {
        if (tok[0] == '#') { /* skip the comment line */
            int c;
            while ((c = fgetc(f)) != EOF && c != '\n') {}
            continue;
        }
        size_t count = 0;
        if (fscanf(f, "%zu", &count) != 1) break;
        int want = strcmp(tok, name) == 0;
        if (want && count != n) {
            fprintf(stderr, "golden: %s in %s has %zu values, want %zu\n", name, path, count, n);
            break;
        }
        size_t i = 0;
        for (; i < count; i++) {
            float v;
            if (fscanf(f, "%f", &v) != 1) break;
            if (want) out[i] = v;
        }
        if (i < count) break;
        if (want) {
            ok = 1;
            break;
        }
    }
    fclose(f);
    if (!ok) fprintf(stderr, "golden: array %s not read from %s\n", name, path);
    return ok;
}

#endif
