/* The learned absolute position tables (pe learned, src/model/pe_learned.c):
 *   1. initialisation: each table (max_len, d_model) is N(0, 0.02²) as BERT and GPT-2 (sample
 *      mean within 0.001 of 0 and standard deviation within 0.001 of 0.02 over 4096 values; the
 *      sampling error is ~0.0003), and the source and target tables differ;
 *   2. gradient check: the whole model's analytic gradient (model_forward + label-smoothed loss +
 *      model_backward, dropout on) against central differences for every tensor, the two tables
 *      first among them, post-LN untied and pre-LN tied, GELU (smooth, so no kink handling: see
 *      test_model_gradcheck.c for the precision argument; h 3e-3, tolerance 1e-2 relative to the
 *      tensor's largest gradient, floor 1e-3). Rows of positions the batch never reaches have
 *      a zero gradient both ways;
 *   3. training: Adam steps change the rows of the positions a batch uses and no other row
 *      (their gradient and moments stay exactly zero), and an exact resume through a resumable
 *      checkpoint (tfm_trainer_save / tfm_trainer_load_state: 3 + 3 steps) gives bit for bit the
 *      parameters of 6 uninterrupted steps — the Adam moments cover the tables. */
#include "model_internal.h"
#include "ops.h"
#include "test_util.h"
#include "tfm/tfm.h"

#include <stdint.h>

#define H_STEP 3e-3f
#define FLOOR 1e-3
#define TOL 1e-2
#define ACC0 0.25f
#define DROPOUT 0.2f
#define SMOOTHING 0.1f

enum { B = 2, S = 5, T = 7, TD = T - 1, MAX_LEN = 9, V = 13 };

/* Row 0 full length, row 1 padded; target rows BOS (1) first and EOS (2) last. */
static const int32_t SRC[B * S] = {3, 7, 10, 4, 5, /**/ 6, 9, 3, 0, 0};
static const int32_t TGT[B * T] = {1, 4, 8, 12, 5, 6, 2, /**/ 1, 9, 3, 2, 0, 0, 0};

static tfm_config learned_config(int norm_first, int tied) {
    tfm_config c = tfm_config_default();
    c.d_model = 8;
    c.n_heads = 2;
    c.d_ff = 12;
    c.n_enc_layers = 1;
    c.n_dec_layers = 1;
    c.src_vocab = V;
    c.tgt_vocab = V;
    c.max_len = MAX_LEN;
    c.norm_first = norm_first;
    c.activation = TFM_ACT_GELU;
    c.tie_embeddings = tied;
    c.pe = TFM_PE_LEARNED;
    return c;
}

/* The index of the parameter entry named `name`, or −1. */
static int entry_of(const tfm_model *m, const char *name) {
    for (size_t k = 0; k < m->n_entries; k++)
        if (strcmp(m->entries[k].name, name) == 0) return (int)k;
    return -1;
}

static void init_case(void) {
    tfm_config c = tfm_config_default();
    c.d_model = 16;
    c.n_heads = 2;
    c.src_vocab = c.tgt_vocab = 20;
    c.pe = TFM_PE_LEARNED; /* max_len 256: 4096 values per table */
    tfm_model *m = NULL;
    CHECK(tfm_model_create(&c, 5, &m) == TFM_OK, "create: %s", tfm_last_error());
    if (!m) return;
    const char *names[2] = {"transformer.encoder.pos_embed.weight", "transformer.decoder.pos_embed.weight"};
    const float *tab[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++) {
        int k = entry_of(m, names[i]);
        CHECK(k >= 0, "no tensor %s", names[i]);
        if (k < 0) continue;
        const param_entry *e = &m->entries[k];
        CHECK(e->ndim == 2 && e->shape[0] == 256 && e->shape[1] == 16, "%s: shape [%zu, %zu]", names[i], e->shape[0],
              e->shape[1]);
        tab[i] = (const float *)m->param_arena.base + e->offset;
        double sum = 0.0, sq = 0.0;
        for (size_t j = 0; j < e->numel; j++) {
            sum += tab[i][j];
            sq += (double)tab[i][j] * tab[i][j];
        }
        const double mean = sum / (double)e->numel, sd = sqrt(sq / (double)e->numel - mean * mean);
        printf("%s: mean %.5f, sd %.5f\n", names[i], mean, sd);
        CHECK(fabs(mean) < 1e-3 && fabs(sd - 0.02) < 1e-3, "%s: mean %.4g, sd %.4g: not N(0, 0.02^2)", names[i], mean,
              sd);
    }
    if (tab[0] && tab[1]) CHECK(memcmp(tab[0], tab[1], 256 * 16 * sizeof(float)) != 0, "the two tables are equal");
    tfm_model_free(m);
}

typedef struct {
    tfm_model *m;
    tfm_context *ctx;
    dropout_cfg drop;
    int32_t y[B * TD];
    float losses[B * TD];
} fixture;

static double loss_of(fixture *f) {
    const tfm_config *c = &f->m->cfg;
    model_forward(f->ctx, B, S, TD, SRC, TGT, T, &f->drop);
    size_t n = 0;
    return cross_entropy_forward(f->losses, &n, f->ctx->acts.logits, f->y, c->pad_id, SMOOTHING, (size_t)(B * TD),
                                 (size_t)c->tgt_vocab);
}

static void gradcheck_case(const char *name, int norm_first, int tied) {
    tfm_config c = learned_config(norm_first, tied);
    fixture f = {0};
    CHECK(tfm_model_create(&c, 11, &f.m) == TFM_OK, "%s: create: %s", name, tfm_last_error());
    if (!f.m) return;
    tfm_model *m = f.m;
    float *base = (float *)m->param_arena.base;
    uint64_t s = 0x9E3779B97F4A7C15ULL + (uint64_t)(2 * norm_first + tied);
    for (size_t i = 0; i < m->n_params; i++) base[i] += 0.1f * test_frand(&s);
    f.drop.p = DROPOUT;
    f.drop.seed = 0x5eed;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < TD; t++) f.y[b * TD + t] = TGT[b * T + t + 1];
    CHECK(tfm_context_create(m, &f.ctx) == TFM_OK && context_reserve(f.ctx, B, S, TD, 1) == TFM_OK, "%s: reserve",
          name);
    float *gbase = malloc(m->n_params * sizeof(float));
    for (size_t i = 0; i < m->n_params; i++) gbase[i] = ACC0;
    model_params g;
    params_layout(&c, &g, gbase, NULL, NULL);
    tfm_arena counter = {NULL, 0, 0}, ws_arena = {NULL, 0, 0};
    grad_workspace ws;
    grad_workspace_layout(KERN, &c, B, S, TD, &counter, NULL);
    CHECK(arena_init(&ws_arena, counter.used, "test workspace") == TFM_OK, "%s: workspace", name);
    grad_workspace_layout(KERN, &c, B, S, TD, &ws_arena, &ws);
    const double loss0 = loss_of(&f);
    size_t n_tok = 0;
    cross_entropy_forward(f.losses, &n_tok, f.ctx->acts.logits, f.y, c.pad_id, SMOOTHING, (size_t)(B * TD),
                          (size_t)c.tgt_vocab);
    cross_entropy_backward(f.ctx->acts.logits, f.ctx->acts.logits, f.y, c.pad_id, SMOOTHING, n_tok, (size_t)(B * TD),
                           (size_t)c.tgt_vocab);
    model_backward(f.ctx, &g, &ws, SRC, TGT, T, &f.drop);

    double worst = 0.0, worst_table = 0.0;
    const char *worst_name = "";
    for (size_t k = 0; k < m->n_entries; k++) {
        const param_entry *e = &m->entries[k];
        if (e->alias_of >= 0) continue;
        const int table = strstr(e->name, "pos_embed") != NULL;
        const size_t used = strstr(e->name, "encoder") ? (size_t)S : (size_t)TD; /* positions a batch reaches */
        double max_diff = 0.0, max_num = 0.0, unused = 0.0;
        for (size_t i = 0; i < e->numel; i++) {
            float *x = base + e->offset + i;
            const float x0 = *x, xp = x0 + H_STEP, xm = x0 - H_STEP;
            *x = xp;
            const double lp = loss_of(&f);
            *x = xm;
            const double lm = loss_of(&f);
            *x = x0;
            const double num = (lp - lm) / ((double)xp - (double)xm);
            const double ana = (double)gbase[e->offset + i] - (double)ACC0;
            if (isnan(num) || isnan(ana)) max_diff = INFINITY;
            max_num = fmax(max_num, fabs(num));
            max_diff = fmax(max_diff, fabs(ana - num));
            if (table && i / e->shape[1] >= used) unused = fmax(unused, fmax(fabs(ana), fabs(num)));
        }
        const double err = max_diff / fmax(FLOOR, max_num);
        CHECK(err <= TOL, "%s: gradient of %s: error %.3g > %g", name, e->name, err, TOL);
        if (table) {
            CHECK(max_num > 10 * FLOOR, "%s: %s has a gradient of only %.3g: the check looks at nothing", name, e->name,
                  max_num);
            CHECK(unused == 0.0, "%s: %s: rows past the batch have gradient %.3g, want 0", name, e->name, unused);
            worst_table = fmax(worst_table, err);
        }
        if (!(err <= worst)) {
            worst = err;
            worst_name = e->name;
        }
    }
    printf("%-14s loss %.5f, worst error %.2e (%s), position tables %.2e\n", name, loss0, worst, worst_name,
           worst_table);
    arena_free(&ws_arena);
    free(gbase);
    tfm_context_free(f.ctx);
    tfm_model_free(m);
}

/* A trainer on a fresh model of the learned config (seed 3). */
static tfm_trainer *new_trainer(tfm_model **m) {
    tfm_config c = learned_config(0, 0);
    tfm_train_config tc = tfm_train_config_default();
    tc.lr = 1e-2;
    tc.dropout = 0.1f;
    tfm_trainer *tr = NULL;
    CHECK(tfm_model_create(&c, 3, m) == TFM_OK && tfm_trainer_create(*m, &tc, B, S, T, &tr) == TFM_OK, "trainer: %s",
          tfm_last_error());
    return tr;
}

static void steps(tfm_trainer *tr, int n) {
    for (int i = 0; tr && i < n; i++) {
        tfm_step_stats st;
        CHECK(tfm_trainer_step(tr, B, S, T, SRC, TGT, &st) == TFM_OK, "step: %s", tfm_last_error());
    }
}

static void training_case(void) {
    tfm_model *m = NULL, *m0 = NULL, *m2 = NULL;
    tfm_trainer *tr = new_trainer(&m);
    tfm_config c = learned_config(0, 0);
    CHECK(tfm_model_create(&c, 3, &m0) == TFM_OK, "reference model");
    if (!tr || !m0) return;
    steps(tr, 6);
    /* rows of used positions moved, the others did not */
    for (int s = 0; s < 2; s++) {
        const char *name = s == 0 ? "transformer.encoder.pos_embed.weight" : "transformer.decoder.pos_embed.weight";
        const size_t used = s == 0 ? (size_t)S : (size_t)TD, d = (size_t)c.d_model;
        const param_entry *e = &m->entries[entry_of(m, name)];
        const float *now = (const float *)m->param_arena.base + e->offset,
                    *was = (const float *)m0->param_arena.base + e->offset;
        int moved = 1;
        for (size_t r = 0; r < used; r++) moved &= memcmp(now + r * d, was + r * d, d * sizeof(float)) != 0;
        CHECK(moved, "%s: a row of a used position did not change in training", name);
        CHECK(memcmp(now + used * d, was + used * d, ((size_t)MAX_LEN - used) * d * sizeof(float)) == 0,
              "%s: a row past the batch's positions changed", name);
    }
    /* exact resume: 3 steps, save, a new trainer on the loaded checkpoint, 3 more */
    char dir[512], path[600];
    CHECK(test_make_tmpdir(dir, sizeof dir, "pe-learned") != NULL, "tmpdir");
    snprintf(path, sizeof path, "%s/r.safetensors", dir);
    tfm_model *ma = NULL;
    tfm_trainer *ta = new_trainer(&ma);
    steps(ta, 3);
    tfm_train_progress pr = {0, 0, INFINITY, 0};
    tfm_trainer_set_progress(ta, &pr);
    CHECK(tfm_trainer_save(ta, path) == TFM_OK, "save: %s", tfm_last_error());
    tfm_trainer_free(ta);
    tfm_model_free(ma);
    tfm_train_config tc = tfm_train_config_default();
    tc.lr = 1e-2;
    tc.dropout = 0.1f;
    tfm_trainer *tb = NULL;
    CHECK(tfm_model_load(path, &m2) == TFM_OK && tfm_trainer_create(m2, &tc, B, S, T, &tb) == TFM_OK &&
              tfm_trainer_load_state(tb, path) == TFM_OK,
          "resume: %s", tfm_last_error());
    steps(tb, 3);
    if (m2)
        CHECK(memcmp(m->param_arena.base, m2->param_arena.base, m->n_params * sizeof(float)) == 0,
              "3 + 3 steps through a resumable checkpoint differ from 6 steps");
    remove(path);
    rmdir(dir);
    tfm_trainer_free(tb);
    tfm_model_free(m2);
    tfm_trainer_free(tr);
    tfm_model_free(m);
    tfm_model_free(m0);
}

int main(void) {
    ops_set_threads(1);
    init_case();
    gradcheck_case("post-LN", 0, 0);
    gradcheck_case("pre-LN tied", 1, 1);
    training_case();
    return test_finish("pe_learned");
}
