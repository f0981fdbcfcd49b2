/* tfm train --text: what training a decoder-only language model on plain text adds to
 * `tfm train --data` (cli/train_text.c runs both): the file lists of --text / --valid-text and
 * the LM dataset (one line = one sequence; docs/LM.md). */
#ifndef TFM_CLI_TRAIN_LM_H
#define TFM_CLI_TRAIN_LM_H

#include "tfm/tfm.h"

#define TRAIN_LM_MAX_FILES 64

/* A comma-separated list of files, split (paths point into buf). */
typedef struct {
    char *buf;
    const char *path[TRAIN_LM_MAX_FILES];
    size_t n;
} lm_files;

/* Splits "a,b,c" (the value of `flag`) into f and checks that each file is readable; prints the
 * error and returns 0 if not (an empty name, too many files, a missing file). */
int lm_files_parse(const char *flag, const char *list, lm_files *f);
void lm_files_free(lm_files *f);

/* Encodes the files as a language-model dataset for the model c (tfm_dataset_from_lm_text); with
 * `report` prints one summary line to stderr. Prints the error and returns 0 on failure. */
int lm_load_dataset(const tfm_tokenizer *tok, const tfm_config *c, const lm_files *f, const char *what, int report,
                    tfm_dataset **ds);

#endif
