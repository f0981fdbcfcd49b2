/* The model-shape flags shared by tfm init and tfm train --data (they mirror the checkpoint
 * metadata of docs/FORMATS.md with dashes). */
#ifndef TFM_CLI_MODEL_FLAGS_H
#define TFM_CLI_MODEL_FLAGS_H

#include "args.h"
#include "tfm/tfm.h"

typedef struct {
    tfm_config c;
    const char *arch, *activation, *pe, *pe_layout, *rope_pairing;
} model_flags;

/* The cli_opt entries of the model flags, vocabulary sizes excepted (expands to several
 * initialisers). */
#define MODEL_OPTS(f)                                                                              \
    {"--arch", OPT_STR, &(f).arch, 0, "architecture: encoder-decoder or decoder-only"},                           \
        {"--d-model", OPT_INT, &(f).c.d_model, 0, "model width d_model"},                          \
        {"--n-heads", OPT_INT, &(f).c.n_heads, 0, "attention heads (must divide d_model)"},        \
        {"--n-enc-layers", OPT_INT, &(f).c.n_enc_layers, 0,                                        \
         "encoder layers (not given: 3; decoder-only 0)"},                                          \
        {"--n-dec-layers", OPT_INT, &(f).c.n_dec_layers, 0, "decoder layers"},                     \
        {"--d-ff", OPT_INT, &(f).c.d_ff, 0, "inner width of the feed-forward network"},            \
        {"--max-len", OPT_INT, &(f).c.max_len, 0, "longest sequence accepted, in tokens"},         \
        {"--norm-first", OPT_INT, &(f).c.norm_first, 0,                                            \
         "1: pre-LN, 0: post-LN as the paper"},                      \
        {"--activation", OPT_STR, &(f).activation, 0, "FFN activation: relu, gelu or silu"},             \
        {"--pe", OPT_STR, &(f).pe, 0,                                                              \
         "position encoding: sinusoidal, none, learned, floater, shaw, t5, rope or alibi"},        \
        {"--pe-layout", OPT_STR, &(f).pe_layout, 0, "sinusoidal columns: interleaved, concat or tensor2tensor"},  \
        {"--pe-zero-pad", OPT_FLAG, &(f).c.pe_zero_pad, 0, "sinusoidal: position 0 is zero"},     \
        {"--pe-scale", OPT_FLAG, &(f).c.pe_scale, 0, "sinusoidal: table times sqrt(d_model)"},     \
        {"--pe-max-distance", OPT_INT, &(f).c.pe_max_distance, 0,                                  \
         "shaw: clip offsets to [-k, k] (16); t5: largest bucketed distance (128)"},               \
        {"--pe-buckets", OPT_INT, &(f).c.pe_buckets, 0, "t5: relative-position buckets (32)"},     \
        {"--pe-shaw-values", OPT_FLAG, &(f).c.pe_shaw_values, 0, "shaw: relative value embeddings too"}, \
        {"--rope-pairing", OPT_STR, &(f).rope_pairing, 0, "rope: interleaved or half"},            \
        {"--layer-norm-eps", OPT_FLOAT, &(f).c.layer_norm_eps, 0, "LayerNorm epsilon"},            \
        {"--tie-embeddings", OPT_INT, &(f).c.tie_embeddings, 0,                                    \
         "1: share src/tgt embeddings and generator"}

/* The defaults of tfm_config_default(), except n_enc_layers, norm_first and tie_embeddings:
 * OPT_INT_UNSET until model_flags_resolve gives them the architecture's default (decoder-only: 0, pre-LN,
 * tied; otherwise 3, post-LN, untied). A caller may set them first (tfm train --data does). */
model_flags model_flags_default(void);

/* Resolves the string flags into f->c and validates it; prints an error and returns 0 if bad. */
int model_flags_resolve(const char *cmd, model_flags *f);

/* For a run that starts from a checkpoint (tfm train --init/--resume): the first model flag given on
 * the command line (opts/argc/argv as parsed, f the parsed flags) whose value differs from the
 * checkpoint's configuration `have`, both compared as the model runs them (tfm_config_effective: a
 * default written out, --pe-buckets 32, equals a stored 0 = "the default"), written as "--pe rope (the checkpoint has sinusoidal)" into
 * msg; 0 when every given model flag agrees (repeating the run's own flags with --resume is
 * fine), 1 on a mismatch, -1 when the flags themselves are invalid (printed). */
int model_flags_mismatch(const char *cmd, const cli_opt *opts, size_t n_opts, int argc, char **argv,
                         model_flags *f, const tfm_config *have, char *msg, size_t cap);

#endif
