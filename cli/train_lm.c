/* tfm train --text (cli/train_lm.h): file lists and the language-model dataset. */
#define _POSIX_C_SOURCE 200809L /* access */
#include "train_lm.h"
#include "args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int lm_files_parse(const char *flag, const char *list, lm_files *f) {
    memset(f, 0, sizeof *f);
    f->buf = malloc(strlen(list) + 1);
    if (!f->buf) {
        cli_error("train", "out of memory");
        return 0;
    }
    strcpy(f->buf, list);
    for (char *p = f->buf;;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        if (!*p || f->n == TRAIN_LM_MAX_FILES) {
            cli_error("train", "%s '%s': %s", flag, list,
                      *p ? "too many files (at most 64)" : "an empty file name (FILE[,FILE...])");
            lm_files_free(f);
            return 0;
        }
        if (access(p, R_OK) != 0) {
            cli_error("train", "%s: cannot read %s", flag, p);
            lm_files_free(f);
            return 0;
        }
        f->path[f->n++] = p;
        if (!comma) break;
        p = comma + 1;
    }
    return 1;
}

void lm_files_free(lm_files *f) {
    free(f->buf);
    memset(f, 0, sizeof *f);
}

int lm_load_dataset(const tfm_tokenizer *tok, const tfm_config *c, const lm_files *f, const char *what, int report,
                    tfm_dataset **ds) {
    tfm_lm_text_stats st;
    if (tfm_dataset_from_lm_text(tok, f->path, f->n, c->max_len, c->bos_id, c->eos_id, ds, &st) != TFM_OK) {
        cli_error("train", "%s", tfm_last_error());
        return 0;
    }
    if (report)
        fprintf(stderr, "tfm train: %s: %zu sequences from %zu lines of %zu file(s) (%zu blank skipped; %zu cut to "
                        "max_len %d), %zu tokens with BOS and EOS\n",
                what, st.n_sequences, st.n_lines, st.n_files, st.n_blank, st.n_cut, c->max_len, st.tokens);
    return 1;
}
