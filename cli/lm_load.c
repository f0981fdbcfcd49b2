/* Loading a language model and its tokenizer for tfm generate / tfm perplexity (lm_load.h). */
#include "lm_load.h"

#include "args.h"
#include "text_io.h"

#include <stdlib.h>
#include <string.h>

int lm_load(const char *cmd, const char *path, lm_model *lm) {
    memset(lm, 0, sizeof *lm);
    if (tfm_model_load(path, &lm->m) != TFM_OK) {
        cli_error(cmd, "%s", tfm_last_error());
        return 0;
    }
    const tfm_config *c = tfm_model_config(lm->m);
    int ok = model_arch_ok(cmd, path, c, TFM_ARCH_DECODER_ONLY);
    if (ok && c->pad_id >= 0) {
        ok = model_tokenizer(cmd, path, lm->m, &lm->tok);
    } else if (ok) {
        if (tfm_bpe_load_dir(path, &lm->bpe, &lm->clean_up) != TFM_OK) { /* the folder, or a file in it */
            cli_error(cmd, "%s", tfm_last_error());
            ok = 0;
        } else if (tfm_bpe_vocab_size(lm->bpe) > (size_t)c->tgt_vocab) {
            cli_error(cmd, "%s: the tokenizer has %zu ids, more than the model's vocab_size %d", path,
                      tfm_bpe_vocab_size(lm->bpe), c->tgt_vocab);
            ok = 0;
        }
    }
    if (!ok) lm_free(lm);
    return ok;
}

tfm_status lm_encode(const lm_model *lm, const char *text, size_t len, int32_t **ids, size_t *n) {
    if (lm->bpe) return tfm_bpe_encode(lm->bpe, text, len, 1, ids, n);
    return tfm_tokenizer_encode(lm->tok, text, len, ids, n);
}

void lm_free(lm_model *lm) {
    tfm_bpe_free(lm->bpe);
    tfm_tokenizer_free(lm->tok);
    tfm_model_free(lm->m);
    memset(lm, 0, sizeof *lm);
}
