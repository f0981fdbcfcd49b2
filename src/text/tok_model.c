/* Does a tokenizer fit a model? The model's ids are the tokenizer's pieces. */
#include "core_internal.h"
#include "tfm/tokenizer.h"
#include "tok_kind.h"

tfm_status tfm_tokenizer_check_model(const tfm_tokenizer *tok, const tfm_config *cfg) {
    const int V = tfm_tokenizer_vocab_size(tok);
    RETURN_IF(!tok_model_rows_ok(tok, cfg->src_vocab) || !tok_model_rows_ok(tok, cfg->tgt_vocab), TFM_ERR_INVALID_ARG,
              "the tokenizer has %d pieces but the model's vocabularies are %d (source) and %d (target)", V,
              cfg->src_vocab, cfg->tgt_vocab);
    /* a tokenizer without BOS (Marian's: -1) fits a model whose decoder does not start from one */
    const int bos_ok = tfm_tokenizer_bos_id(tok) == cfg->bos_id ||
                       (tfm_tokenizer_bos_id(tok) < 0 && tfm_config_decoder_start(cfg) != cfg->bos_id);
    RETURN_IF(tfm_tokenizer_pad_id(tok) != cfg->pad_id || !bos_ok ||
                  tfm_tokenizer_eos_id(tok) != cfg->eos_id,
              TFM_ERR_INVALID_ARG,
              "the tokenizer's pad/bos/eos ids (%d/%d/%d) differ from the model's (%d/%d/%d)",
              tfm_tokenizer_pad_id(tok), tfm_tokenizer_bos_id(tok), tfm_tokenizer_eos_id(tok), cfg->pad_id,
              cfg->bos_id, cfg->eos_id);
    return TFM_OK;
}
