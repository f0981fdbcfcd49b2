/* A model described by its stacks: a list of stacks, each a list of identical blocks, each block a
 * list of sub-layers (self-attention with a mask kind, optional cross-attention, FFN), each wrapped
 * in its residual connection and LayerNorm. Encoder–decoder, decoder-only and encoder-only are
 * three descriptions run by the same code (stack.c, layer.c); only encoder–decoder passes config
 * validation today. */
#ifndef TFM_STACK_H
#define TFM_STACK_H

#include "params.h"

typedef enum {
    SUB_SELF_ATTN,  /* multi-head self-attention over the stack's own positions (§3.2.2) */
    SUB_CROSS_ATTN, /* attention over another stack's output, the "memory" (§3.2.3) */
    SUB_FFN         /* position-wise feed-forward network (§3.3) */
} sublayer_kind;

typedef enum {
    MASK_BIDIRECTIONAL, /* every (non-pad) key: the encoder, BERT */
    MASK_CAUSAL         /* keys at positions <= the query's: the decoder, GPT (§3.2.3) */
} mask_kind;

/** One block: its sub-layers in order; norm k+1 guards sub-layer k (params.h). */
typedef struct {
    int n_sub;
    sublayer_kind sub[3];
    mask_kind self_mask;
} block_desc;

/** Which ids feed a stack: the source side (src, vocabulary V_src) or the target side. */
typedef enum { STACK_INPUT_SOURCE, STACK_INPUT_TARGET } stack_input;

typedef struct {
    const char *prefix;     /* tensor-name prefix: "transformer.encoder" / "transformer.decoder" */
    const char *embed_name; /* "src_embed.weight" / "tgt_embed.weight" */
    stack_input input;
    int vocab;              /* rows of the embedding */
    int n_layers;
    block_desc block;       /* every block of a stack is alike */
    int memory;             /* the stack whose output cross-attention reads, or −1 */
    int generator;          /* 1: the generator (logits over V_tgt) reads this stack's output */
    int no_final_norm;      /* 1: the stack's output is its last block's (BERT: post-LN, no final
                               LayerNorm); 0: the final LayerNorm <prefix>.norm */
} stack_desc;

typedef struct {
    int n_stacks;
    stack_desc stack[TFM_MAX_STACKS];
    int out_stack; /* the stack the generator reads (−1: none, e.g. encoder-only) */
} model_desc;

/** The stacks of a configuration, by its arch:
 *   encoder-decoder (Vaswani et al. 2017, Figure 1): stack 0 encoder — bidirectional
 *     self-attention + FFN over the source; stack 1 decoder — causal self-attention,
 *     cross-attention to stack 0, FFN over the target; the generator reads stack 1;
 *   decoder-only (GPT): one causal stack over the target ids, named transformer.decoder, + generator;
 *   encoder-only (BERT): one bidirectional stack over the source ids, no generator.
 * Every stack ends with its final LayerNorm, except a post-LN encoder-only stack with BERT's
 * embedding LayerNorm (cfg->embed_norm), whose blocks already end in one, and every stack of a
 * family without them (cfg->no_final_norm: Marian). */
void model_describe(const tfm_config *cfg, model_desc *out);

/** Whether block `b` has a sub-layer of `kind`. */
int block_has(const block_desc *b, sublayer_kind kind);

#endif
