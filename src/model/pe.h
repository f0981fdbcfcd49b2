/* The position-encoding interface: one table of hooks per encoding kind (tfm_pe), so the layer
 * code never names an encoding. An encoding acts at one or more of three places:
 *   1. at the embeddings: x = E[id]·√d_model + PE(position)       (sinusoidal, learned, FLOATER)
 *   2. on the queries and keys of self-attention, before the scores and before keys enter the KV
 *      cache                                                         (RoPE)
 *   3. as an additive per-head bias on the attention scores        (T5, ALiBi)
 *   4. as relative key/value embeddings inside self-attention     (Shaw)
 * Each hook has its backward; tensors it owns are registered in the parameter table by add_params
 * (so they are initialised, saved, loaded and trained like every other tensor) and reach the hooks
 * as pe_params (params.h). A NULL hook does nothing (no parameters, identity backward).
 * Positions are absolute token indices: query t of a call is at pos0 + t, key s at s.
 * Every hook gets the configuration (its pe_* options, n_heads, d_model).
 *
 * Adding a kind: write its hooks in its own file (pe_<name>.c) as `const pe_kind pe_kind_<name>`,
 * declare it below, and list it in pe.c's table under its tfm_pe value; name it in
 * src/core/names.c. A tfm_pe value without an entry is refused by tfm_config_validate. */
#ifndef TFM_PE_H
#define TFM_PE_H

#include "arena.h"
#include "stack.h"

/* The options of tfm_config a kind reads (pe_kind.options); any other option left at its
 * default, so that a flag meant for another encoding is an error, not silently ignored. */
enum {
    PE_OPT_LAYOUT = 1u << 0,       /* pe_layout */
    PE_OPT_ZERO_PAD = 1u << 1,     /* pe_zero_pad */
    PE_OPT_SCALE = 1u << 2,        /* pe_scale */
    PE_OPT_MAX_DISTANCE = 1u << 3, /* pe_max_distance */
    PE_OPT_BUCKETS = 1u << 4,      /* pe_buckets */
    PE_OPT_SHAW_VALUES = 1u << 5,  /* pe_shaw_values */
    PE_OPT_ROPE_PAIRING = 1u << 6  /* rope_pairing */
};

/** One stack's per-context state of a kind that keeps one (state_floats != NULL): FLOATER's table of
 * positions and its RK4 intermediates. The context owns it (pe_states below), so a model stays
 * read-only and each thread's context caches its own table. */
typedef struct pe_state {
    float *buf;          /* state_floats(cfg, positions, with_backward) floats, carved by the kind */
    size_t positions;    /* positions the buffer was laid out for */
    int with_backward;   /* laid out with what embed_backward needs */
    int training;        /* the next embed_forward will be differentiated (context_reserve's flag) */
    size_t n_valid;      /* positions of the kind's cached values that are current (the kind's to
                            keep; 0 after any re-layout) */
} pe_state;

/** Every stack's pe_state of a context, in one arena grown on demand. */
typedef struct {
    tfm_arena arena;
    pe_state stack[TFM_MAX_STACKS];
} pe_states;

typedef struct pe_kind {
    const char *name;     /* the metadata / --pe value */
    unsigned options;     /* PE_OPT_* it reads */

    /** Checks the kind's options in cfg (pe_* fields) and sizes it depends on; sets the error
     * message and returns TFM_ERR_INVALID_ARG when they make no sense. NULL: anything goes. */
    tfm_status (*validate)(const tfm_config *cfg);

    /** Writes the value the kind uses into each of its options that holds 0 = "the kind's
     * default" (t5: pe_buckets 32, pe_max_distance 128; shaw: pe_max_distance 16), so that a
     * default written out and a default left unset compare equal (tfm_config_effective). NULL:
     * no such option. */
    void (*fill_defaults)(tfm_config *cfg);

    /** Registers the encoding's tensors of stack `stack` (named under sd->prefix) in the table:
     * per-stack ones into *sp, per-layer ones into lp[l] (l < sd->n_layers); pointers are set
     * only when the builder has a base. NULL: no tensors. */
    void (*add_params)(param_builder *b, const tfm_config *cfg, int stack, const stack_desc *sd, pe_params *sp,
                       layer_params *lp);

    /** 1. x (B, T, d) of positions pos0..pos0+T−1 (every row alike) += the encoding. */
    void (*embed_forward)(const tfm_config *cfg, const pe_params *p, float *x, size_t B, size_t T, size_t d, size_t pos0);
    /** Backward of embed_forward: dx (B, T, d) is dL/dx; ACCUMULATES into the encoding's
     * gradients g (the input gradient passes through unchanged: the encoding is added). */
    void (*embed_backward)(const tfm_config *cfg, pe_params *g, const pe_params *p, const float *dx, size_t B, size_t T, size_t d,
                           size_t pos0);
    /** Floats of one stack's per-context state (pe_state) for sequences of up to `positions`
     * positions, with (with_backward) or without what embed_backward needs. NULL: the kind keeps
     * no state and p->state is NULL in its hooks. With it, embed_forward/embed_backward read
     * p->state, which context_reserve/kv_cache_reserve have sized for every position they use. */
    size_t (*state_floats)(const tfm_config *cfg, size_t positions, int with_backward);

    /** 2. Transforms in place the queries and keys of N = B·T rows of a packed Q|K|V (row r at
     * qkv + r·stride: Q at column 0, K at column d; H heads of d_k), row (b, t) at position
     * pos0 + t. */
    void (*qk_forward)(const tfm_config *cfg, const pe_params *p, float *qkv, size_t stride, size_t B, size_t T, size_t H, size_t d_k,
                       size_t pos0);
    /** Backward of qk_forward on the gradients of Q and K (same layout), in place; ACCUMULATES
     * any parameter gradient into g. */
    void (*qk_backward)(const tfm_config *cfg, pe_params *g, const pe_params *p, float *dqkv, size_t stride, size_t B, size_t T,
                        size_t H, size_t d_k, size_t pos0);

    /** 3. Writes the bias (H, T, S) of layer `layer` for queries at pos0..pos0+T−1 and keys
     * 0..S−1 (shared by the batch rows; attn_args bias with bias_bstride 0). */
    void (*bias_forward)(const tfm_config *cfg, const pe_params *sp, const layer_params *lp, mask_kind mask, float *bias, size_t H,
                         size_t T, size_t S, size_t pos0);
    /** Backward of bias_forward: dscore (B, H, T, S) is dL/d(score) = dL/d(bias) (attn_backward's
     * dprobs); ACCUMULATES into the encoding's gradients. */
    void (*bias_backward)(const tfm_config *cfg, pe_params *gs, layer_params *gl, const float *dscore, mask_kind mask, size_t B,
                          size_t H, size_t T, size_t S, size_t pos0);

    /** 4. The relative key and value embeddings of layer lp's self-attention (Shaw et al. 2018,
     * eq. 3–5; attn_args rel_k, rel_v, rel_clip): *rel_k (2k+1, d_k), *rel_v (2k+1, d_k) or NULL,
     * *clip = k. lp is the layer's parameters in the forward and its gradients in the backward
     * (where attn_backward accumulates d rel_k, d rel_v): both have the same layout. A query-
     * dependent term (q·a^K) that the bias hook cannot express. */
    void (*rel_tables)(const tfm_config *cfg, const layer_params *lp, float **rel_k, float **rel_v, size_t *clip);
} pe_kind;

/** The hooks of a configuration's encoding (cfg->pe, checked by tfm_config_validate). */
const pe_kind *pe_of(const tfm_config *cfg);

/** Calls the kind's fill_defaults hook on cfg (nothing for a kind without one or an unknown kind). */
void pe_fill_defaults(tfm_config *cfg);

/** TFM_OK when cfg->pe names an implemented kind whose options (validate hook) make sense;
 * otherwise TFM_ERR_UNSUPPORTED (a kind this build does not have) or TFM_ERR_INVALID_ARG. */
tfm_status pe_validate(const tfm_config *cfg);

/** Makes every stack's state hold `positions` positions (and, with `training`, what the backward
 * needs); grows only (re-laying out zeroes n_valid), so a trainer that reserves its largest batch
 * first never allocates in a step. Sets each state's `training` flag. Nothing for kinds without
 * state. Errors: TFM_ERR_NOMEM. (pe_state.c) */
tfm_status pe_states_reserve(pe_states *s, const tfm_config *cfg, size_t positions, int training);
void pe_states_free(pe_states *s);

/* The kinds (one file each). */
extern const pe_kind pe_kind_sinusoidal; /* pe_sinusoidal.c */
extern const pe_kind pe_kind_none;       /* pe_none.c */
extern const pe_kind pe_kind_learned;    /* pe_learned.c */
extern const pe_kind pe_kind_shaw;       /* pe_shaw.c */
extern const pe_kind pe_kind_floater;    /* pe_floater.c */
extern const pe_kind pe_kind_t5;         /* pe_t5.c */
extern const pe_kind pe_kind_rope;       /* pe_rope.c */
extern const pe_kind pe_kind_alibi;      /* pe_alibi.c */

/* Helpers of the relative kinds, exposed for their tests (tests/unit/model/test_pe_rel.c). */

/** ALiBi's slope m_h of head h (0-based) of n heads (Press et al. 2022, §3 and the paper's code):
 * 2^(−8(h+1)/n) for n a power of two; otherwise the slopes of the largest power of two p < n, then
 * every other slope of 2p heads. Dimensionless, in (0, 1). */
float pe_alibi_slope(size_t h, size_t n);

/** T5's bucket of the offset n = key position − query position (Raffel et al. 2020, §2.1; the
 * reference _relative_position_bucket): bidirectional (encoder) or causal (decoder), for
 * n_buckets buckets (even, >= 4) and max_distance (> n_buckets / 2). Returns a bucket id in
 * [0, n_buckets). */
int pe_t5_bucket(long n, int bidirectional, int n_buckets, int max_distance);

/** Rotates (inverse = 0) or rotates back (inverse = 1) in place, by position `pos`, n_rows rows of
 * H heads of d_k (d_k even) at x + r·stride + h·d_k, RoPE's pairs of `pairing` (Su et al. 2021,
 * eq. 13–15, θ_p = 10000^(−2p/d_k)). */
void pe_rope_rotate(float *x, size_t stride, size_t n_rows, size_t H, size_t d_k, size_t pos,
                    tfm_rope_pairing pairing, int inverse);

/** pe_rope_rotate with θ_p = base^(−2p/d_k) (tfm_config.rope_theta: Llama's rope_theta). */
void pe_rope_rotate_base(float *x, size_t stride, size_t n_rows, size_t H, size_t d_k, size_t pos,
                         tfm_rope_pairing pairing, int inverse, double base);

#endif
