/* The stack descriptions of the three architectures (stack.h). */
#include "stack.h"

#include <string.h>

static const block_desc k_encoder_block = {2, {SUB_SELF_ATTN, SUB_FFN, SUB_FFN}, MASK_BIDIRECTIONAL};
static const block_desc k_decoder_block = {3, {SUB_SELF_ATTN, SUB_CROSS_ATTN, SUB_FFN}, MASK_CAUSAL};
static const block_desc k_causal_block = {2, {SUB_SELF_ATTN, SUB_FFN, SUB_FFN}, MASK_CAUSAL};

void model_describe(const tfm_config *cfg, model_desc *d) {
    memset(d, 0, sizeof *d);
    stack_desc enc = {"transformer.encoder", "src_embed.weight", STACK_INPUT_SOURCE, cfg->src_vocab,
                      cfg->n_enc_layers, k_encoder_block, -1, 0, 0};
    switch (cfg->arch) {
    case TFM_ARCH_ENCODER_DECODER: {
        stack_desc dec = {"transformer.decoder", "tgt_embed.weight", STACK_INPUT_TARGET, cfg->tgt_vocab,
                          cfg->n_dec_layers, k_decoder_block, 0, 1, 0};
        d->n_stacks = 2;
        d->stack[0] = enc;
        d->stack[1] = dec;
        d->out_stack = 1;
        break;
    }
    case TFM_ARCH_DECODER_ONLY: {
        stack_desc dec = {"transformer.decoder", "tgt_embed.weight", STACK_INPUT_TARGET, cfg->tgt_vocab,
                          cfg->n_dec_layers, k_causal_block, -1, 1, 0};
        d->n_stacks = 1;
        d->stack[0] = dec;
        d->out_stack = 0;
        break;
    }
    case TFM_ARCH_ENCODER_ONLY:
        d->n_stacks = 1;
        d->stack[0] = enc;
        d->stack[0].no_final_norm = cfg->embed_norm && !cfg->norm_first;
        d->out_stack = -1;
        break;
    }
    if (cfg->no_final_norm) /* the family has none (post-LN Marian) */
        for (int s = 0; s < d->n_stacks; s++) d->stack[s].no_final_norm = 1;
}

int block_has(const block_desc *b, sublayer_kind kind) {
    for (int k = 0; k < b->n_sub; k++)
        if (b->sub[k] == kind) return 1;
    return 0;
}
