/* Does a tokenizer fit a model? The model's ids are the tokenizer's pieces. */
#include "core_internal.h"
#include "tfm/tokenizer.h"
#include "tok_kind.h"

tfm_status tfm_tokenizer_check_model(const tfm_tokenizer *tok, const tfm_config *cfg) {
    const int vs = tok_side_vocab_size(tok, 0), vt = tok_side_vocab_size(tok, 1);
    RETURN_IF(!tok_model_rows_ok(tok, cfg->src_vocab, 0) || !tok_model_rows_ok(tok, cfg->tgt_vocab, 1),
              TFM_ERR_INVALID_ARG,
              "the tokenizer has %d source and %d target pieces but the model's vocabularies are %d (source) and %d "
              "(target)", vs, vt, cfg->src_vocab, cfg->tgt_vocab);
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
