/* transformer.c — model configuration, creation, checkpoints; contexts.
 *
 * A tfm_model is an opaque handle holding one configuration, its parameters (one arena) and its
 * tokenizer: the weights, read-only once loaded or created. A tfm_context is one thread's working
 * memory for a model — the activation workspace (grown on demand), the KV cache, scratch — and every
 * scoring and decoding call takes one (tfm/score.h, tfm/decode.h).
 *
 * Thread-safety: any number of contexts, each used by one thread at a time, may use one model
 * concurrently (scoring and decoding only read the model). A context must not be used by two
 * threads at once. A model being trained (tfm_trainer_step, which owns its own context and writes
 * the parameters) or changed (tfm_model_set_tokenizer) must not be used by any other context
 * meanwhile. tfm_last_error() is per thread.
 *
 * Checkpoints are safetensors files whose tensor names are PyTorch nn.Transformer's
 * (docs/FORMATS.md), so a model trained with PyTorch loads here and ours loads there. */
#ifndef TFM_MODEL_H
#define TFM_MODEL_H

#include "tfm/export.h"

#include "tfm/kernels.h"
#include "tfm/status.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TFM_ARCH_ENCODER_DECODER = 0, /* Vaswani et al. 2017, §3.1, Figure 1 */
    TFM_ARCH_DECODER_ONLY = 1,
    TFM_ARCH_ENCODER_ONLY = 2
} tfm_arch;

typedef enum {
    TFM_ACT_RELU = 0, /* FFN(x) = max(0, xW1 + b1)W2 + b2 (Vaswani et al. 2017, eq. 2) */
    TFM_ACT_GELU = 1, /* exact GELU, x·Φ(x) with the erf form (Hendrycks & Gimpel 2016) */
    TFM_ACT_SILU = 2, /* SiLU / swish, x·σ(x) (Elfwing et al. 2018; Ramachandran et al. 2017): Marian */
    TFM_ACT_GELU_TANH = 3, /* GELU's tanh approximation, GPT-2's `gelu_new` (docs/LLM.md) */
    TFM_ACT_SWIGLU = 4     /* gated: FFN(x) = (silu(x W_gate) ⊙ x W_up) W_down (Shazeer 2020; Llama);
                              linear1 holds W_gate then W_up, (2·d_ff, d) */
} tfm_activation;

/* The special ids a search never outputs (docs/MODELS.md): the decoder's logits of these ids are
 * set to −∞ before each choice. */
typedef enum {
    TFM_SUPPRESS_PAD_BOS = 0, /* pad and BOS: every model tfm trains (the default) */
    TFM_SUPPRESS_PAD = 1,     /* pad only: Marian (its start token is pad; it has no BOS) */
    TFM_SUPPRESS_NONE = 2     /* nothing: a family whose generation bans no id */
} tfm_suppress;

/* The normalisation of every residual wrapper and of the final norms. */
typedef enum {
    TFM_NORM_LAYER = 0, /* LayerNorm with weight and bias (Ba et al. 2016): the paper, GPT-2, BERT */
    TFM_NORM_RMS = 1    /* RMSNorm, weight only (Zhang & Sennrich 2019): Llama */
} tfm_norm;

/* Position encodings (docs/POSITION.md). Absolute ones act at the embeddings; relative ones in
 * self-attention. A value is accepted by tfm_config_validate only once its kind is implemented. */
typedef enum {
    TFM_PE_SINUSOIDAL = 0, /* fixed sinusoids at the embeddings (Vaswani et al. 2017, §3.5) */
    TFM_PE_NONE = 1,       /* no position information at all: attention is order-blind */
    TFM_PE_LEARNED = 2,    /* trainable absolute table per side (BERT, GPT-2) */
    TFM_PE_FLOATER = 3,    /* positions as the solution of a learned ODE (Liu et al., ICML 2020) */
    TFM_PE_SHAW = 4,       /* learned relative key/value embeddings (Shaw et al. 2018) */
    TFM_PE_T5 = 5,         /* learned per-head bias of bucketed offsets (Raffel et al. 2020) */
    TFM_PE_ROPE = 6,       /* rotary queries and keys (Su et al., RoFormer 2021) */
    TFM_PE_ALIBI = 7       /* fixed head-specific linear bias (Press et al., ICLR 2022) */
} tfm_pe;

/* The order of the sinusoidal table's columns. */
typedef enum {
    TFM_PE_LAYOUT_INTERLEAVED = 0,  /* PE[p, 2i] = sin, PE[p, 2i+1] = cos (the paper, §3.5) */
    TFM_PE_LAYOUT_CONCAT = 1,       /* the paper's values, all sines then all cosines */
    TFM_PE_LAYOUT_TENSOR2TENSOR = 2 /* concat order with tensor2tensor's / fairseq's frequencies
                                       10000^(−i/(d/2−1)): their models load as trained */
} tfm_pe_layout;

/* Which dimensions RoPE rotates together. */
typedef enum {
    TFM_ROPE_INTERLEAVED = 0, /* pairs (2i, 2i+1): RoFormer, GPT-J */
    TFM_ROPE_HALF = 1         /* pairs (i, i + d_k/2), "rotate half": GPT-NeoX, Llama */
} tfm_rope_pairing;

/** The most end-of-sequence ids besides eos_id (tfm_config.eos_more). */
#define TFM_MAX_EOS_MORE 7

/** A model's hyper-parameters; the metadata keys of docs/FORMATS.md. */
typedef struct {
    tfm_arch arch;
    int d_model;       /* width of every residual stream vector */
    int n_heads;       /* attention heads; d_k = d_v = d_model / n_heads */
    int n_enc_layers;  /* N in the paper (6 there) */
    int n_dec_layers;
    int d_ff;          /* inner width of the position-wise FFN (2048 in the paper) */
    int src_vocab;     /* V_src */
    int tgt_vocab;     /* V_tgt */
    int max_len;       /* the longest source or target sequence the model accepts, in tokens */
    int norm_first;    /* 0: post-LN as the paper, LayerNorm(x + Sublayer(x)); 1: pre-LN */
    tfm_activation activation;
    tfm_pe pe;
    /* Options of the position encoding (each read only by the kinds named; metadata keys of the
     * same names, docs/POSITION.md): */
    tfm_pe_layout pe_layout; /* sinusoidal: column order (default interleaved) */
    int pe_zero_pad;         /* sinusoidal: 1 → position 0 gets the zero vector (TF's zero_pad) */
    int pe_scale;            /* sinusoidal: 1 → the table is multiplied by √d_model (TF's scale) */
    int pe_max_distance;     /* shaw: offsets clipped to [−k, k]; t5: the largest bucketed
                                distance; 0 → the kind's default (shaw 16, t5 128) */
    int pe_buckets;          /* t5: relative-position buckets; 0 → 32 */
    int pe_shaw_values;      /* shaw: 1 → relative value embeddings as well as key ones */
    tfm_rope_pairing rope_pairing; /* rope: default interleaved */
    int pad_id, bos_id, eos_id;
    float layer_norm_eps; /* 1e-5 as PyTorch */
    int tie_embeddings;   /* 1: src_embed, tgt_embed and generator.weight share one matrix */
    /* BERT's embedding block (Devlin et al. 2019, §3 "Input/Output Representations"; docs/BERT.md),
     * per stack; both 0 for every other model: */
    int type_vocab;       /* token-type (segment) embeddings: rows of <stack>.type_embed.weight;
                             0: none. Every token has type 0 (one-segment inputs). */
    int embed_norm;       /* 1: x0 = LayerNorm(E[id] + P[pos] (+ T[0])), no √d_model scaling, and
                             a post-LN encoder-only stack then has no final LayerNorm (BERT) */
    /* A model family's traits (docs/MODELS.md), each written to a checkpoint only when it is not
     * the default, so files written before they existed load as they always did: */
    float embed_scale;    /* token embeddings × this; 0: the default, √d_model (§3.4), or 1 with
                             embed_norm (BERT). GPT-2 1; Marian and NLLB √d_model */
    int pe_offset;        /* sinusoidal: the first position's index (0: the paper, Marian; fairseq /
                             NLLB: padding_idx + 1); the table rows used are pe_offset .. +max_len */
    int no_final_norm;    /* 1: no stack ends in a final LayerNorm (post-LN Marian: its blocks
                             already end in one); 0: every stack has <prefix>.norm, except BERT's */
    int decoder_start_id; /* the decoder's first input token; −1: bos_id (every model tfm trains).
                             Marian: pad_id; NLLB: eos_id. May equal pad_id: position 0 of a
                             target row is then never treated as padding */
    tfm_suppress suppress; /* ids a search never outputs (default pad and BOS) */
    int lenpen_count_forced; /* 1: the length of beam search's length penalty counts a forced first
                             token (tfm_decode_config.force_first) as transformers' generated_len
                             does (Marian, NLLB); 0: it does not (default, fairseq's rule). EOS
                             counts in both; without a forced token the two are the same number */
    int forced_eos;       /* 1: translation's last allowed output token is EOS, scored log p 0: a
                             hypothesis still going at the length limit ends one token earlier, on
                             a forced EOS (transformers' forced_eos_token_id, Marian); 0: the limit's
                             tokens, then EOS with its own log-probability (default) */
    /* The language-model families' block (docs/LLM.md); 0 everywhere reproduces every other
     * model. Inference only: tfm_trainer_create refuses a model with any of them, and
     * tfm_model_save does not write one (load it from its Hugging Face folder). */
    int n_kv_heads;       /* grouped-query attention (Ainslie et al. 2023): self-attention keys and
                             values have this many heads, dividing n_heads (the KV cache stores only
                             them; in_proj is (d_model + 2·n_kv_heads·d_k, d_model)); 0: n_heads */
    tfm_norm norm;        /* LayerNorm (default) or RMSNorm (no bias tensors) */
    int no_linear_bias;   /* 1: the attention and FFN projections have no bias tensors (Llama) */
    float rope_theta;     /* rope: the base of θ_p = base^(−2p/d_k); 0: 10000 (the paper's) */
    int n_eos_more;       /* further end-of-sequence ids, eos_more[0 .. n_eos_more): generation stops
                             at eos_id or any of them (generation_config.json's eos_token_id list,
                             Llama-3's [128001, 128009]); 0: eos_id alone */
    int eos_more[TFM_MAX_EOS_MORE];
} tfm_config;

typedef struct tfm_model tfm_model;
typedef struct tfm_context tfm_context;

/** The defaults of `tfm init`: d_model 256, 4 heads, 3+3 layers, d_ff 1024, vocab 8000, max_len
 * 256, post-LN, ReLU, sinusoidal PE, pad 0, bos 1, eos 2, eps 1e-5, untied; the family traits as
 * the paper: embed_scale 0 (√d_model), pe_offset 0, final LayerNorms, decoder_start_id −1 (BOS),
 * suppress pad and BOS. */
TFM_API tfm_config tfm_config_default(void);

/** The configuration as the model runs it: every option that holds 0 = "the encoding's default"
 * replaced by that default (t5: pe_buckets 32, pe_max_distance 128; shaw: pe_max_distance 16).
 * Compare effective configurations, not stored ones, to tell whether two runs build the same
 * model: a checkpoint stores 0 where the default was not written out, a flag may write it out. */
TFM_API tfm_config tfm_config_effective(const tfm_config *cfg);

/** Checks that a configuration makes sense (positive sizes, n_heads divides d_model, special ids
 * inside the vocabularies, ...). Errors: TFM_ERR_INVALID_ARG naming the key; TFM_ERR_UNSUPPORTED
 * for an architecture this build cannot run. */
TFM_API tfm_status tfm_config_validate(const tfm_config *cfg);

/** The decoder's first input token: decoder_start_id, or bos_id when that is −1. */
TFM_API int tfm_config_decoder_start(const tfm_config *cfg);

/** Whether `id` ends a sequence: eos_id or one of eos_more[0 .. n_eos_more) (docs/LLM.md). */
TFM_API int tfm_config_is_eos(const tfm_config *cfg, int id);

/** The factor token embeddings are multiplied by: embed_scale, or when that is 0 the default,
 * √d_model (Vaswani et al. 2017, §3.4) or 1 with embed_norm (BERT). */
TFM_API float tfm_config_embed_scale(const tfm_config *cfg);
/** NULL if a model of this configuration can be trained and saved as a tfm checkpoint; else the
 * name of the first language-model-family feature (docs/LLM.md) that has no backward pass and no
 * checkpoint key yet — "grouped-query attention", "RMSNorm", "the tanh GELU", "SwiGLU", "linear
 * layers without bias", "rope_theta" — for the caller's message. */
TFM_API const char *tfm_config_inference_only(const tfm_config *cfg);

/** Number of float parameters of a configuration (tied matrices counted once). */
TFM_API size_t tfm_config_param_count(const tfm_config *cfg);

/** Bytes a model and one context take: parameters plus the context's forward workspace for batches
 * of up to `max_batch` sequences of up to `max_src` source and `max_tgt` target tokens. Returns 0
 * if the sizes overflow size_t. */
TFM_API size_t tfm_model_estimate_bytes(const tfm_config *cfg, int max_batch, int max_src, int max_tgt);

/** A fresh model with the initialisation of docs/NUMERICS.md (Xavier-uniform weight matrices,
 * attention biases 0, other biases as nn.Linear, LayerNorm 1/0, embeddings N(0, d_model^-0.5)),
 * deterministic in `seed`. Errors: those of tfm_config_validate, TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_model_create(const tfm_config *cfg, uint64_t seed, tfm_model **out);

/** Loads a safetensors checkpoint (docs/FORMATS.md), checking every tensor's name, dtype, shape and
 * byte range and the metadata. Errors: TFM_ERR_IO (cannot open/read), TFM_ERR_FORMAT (malformed or
 * foreign file; the message names the tensor or byte offset), TFM_ERR_INVALID_ARG (metadata that
 * makes no sense), TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_model_load(const char *path, tfm_model **out);

/** Writes every model tensor, the metadata and any stored tokenizer to `path` atomically (a
 * temporary file in the same directory, fsync, rename): an interrupted save leaves the previous
 * file intact. Errors: TFM_ERR_IO naming the path. */
TFM_API tfm_status tfm_model_save(const tfm_model *model, const char *path);

/** Releases a model and everything it owns (NULL is fine). */
TFM_API void tfm_model_free(tfm_model *model);

/** The model's configuration (valid while the model lives). */
TFM_API const tfm_config *tfm_model_config(const tfm_model *model);

/** The serialized tokenizer stored with the model (the `tokenizer.model` U8 tensor), or NULL with
 * *len = 0 if it has none. Valid while the model lives. */
TFM_API const unsigned char *tfm_model_tokenizer(const tfm_model *model, size_t *len);

/** Stores a copy of a serialized tokenizer in the model; tfm_model_save writes it as the U8 tensor
 * `tokenizer.model`. Errors: TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_model_set_tokenizer(tfm_model *model, const unsigned char *bytes, size_t len);

/** A context for `model`: one thread's activation workspace and KV cache, empty at first and grown
 * on demand by the calls that use it (so the first call of a new, larger batch shape allocates).
 * The model must outlive the context. Many contexts may share one model (see the thread-safety
 * note above). Errors: TFM_ERR_INVALID_ARG (NULL model), TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_context_create(const tfm_model *model, tfm_context **out);

/** tfm_context_create with a kernel choice (tfm/kernels.h): the context runs the kernels `opts`
 * names for as long as it lives; NULL is tfm_kernel_opts_default() (the tuned kernels for this
 * CPU). Contexts with different choices may share one model and run at the same time.
 * Errors: those of tfm_context_create and tfm_kernel_opts_validate. */
TFM_API tfm_status tfm_context_create_opts(const tfm_model *model, const tfm_kernel_opts *opts, tfm_context **out);

/** One line naming the context's kernels, e.g. "isa avx512, gemm auto, attention fused, layers
 * fused" (the instruction set after capping at the CPU's), written to buf (n bytes, truncated);
 * returns buf. */
TFM_API const char *tfm_context_kernels(const tfm_context *ctx, char *buf, size_t n);

/** Releases a context's workspace and KV cache, not its model (NULL is fine). */
TFM_API void tfm_context_free(tfm_context *ctx);

/** The model a context was created for. */
TFM_API const tfm_model *tfm_context_model(const tfm_context *ctx);

#ifdef __cplusplus
}
#endif
#endif
