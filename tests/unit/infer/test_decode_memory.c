/* What decoding on the KV cache holds besides the parameters (issue 28: a batch-32 greedy run of a
 * Marian of opus-mt's shape peaked at 2.27 GB, 7.6 × its parameters): the KV cache and the
 * encoder's workspace for one group of sentences (ENCODE_TOKENS), one block's activations that
 * every block of a stack shares, no decoder activations, no logits but the step's, no copy of any
 * weight. Checked on the estimate of opus-mt's shape (no allocation) and on the arenas a real
 * context lays out for a small model of 1 and 6 layers. And a decoder-only model's batched prefill
 * (src/model/prefill.h): its workspace, in chunks of PREFILL_CHUNK positions, grows linearly with
 * the prompt (one forward of the whole prompt kept n_heads · P² attention weights: 3.5 GiB for
 * 8192 positions and 14 heads), the decoding estimate counts it, and a context lays out what it
 * counts. */
#include "model_internal.h"
#include "test_util.h"
#include "tfm/tfm.h"

#include <stdio.h>

static double mib(size_t bytes) { return (double)bytes / 1048576.0; }

/* Greedy decoding at batch 32 with a Marian of opus-mt's shape (d_model 512, 8 heads, 6+6 layers,
 * d_ff 2048, vocabulary 58,101) on sources of 230 tokens, 64 output tokens (issue 28's speed
 * table): what decoding needs besides the parameters is the KV cache (every decoded position's
 * keys and values, the memory's cross-attention K|V) and the encoder's workspace for one group of
 * sentences (ENCODE_TOKENS). That workspace holds one block's activations, not every block's, and
 * no decoder activations or logits: the same with 1 or 6 layers per stack and any vocabulary.
 * Before 2026-12-03 this estimate was 1.7 GiB besides the parameters (every block's activations of
 * the whole batch, the decoder's weights transposed); the peak RSS was 2.27 GB. */
static void check_decode_opus_shape(void) {
    tfm_config c = tfm_config_default();
    c.d_model = 512, c.n_heads = 8, c.n_enc_layers = c.n_dec_layers = 6, c.d_ff = 2048, c.max_len = 512;
    c.src_vocab = c.tgt_vocab = 58101, c.tie_embeddings = 1;
    const int B = 32, S = 230, out = 64;
    tfm_memory_estimate e, one, small;
    CHECK(tfm_memory_estimate_decode(&c, B, S, out, 1, 0, &e) == TFM_OK, "opus shape: %s", tfm_last_error());
    tfm_config c1 = c;
    c1.n_enc_layers = c1.n_dec_layers = 1;
    tfm_config cv = c;
    cv.src_vocab = cv.tgt_vocab = 1000;
    CHECK(tfm_memory_estimate_decode(&c1, B, S, out, 1, 0, &one) == TFM_OK &&
              tfm_memory_estimate_decode(&cv, B, S, out, 1, 0, &small) == TFM_OK,
          "opus shape, 1 layer / small vocabulary: %s", tfm_last_error());
    const size_t d = 512, rows = (ENCODE_TOKENS + S - 1) / S; /* the largest group of any batch up to S */
    /* the KV cache: 6 layers × (self K, V of 32 × 65 positions + cross K|V of 32 × 230) */
    const size_t kv = 6 * ((size_t)B * (out + 1) * 2 * d + (size_t)B * S * 2 * d) * sizeof(float);
    /* one group's block: about 24 d-wide rows a token (18 for the block, embedding, output,
     * LayerNorm statistics) and the attention weights (8 heads × S) */
    const size_t enc = rows * S * (24 * d + 8 * (size_t)S) * sizeof(float);
    printf("decode, opus-mt shape, batch 32 greedy, S %d: params %.1f MiB, activations %.1f MiB (%zu sentences a pass), "
           "KV cache %.1f MiB, workspace %.1f MiB\n",
           S, mib(e.params), mib(e.activations), rows, mib(e.cache), mib(e.workspace));
    CHECK(e.workspace == 0, "opus shape: no workspace (%zu bytes)", e.workspace);
    CHECK(e.activations == one.activations && e.activations == small.activations,
          "opus shape: the encoder's workspace grows with the layers or the vocabulary (%zu, 1 layer %zu, V 1000 %zu)",
          e.activations, one.activations, small.activations);
    CHECK(e.activations <= enc && e.activations >= enc / 2, "opus shape: encoder workspace %zu bytes, expected about %zu",
          e.activations, enc);
    CHECK(e.cache >= kv && e.cache <= kv + kv / 8, "opus shape: KV cache %zu bytes, expected about %zu", e.cache, kv);
    CHECK(e.activations + e.cache + e.workspace < ((size_t)320 << 20),
          "opus shape: %.1f MiB besides the parameters", mib(e.activations + e.cache + e.workspace));
}

/* A real context: after tfm_context_reserve_decode for 32 sentences of S tokens and 64 output
 * tokens, its workspace is the estimate's (context_reserve_encode's layout of one group), the same
 * for 1 and 6 layers per stack, and a greedy decode within the reserve allocates nothing more. */
static size_t reserved(int layers, size_t *cache, size_t *estimate) {
    enum { B = 32, S = 60, OUT = 64 };
    tfm_config c = tfm_config_default();
    c.d_model = 64, c.n_heads = 4, c.d_ff = 256, c.n_enc_layers = c.n_dec_layers = layers;
    c.src_vocab = c.tgt_vocab = 300, c.max_len = 128;
    tfm_model *m = NULL;
    tfm_context *ctx = NULL;
    if (tfm_model_create(&c, 3, &m) != TFM_OK || tfm_context_create(m, &ctx) != TFM_OK) {
        CHECK(0, "model: %s", tfm_last_error());
        tfm_model_free(m);
        return 0;
    }
    tfm_decode_config dc = tfm_decode_config_default();
    dc.max_len_a = 0.0f, dc.max_len_b = OUT;
    static int32_t src[B * S], out[B * OUT];
    int len[B];
    for (int i = 0; i < B * S; i++) src[i] = 3 + (i * 7) % 290;
    tfm_memory_estimate e;
    CHECK(tfm_context_reserve_decode(ctx, &dc, B, S) == TFM_OK &&
              tfm_memory_estimate_decode(&c, B, S, OUT, 1, 0, &e) == TFM_OK,
          "%d layers: reserve: %s", layers, tfm_last_error());
    const size_t act = ctx->act_arena.cap;
    *cache = ctx->cache.arena.cap;
    *estimate = e.activations + e.cache + e.workspace;
    /* an arena's capacity is its layout's bytes rounded up to TFM_ARENA_ALIGN */
    CHECK(act >= e.activations && act < e.activations + TFM_ARENA_ALIGN && *cache >= e.cache &&
              *cache < e.cache + TFM_ARENA_ALIGN && e.workspace == 0,
          "%d layers: reserved %zu + %zu bytes, estimated %zu + %zu + %zu", layers, act, *cache, e.activations, e.cache,
          e.workspace);
    CHECK(ctx->acts.B == encode_rows(B, S, ENCODE_TOKENS) && ctx->acts.B < B,
          "%d layers: the encoder runs %d of %d sentences a pass", layers, ctx->acts.B, B);
    CHECK(tfm_model_translate(ctx, &dc, B, S, src, out, OUT, len) == TFM_OK, "%d layers: translate: %s", layers,
          tfm_last_error());
    CHECK(ctx->act_arena.cap == act && ctx->cache.arena.cap == *cache,
          "%d layers: decoding within the reserve grew the workspace (%zu → %zu) or the cache", layers, act,
          ctx->act_arena.cap);
    tfm_context_free(ctx);
    tfm_model_free(m);
    return act;
}

/* A decoder-only model of Qwen2-0.5B's shape (d_model 896, 14 heads over 2 KV heads, d_ff 4864,
 * RMSNorm, SwiGLU, RoPE): the prefill's workspace for prompts of 1024 to 8192 positions is linear in
 * the prompt — doubling it at most doubles the bytes (one forward: ×3.4 from 4096 to 8192) — and
 * within 256 MiB at 8192 positions (one forward: 4.2 GiB); in chunks of C it is about C rows'
 * activations plus n_heads · C · P attention weights; the decoding estimate's workspace is it. */
static void check_prefill_linear(void) {
    tfm_config c = tfm_config_default();
    c.arch = TFM_ARCH_DECODER_ONLY, c.n_enc_layers = 0, c.n_dec_layers = 24, c.max_len = 32768;
    c.d_model = 896, c.n_heads = 14, c.n_kv_heads = 2, c.d_ff = 4864, c.src_vocab = c.tgt_vocab = 151936;
    c.norm_first = 1, c.norm = TFM_NORM_RMS, c.activation = TFM_ACT_SWIGLU, c.pe = TFM_PE_ROPE;
    const size_t b1k = model_prefill_bytes(&c, 1024), b4k = model_prefill_bytes(&c, 4096),
                 b8k = model_prefill_bytes(&c, 8192), one8k = model_prefill_bytes_chunk(&c, 8192, 8192);
    printf("prefill workspace, Qwen2-0.5B shape, chunks of %d: P 1024 %.1f MiB, 4096 %.1f MiB, 8192 %.1f MiB "
           "(one forward of 8192: %.1f MiB)\n",
           PREFILL_CHUNK, mib(b1k), mib(b4k), mib(b8k), mib(one8k));
    CHECK(b4k > b1k && b8k > b4k && b8k <= 2 * b4k && b4k <= 4 * b1k,
          "prefill workspace not linear in the prompt: %zu, %zu, %zu bytes at 1024, 4096, 8192", b1k, b4k, b8k);
    CHECK(b8k < ((size_t)256 << 20), "prefill workspace of 8192 positions: %.1f MiB", mib(b8k));
    /* the attention weights of C queries over the P keys grow with P; the rest does not */
    const size_t H = 14, C = PREFILL_CHUNK, weights = H * C * (8192 - 4096) * sizeof(float);
    CHECK(b8k - b4k >= weights && b8k - b4k < weights + 2 * TFM_ARENA_ALIGN,
          "from 4096 to 8192 positions the workspace grows by %zu bytes, the attention weights by %zu", b8k - b4k,
          weights);
    CHECK(one8k > ((size_t)4 << 30) / 2, "one forward of 8192 positions: %.1f MiB", mib(one8k));
    tfm_memory_estimate e;
    CHECK(tfm_memory_estimate_decode(&c, 4, 0, 8191, 1, 0, &e) == TFM_OK && e.workspace == b8k,
          "decoder-only estimate of 8192 positions: workspace %zu bytes, the prefill's %zu (%s)", e.workspace, b8k,
          tfm_last_error());
}

/* A small decoder-only model's context: model_prefill_reserve in chunks of C lays out
 * model_prefill_bytes_chunk's bytes, and tfm_generate on a prompt longer than C stays within it. */
static void check_prefill_reserved(void) {
    enum { P = 60, C = 8, CAP = 64 };
    tfm_config c = tfm_config_default();
    c.arch = TFM_ARCH_DECODER_ONLY, c.n_enc_layers = 0, c.n_dec_layers = 2, c.max_len = CAP;
    c.d_model = 32, c.n_heads = 4, c.d_ff = 64, c.src_vocab = c.tgt_vocab = 50;
    tfm_model *m = NULL;
    tfm_context *ctx = NULL;
    if (tfm_model_create(&c, 5, &m) != TFM_OK || tfm_context_create(m, &ctx) != TFM_OK) {
        CHECK(0, "decoder-only model: %s", tfm_last_error());
        tfm_model_free(m);
        return;
    }
    ctx->prefill_chunk = C;
    CHECK(kv_cache_reserve(ctx, 1, 0, CAP) == TFM_OK, "cache: %s", tfm_last_error());
    model_decode_start(ctx, NULL);
    CHECK(model_prefill_reserve(ctx, P) == TFM_OK, "prefill reserve: %s", tfm_last_error());
    const size_t want = model_prefill_bytes_chunk(&c, P, C), have = ctx->cache.prefill.arena.cap;
    CHECK(have >= want && have < want + TFM_ARENA_ALIGN && want < model_prefill_bytes_chunk(&c, P, P) / 2,
          "prefill of %d in chunks of %d: reserved %zu bytes, counted %zu (one forward: %zu)", P, C, have, want,
          model_prefill_bytes_chunk(&c, P, P));
    int32_t prompt[P - 1], out[4];
    for (int i = 0; i < P - 1; i++) prompt[i] = 3 + (i * 7) % 40;
    tfm_sample_config sc = tfm_sample_config_default();
    sc.temperature = 0.0f;
    int n = 0;
    CHECK(tfm_generate(ctx, &sc, prompt, P - 1, 4, 1, out, 4, &n, NULL, NULL) == TFM_OK && n >= 1 &&
              ctx->cache.prefill.chunk == C && ctx->cache.prefill.arena.cap == have,
          "generate after a prompt of %d in chunks of %d: %s (workspace %zu bytes)", P, C, tfm_last_error(),
          ctx->cache.prefill.arena.cap);
    tfm_context_free(ctx);
    tfm_model_free(m);
}

int main(void) {
    check_decode_opus_shape();
    check_prefill_linear();
    check_prefill_reserved();
    size_t cache1, cache6, est1, est6;
    const size_t act1 = reserved(1, &cache1, &est1), act6 = reserved(6, &cache6, &est6);
    printf("small model, batch 32: workspace %zu bytes with 1 layer, %zu with 6; KV cache %zu and %zu\n", act1, act6,
           cache1, cache6);
    CHECK(act1 > 0 && act1 == act6, "the encoder's workspace grows with the layers: %zu (1) vs %zu (6)", act1, act6);
    CHECK(cache6 > 4 * cache1, "the KV cache holds every layer's keys and values: %zu (1) vs %zu (6)", cache1, cache6);
    return test_finish("decode_memory");
}
