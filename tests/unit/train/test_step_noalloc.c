/* A training step allocates nothing (issue 14: "no per-step allocation"; include/tfm/train.h:
 * "no step allocates" once the batch shape is reserved). This binary is linked with
 * -Wl,--wrap=malloc,... (CMakeLists.txt, for this test only), so every call to the allocator from
 * the library and from the statically linked BLIS goes through the counters below. The trainer is
 * created for 2 threads; a warm-up step of each shape runs on ONE thread (so no two BLIS products
 * overlap in it: BLIS's pools for concurrent products must have been filled by the trainer's
 * creation, ops_blas_reserve, not by luck during warm-up); then 4 steps of tfm_trainer_step —
 * forward with dropout, loss, backward, clipping, Adam, on 2 threads — at the reserved shape and at
 * a smaller one must make zero calls; post-LN ReLU and pre-LN GELU. A positive control inside the
 * counted window proves the counters see a malloc. Shown to fail (a) with a malloc/free added to
 * model_backward, (b) without ops_blas_reserve (BLIS's pools then grow when products first
 * overlap). docs/KERNELS.md, section "Element-wise". Continuous batching's decoding steps too
 * (gen_case). */
#include "ops.h"
#include "test_util.h"
#include "tfm/tfm.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
int __wrap_posix_memalign(void **p, size_t align, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n);

static atomic_size_t n_alloc; /* allocator calls since the last reset */

void *__wrap_malloc(size_t n) {
    atomic_fetch_add(&n_alloc, 1);
    return __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t size) {
    atomic_fetch_add(&n_alloc, 1);
    return __real_calloc(n, size);
}
void *__wrap_realloc(void *p, size_t n) {
    atomic_fetch_add(&n_alloc, 1);
    return __real_realloc(p, n);
}
int __wrap_posix_memalign(void **p, size_t align, size_t n) {
    atomic_fetch_add(&n_alloc, 1);
    return __real_posix_memalign(p, align, n);
}
void *__wrap_aligned_alloc(size_t align, size_t n) {
    atomic_fetch_add(&n_alloc, 1);
    return __real_aligned_alloc(align, n);
}

enum { MAX_B = 8, MAX_S = 19, MAX_T = 21, V = 50 };

/* Rows of random ids in [3, V), each row padded (pad 0) after a length that varies by row;
 * targets BOS (1) first and EOS (2) last. */
static void make_batch(int32_t *src, int32_t *tgt, int B, int S, int T, uint64_t seed) {
    uint64_t s = seed;
    for (int b = 0; b < B; b++) {
        const int ls = S - b % 3, lt = T - b % 4;
        for (int i = 0; i < S; i++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            src[b * S + i] = i < ls ? (int32_t)(3 + (s >> 33) % (V - 3)) : 0;
        }
        for (int i = 0; i < T; i++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            tgt[b * T + i] = i == 0 ? 1 : i == lt - 1 ? 2 : i < lt ? (int32_t)(3 + (s >> 33) % (V - 3)) : 0;
        }
    }
}

static void run_case(const char *name, int norm_first, tfm_activation act) {
    tfm_config c = tfm_config_default();
    c.d_model = 64;
    c.n_heads = 4;
    c.d_ff = 256;
    c.n_enc_layers = 2;
    c.n_dec_layers = 2;
    c.src_vocab = V;
    c.tgt_vocab = V;
    c.max_len = 32;
    c.norm_first = norm_first;
    c.activation = act;
    tfm_model *m = NULL;
    tfm_trainer *t = NULL;
    CHECK(tfm_model_create(&c, 3, &m) == TFM_OK, "%s: model: %s", name, tfm_last_error());
    if (!m) return;
    tfm_train_config tc = tfm_train_config_default();
    tc.dropout = 0.1f;
    tc.label_smoothing = 0.1f;
    tc.clip_norm = 1.0f;
    CHECK(tfm_trainer_create(m, &tc, MAX_B, MAX_S, MAX_T, &t) == TFM_OK, "%s: trainer: %s", name, tfm_last_error());
    const int small_B = 5, small_S = 11, small_T = 13;
    CHECK(!t || tfm_trainer_reserve(t, small_B, small_S, small_T) == TFM_OK, "%s: reserve: %s", name,
          tfm_last_error());
    if (!t) {
        tfm_model_free(m);
        return;
    }
    int32_t src[MAX_B * MAX_S], tgt[MAX_B * MAX_T], src2[MAX_B * MAX_S], tgt2[MAX_B * MAX_T];
    make_batch(src, tgt, MAX_B, MAX_S, MAX_T, 1);
    make_batch(src2, tgt2, small_B, small_S, small_T, 2);
    tfm_step_stats st;
    /* warm-up: one step of each shape, on one thread (lazy one-time set-ups: BLIS's kernel context) */
    ops_set_threads(1);
    CHECK(tfm_trainer_step(t, MAX_B, MAX_S, MAX_T, src, tgt, &st) == TFM_OK, "%s: warm-up: %s", name,
          tfm_last_error());
    CHECK(tfm_trainer_step(t, small_B, small_S, small_T, src2, tgt2, &st) == TFM_OK, "%s: warm-up: %s", name,
          tfm_last_error());

    atomic_store(&n_alloc, 0);
    void *volatile probe = malloc(24); /* positive control: the counters must see this one */
    free(probe);
    const size_t control = atomic_load(&n_alloc);
    CHECK(control == 1, "%s: the allocator wrappers counted %zu calls for one malloc (not linked with --wrap?)",
          name, control);

    ops_set_threads(2);
    atomic_store(&n_alloc, 0);
    int ok = 1;
    for (int k = 0; k < 4; k++) {
        const int big = k != 2;
        ok &= tfm_trainer_step(t, big ? MAX_B : small_B, big ? MAX_S : small_S, big ? MAX_T : small_T,
                               big ? src : src2, big ? tgt : tgt2, &st) == TFM_OK;
    }
    const size_t calls = atomic_load(&n_alloc);
    CHECK(ok, "%s: step: %s", name, tfm_last_error());
    CHECK(calls == 0, "%s: 4 training steps made %zu allocator calls (want 0)", name, calls);
    printf("  %-14s 4 steps after warm-up: %zu allocator calls, last loss %.4f\n", name, calls, st.loss);
    tfm_trainer_free(t);
    tfm_model_free(m);
}

/* Continuous batching's decoding steps (tfm_gen_batch_step, include/tfm/generate.h) allocate nothing
 * either: rows join between steps (tfm_gen_batch_add grows the cache then, when a row needs more
 * positions), then 40 steps on 2 threads, rows at different positions, ALiBi's bias one per row,
 * rows leaving and joining, make zero allocator calls. */
static void gen_case(void) {
    tfm_config c = tfm_config_default();
    c.arch = TFM_ARCH_DECODER_ONLY;
    c.d_model = 64;
    c.n_heads = 4;
    c.d_ff = 256;
    c.n_enc_layers = 0;
    c.n_dec_layers = 2;
    c.src_vocab = c.tgt_vocab = V;
    c.max_len = 96;
    c.pe = TFM_PE_ALIBI;
    tfm_model *m = NULL;
    tfm_context *ctx = NULL;
    tfm_gen_batch *gb = NULL;
    CHECK(tfm_model_create(&c, 4, &m) == TFM_OK && tfm_context_create(m, &ctx) == TFM_OK &&
              tfm_gen_batch_create(ctx, 4, &gb) == TFM_OK,
          "gen_batch: %s", tfm_last_error());
    if (gb) {
        int32_t prompt[20];
        for (int i = 0; i < 20; i++) prompt[i] = 3 + (i * 7) % (V - 3);
        tfm_sample_config sc = tfm_sample_config_default();
        ops_set_threads(1);
        int slot, ok = 1, steps = 0;
        ok &= tfm_gen_batch_add(gb, &sc, prompt, 3, 70, &slot) == TFM_OK; /* grows the cache past 64 */
        ok &= tfm_gen_batch_step(gb, NULL, NULL, NULL) == TFM_OK;          /* warm-up */
        ops_set_threads(2);
        size_t calls = 0;
        for (int k = 0; k < 40; k++) {
            if (k % 6 == 0 && tfm_gen_batch_rows(gb) < 4) /* joins, outside the counted step */
                ok &= tfm_gen_batch_add(gb, &sc, prompt, 1 + k % 17, 5 + k % 9, &slot) == TFM_OK;
            atomic_store(&n_alloc, 0);
            ok &= tfm_gen_batch_step(gb, NULL, NULL, NULL) == TFM_OK;
            calls += atomic_load(&n_alloc);
            steps++;
        }
        CHECK(ok, "gen_batch: %s", tfm_last_error());
        CHECK(calls == 0, "gen_batch: %d decoding steps made %zu allocator calls (want 0)", steps, calls);
        printf("  %-14s %d steps after warm-up: %zu allocator calls\n", "gen_batch", steps, calls);
    }
    tfm_gen_batch_free(gb);
    tfm_context_free(ctx);
    tfm_model_free(m);
}

int main(void) {
    ops_set_threads(2);
    run_case("post-LN ReLU", 0, TFM_ACT_RELU);
    run_case("pre-LN GELU", 1, TFM_ACT_GELU);
    gen_case();
    return test_finish("test_step_noalloc");
}
