/* `--pe-layout tensor2tensor` (docs/POSITION.md, section sinusoidal): the table the model adds (the
 * sinusoidal kind's embed_forward hook, as layer code calls it) equals tensor2tensor's
 * get_timing_signal_1d, reimplemented in NumPy float64 by tests/reference/make_golden_t2t_timing.py
 * (which also checks it against fairseq's get_embedding): tests/golden/pe_tensor2tensor/signal.txt,
 * d_model 2 to 512, positions 0..63 and blocks starting at 5 and 1000, within TOL (float32 rounding
 * of values in [−1, 1]). Also: the name round-trips and travels in a checkpoint's metadata, scale
 * multiplies by √d_model, an odd d_model is refused, and for d_model ≥ 4 the values differ from
 * `concat` (the paper's frequencies), whose table is unchanged (interleaved, permuted). */
#include "model_internal.h"
#include "ops.h"
#include "test_util.h"
#include "tfm/tfm.h"

#include <unistd.h>

#define TOL 1e-6

static tfm_config t2t_config(int d) {
    tfm_config c = tfm_config_default();
    c.pe = TFM_PE_SINUSOIDAL;
    c.pe_layout = TFM_PE_LAYOUT_TENSOR2TENSOR;
    c.d_model = d;
    c.n_heads = 1;
    return c;
}

/* The rows pos0 .. pos0 + T − 1 of configuration c's table, through its pe hook; caller frees. */
static float *model_table(const tfm_config *c, size_t T, size_t pos0) {
    const size_t d = (size_t)c->d_model;
    float *x = calloc(T * d, sizeof *x);
    pe_of(c)->embed_forward(c, NULL, x, 1, T, d, pos0);
    return x;
}

static void golden_blocks(void) {
    FILE *f = fopen(test_path("tests/golden/pe_tensor2tensor/signal.txt"), "r");
    CHECK(f != NULL, "cannot open tests/golden/pe_tensor2tensor/signal.txt");
    if (!f) return;
    int d, pos0, T, blocks = 0;
    while (fscanf(f, "%d %d %d", &d, &pos0, &T) == 3) {
        blocks++;
        tfm_config c = t2t_config(d);
        CHECK(tfm_config_validate(&c) == TFM_OK, "d_model %d tensor2tensor refused: %s", d, tfm_last_error());
        float *x = model_table(&c, (size_t)T, (size_t)pos0);
        double worst = 0.0;
        for (int i = 0; i < T * d; i++) {
            double want;
            if (fscanf(f, "%lf", &want) != 1) {
                CHECK(0, "signal.txt: block d %d pos0 %d is short", d, pos0);
                break;
            }
            const double e = fabs(want - (double)x[i]);
            if (!(e <= worst)) worst = isnan(e) ? INFINITY : e;
        }
        CHECK(worst <= TOL, "d_model %d, positions %d..%d: max |tfm - get_timing_signal_1d| = %.3g > %g", d, pos0,
              pos0 + T - 1, worst, TOL);
        printf("d_model %3d positions %4d..%4d: max |tfm - get_timing_signal_1d| = %.3g\n", d, pos0, pos0 + T - 1,
               worst);
        free(x);
    }
    fclose(f);
    CHECK(blocks == 7, "signal.txt holds %d blocks, want 7", blocks);
}

static void options(void) {
    tfm_pe_layout l;
    CHECK(tfm_pe_layout_from_name("tensor2tensor", &l) == TFM_OK && l == TFM_PE_LAYOUT_TENSOR2TENSOR &&
              strcmp(tfm_pe_layout_name(l), "tensor2tensor") == 0,
          "the name tensor2tensor");
    tfm_config c = t2t_config(7);
    CHECK(tfm_config_validate(&c) == TFM_ERR_INVALID_ARG && strstr(tfm_last_error(), "tensor2tensor") &&
              strstr(tfm_last_error(), "even d_model"),
          "odd d_model with tensor2tensor: %s", tfm_last_error());

    c = t2t_config(16);
    float *plain = model_table(&c, 12, 0);
    c.pe_scale = 1;
    float *scaled = model_table(&c, 12, 0);
    double worst = 0.0;
    for (size_t i = 0; i < 12 * 16; i++) worst = fmax(worst, fabs((double)scaled[i] - 4.0 * (double)plain[i]));
    CHECK(worst <= 4 * TOL, "scale: max |scaled - 4 * plain| = %.3g", worst);
    c.pe_scale = 0;
    c.pe_layout = TFM_PE_LAYOUT_CONCAT;
    float *concat = model_table(&c, 12, 0);
    c.pe_layout = TFM_PE_LAYOUT_INTERLEAVED;
    float *inter = model_table(&c, 12, 0);
    size_t differ = 0, same_as_interleaved = 0;
    for (size_t p = 0; p < 12; p++)
        for (size_t i = 0; i < 8; i++) {
            differ += plain[p * 16 + i] != concat[p * 16 + i];
            same_as_interleaved += concat[p * 16 + i] == inter[p * 16 + 2 * i] &&
                                   concat[p * 16 + 8 + i] == inter[p * 16 + 2 * i + 1];
        }
    CHECK(differ > 50, "tensor2tensor and concat share %zu of 96 sines: the frequencies should differ", 96 - differ);
    CHECK(same_as_interleaved == 96, "concat is no longer interleaved permuted (%zu of 96 pairs)", same_as_interleaved);
    free(plain), free(scaled), free(concat), free(inter);

    /* the layout travels in the checkpoint */
    c = t2t_config(16);
    c.src_vocab = c.tgt_vocab = 20;
    c.n_enc_layers = c.n_dec_layers = 1;
    c.d_ff = 32;
    tfm_model *m = NULL, *r = NULL;
    char dir[256], path[320];
    CHECK(test_make_tmpdir(dir, sizeof dir, "pe_t2t") != NULL, "tmpdir");
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    CHECK(tfm_model_create(&c, 1, &m) == TFM_OK && tfm_model_save(m, path) == TFM_OK &&
              tfm_model_load(path, &r) == TFM_OK,
          "save/load: %s", tfm_last_error());
    CHECK(r && tfm_model_config(r)->pe_layout == TFM_PE_LAYOUT_TENSOR2TENSOR, "pe_layout after reload");
    tfm_model_free(m);
    tfm_model_free(r);
    remove(path);
    rmdir(dir);
}

int main(void) {
    golden_blocks();
    options();
    return test_finish("pe_tensor2tensor");
}
