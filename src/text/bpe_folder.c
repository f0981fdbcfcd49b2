/* The tokenizer of a Hugging Face model folder (tfm/bpe.h, tfm_bpe_load_dir; docs/LLM.md):
 * tokenizer.json, else GPT-2's vocab.json + merges.txt; and tokenizer_config.json's
 * clean_up_tokenization_spaces. */
#include "bpe_internal.h"
#include "core_internal.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static int exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* tokenizer_config.json's clean_up_tokenization_spaces: transformers' default (true) when the file
 * or the key is absent. */
static tfm_status clean_up_flag(const char *dir, int *clean_up) {
    char path[4200];
    snprintf(path, sizeof path, "%s/tokenizer_config.json", dir);
    *clean_up = 1;
    if (!exists(path)) return TFM_OK;
    char *buf;
    size_t len;
    TRY(bpe_read_file(path, &buf, &len));
    cJSON *root = NULL;
    tfm_status st = bpe_parse_json(path, buf, len, &root);
    free(buf);
    TRY(st);
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, "clean_up_tokenization_spaces");
    if (cJSON_IsBool(j)) *clean_up = cJSON_IsTrue(j);
    cJSON_Delete(root);
    return TFM_OK;
}

tfm_status tfm_bpe_load_dir(const char *path, tfm_bpe **out, int *clean_up) {
    RETURN_IF(!path || !out, TFM_ERR_INVALID_ARG, "tfm_bpe_load_dir: NULL argument");
    *out = NULL;
    char dir[4096];
    TRY(tfm_path_folder(path, dir, sizeof dir));
    int cu = 1;
    TRY(clean_up_flag(dir, &cu));
    char tj[4200], vj[4200], mt[4200];
    snprintf(tj, sizeof tj, "%s/tokenizer.json", dir);
    snprintf(vj, sizeof vj, "%s/vocab.json", dir);
    snprintf(mt, sizeof mt, "%s/merges.txt", dir);
    if (exists(tj)) {
        TRY(tfm_bpe_load(tj, out));
    } else {
        RETURN_IF(!exists(vj) && !exists(mt), TFM_ERR_IO,
                  "%s: no tokenizer: a Hugging Face language model folder holds tokenizer.json, or vocab.json and "
                  "merges.txt (GPT-2)",
                  dir);
        RETURN_IF(!exists(mt), TFM_ERR_IO, "%s: vocab.json without merges.txt (GPT-2's tokenizer needs both)", dir);
        RETURN_IF(!exists(vj), TFM_ERR_IO, "%s: merges.txt without vocab.json (GPT-2's tokenizer needs both)", dir);
        TRY(tfm_bpe_load_files(vj, mt, out));
    }
    if (clean_up) *clean_up = cu;
    return TFM_OK;
}
