/* Test folders made from fixtures: a fixture folder copied (test_copy_dir), and a safetensors file
 * rewritten with a tensor left out or given another shape (test_st_rewrite), for the bad-folder
 * tests of the Hugging Face formats (test_marian.c, test_hf_lm.c). Uses the library's own
 * safetensors reader and writer (src/model/safetensors.h). */
#ifndef TFM_TEST_ST_H
#define TFM_TEST_ST_H

#include "safetensors.h"
#include "test_util.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Copies the regular files of the folder `from` (not its sub-folders) into the folder `to`, made if
 * needed, except the file named `skip` (NULL: all). 1 on success. */
static inline int test_copy_dir(const char *from, const char *to, const char *skip) {
    mkdir(to, 0700);
    DIR *d = opendir(from);
    int ok = d != NULL;
    for (struct dirent *e; ok && (e = readdir(d)) != NULL;) {
        char a[4096 + 512], b[4096 + 512];
        snprintf(a, sizeof a, "%s/%s", from, e->d_name);
        struct stat sb;
        if (stat(a, &sb) != 0 || !S_ISREG(sb.st_mode) || (skip && strcmp(skip, e->d_name) == 0)) continue;
        snprintf(b, sizeof b, "%s/%s", to, e->d_name);
        ok = test_copy_file(a, b);
    }
    if (d) closedir(d);
    return ok;
}

/* Writes `to`: the safetensors file `from` without the tensor `drop` (NULL: none), and with the
 * tensor `reshape` (NULL: none) given the shape [rows, cols] (the same bytes). 1 on success. */
static inline int test_st_rewrite(const char *from, const char *to, const char *drop, const char *reshape,
                                  uint64_t rows, uint64_t cols) {
    st_file f;
    if (st_open(from, &f) != TFM_OK) return 0;
    st_out_tensor *out = calloc(f.n_tensors, sizeof *out);
    void **data = calloc(f.n_tensors, sizeof *data);
    size_t n = 0;
    int ok = out && data;
    for (size_t i = 0; ok && i < f.n_tensors; i++) {
        const st_tensor *t = &f.tensors[i];
        if (drop && strcmp(t->name, drop) == 0) continue;
        data[n] = malloc(t->end - t->begin);
        ok = data[n] && st_read(&f, t, data[n]) == TFM_OK;
        out[n] = (st_out_tensor){t->name, t->dtype, t->ndim, {t->shape[0], t->ndim > 1 ? t->shape[1] : 0}, data[n],
                                 t->end - t->begin};
        if (reshape && strcmp(t->name, reshape) == 0) out[n].shape[0] = rows, out[n].shape[1] = cols;
        n++;
    }
    ok = ok && st_write(to, NULL, 0, out, n) == TFM_OK;
    for (size_t i = 0; data && i < n; i++) free(data[i]);
    free(data);
    free(out);
    st_close(&f);
    return ok;
}

#endif
