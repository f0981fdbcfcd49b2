/* tfm init: a fresh model from flags (DESIGN.md §5), saved as a safetensors checkpoint. */
#include "args.h"
#include "tfm/tfm.h"

#include <stdio.h>
#include <string.h>

static int run(int argc, char **argv);

const cli_command cmd_init = {"init", "create a freshly initialised model and save it",
                              "tfm init [--d-model N --n-heads N ...] --save M", run};

static int run(int argc, char **argv) {
    tfm_config c = tfm_config_default();
    const char *arch = "encoder-decoder", *activation = "relu", *pe = "sinusoidal", *save = NULL;
    int seed = 1;
    cli_opt opts[] = {
        {"--arch", OPT_STR, &arch, 0, "architecture: encoder-decoder"},
        {"--d-model", OPT_INT, &c.d_model, 0, "model width d_model"},
        {"--n-heads", OPT_INT, &c.n_heads, 0, "attention heads (must divide d_model)"},
        {"--n-enc-layers", OPT_INT, &c.n_enc_layers, 0, "encoder layers"},
        {"--n-dec-layers", OPT_INT, &c.n_dec_layers, 0, "decoder layers"},
        {"--d-ff", OPT_INT, &c.d_ff, 0, "inner width of the feed-forward network"},
        {"--src-vocab", OPT_INT, &c.src_vocab, 0, "source vocabulary size"},
        {"--tgt-vocab", OPT_INT, &c.tgt_vocab, 0, "target vocabulary size"},
        {"--max-len", OPT_INT, &c.max_len, 0, "longest sequence accepted, in tokens"},
        {"--norm-first", OPT_INT, &c.norm_first, 0, "1: pre-LN, 0: post-LN as the paper"},
        {"--activation", OPT_STR, &activation, 0, "FFN activation: relu or gelu"},
        {"--pe", OPT_STR, &pe, 0, "position encoding: sinusoidal"},
        {"--pad-id", OPT_INT, &c.pad_id, 0, "padding token id"},
        {"--bos-id", OPT_INT, &c.bos_id, 0, "begin-of-sequence token id"},
        {"--eos-id", OPT_INT, &c.eos_id, 0, "end-of-sequence token id"},
        {"--layer-norm-eps", OPT_FLOAT, &c.layer_norm_eps, 0, "LayerNorm epsilon"},
        {"--tie-embeddings", OPT_INT, &c.tie_embeddings, 0, "1: share src/tgt embeddings and generator"},
        {"--seed", OPT_INT, &seed, 0, "random seed of the initialisation"},
        {"--save", OPT_STR, &save, 1, "output checkpoint (.safetensors)"},
    };
    int r = cli_parse(&cmd_init, argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (r) return r == 1 ? 0 : EXIT_USAGE;
    if (strcmp(arch, "encoder-decoder") == 0) c.arch = TFM_ARCH_ENCODER_DECODER;
    else {
        cli_error("init", "--arch '%s': this build supports encoder-decoder", arch);
        return EXIT_USAGE;
    }
    if (strcmp(activation, "relu") == 0) c.activation = TFM_ACT_RELU;
    else if (strcmp(activation, "gelu") == 0) c.activation = TFM_ACT_GELU;
    else {
        cli_error("init", "--activation must be relu or gelu, got '%s'", activation);
        return EXIT_USAGE;
    }
    if (strcmp(pe, "sinusoidal") != 0) {
        cli_error("init", "--pe must be sinusoidal, got '%s'", pe);
        return EXIT_USAGE;
    }
    if (seed < 0) {
        cli_error("init", "--seed must be non-negative, got %d", seed);
        return EXIT_USAGE;
    }
    if (tfm_config_validate(&c) != TFM_OK) {
        cli_error("init", "%s", tfm_last_error());
        return EXIT_USAGE;
    }
    tfm_model *m = NULL;
    if (tfm_model_create(&c, (uint64_t)seed, &m) != TFM_OK || tfm_model_save(m, save) != TFM_OK) {
        cli_error("init", "%s", tfm_last_error());
        tfm_model_free(m);
        return EXIT_RUNTIME;
    }
    fprintf(stderr, "tfm init: wrote %s (%zu parameters)\n", save, tfm_config_param_count(&c));
    tfm_model_free(m);
    return 0;
}
