/* The language flags of a multilingual model (cli/decoding.h: --src-lang, --tgt-lang,
 * --nllb-legacy, --list-langs; docs/NLLB.md, docs/MARIAN.md). */
#include "decoding.h"

#include <stdio.h>

int apply_langs(const char *cmd, const decode_flags *f, tfm_tokenizer *tok, tfm_decode_config *dc, char **lines,
                size_t n) {
    if (!tfm_tokenizer_lang(tok, 0, NULL) && !f->src_lang && !f->nllb_legacy) /* Marian's >>xx<<, or none */
        return apply_tgt_lang(cmd, tok, f->tgt_lang, lines, n);
    if (tfm_tokenizer_set_langs(tok, f->src_lang, f->tgt_lang, f->nllb_legacy) != TFM_OK) {
        cli_error(cmd, "%s", tfm_last_error());
        return 0;
    }
    const int32_t first = tfm_tokenizer_forced_first(tok);
    if (first < 0 && tfm_tokenizer_lang(tok, 0, NULL)) {
        cli_error(cmd, "this model translates into any of its languages: give one with --tgt-lang (e.g. "
                       "--tgt-lang %s; --list-langs lists them)", tfm_tokenizer_lang(tok, 0, NULL));
        return 0;
    }
    dc->force_first = first >= 0;
    dc->first_id = first >= 0 ? first : 0;
    return 1;
}

int list_langs(const char *cmd, const char *path, const tfm_tokenizer *tok) {
    if (!tfm_tokenizer_lang(tok, 0, NULL)) {
        cli_error(cmd, "%s: the model's tokenizer has no language codes", path);
        return 0;
    }
    int32_t id = -1;
    for (size_t k = 0; tfm_tokenizer_lang(tok, k, &id); k++) printf("%s %d\n", tfm_tokenizer_lang(tok, k, NULL), (int)id);
    return 1;
}
