/* tfm init: a fresh model from flags (docs/FORMATS.md), saved as a safetensors checkpoint. */
#include "model_flags.h"

#include <stdio.h>

static int run(int argc, char **argv);

const cli_command cmd_init = {"init", "create a freshly initialised model and save it",
                              "tfm init [--d-model N --n-heads N ...] --save M\n"
                              "       (not given: --arch encoder-decoder has 3 encoder layers, post-LN, untied "
                              "embeddings;\n        decoder-only has none, pre-LN, tied: docs/LM.md)",
                              run};

static int run(int argc, char **argv) {
    model_flags f = model_flags_default();
    const char *save = NULL;
    int seed = 1;
    cli_opt opts[] = {
        MODEL_OPTS(f),
        {"--src-vocab", OPT_INT, &f.c.src_vocab, 0, "source vocabulary size"},
        {"--tgt-vocab", OPT_INT, &f.c.tgt_vocab, 0, "target vocabulary size"},
        {"--pad-id", OPT_INT, &f.c.pad_id, 0, "padding token id"},
        {"--bos-id", OPT_INT, &f.c.bos_id, 0, "begin-of-sequence token id"},
        {"--eos-id", OPT_INT, &f.c.eos_id, 0, "end-of-sequence token id"},
        {"--seed", OPT_INT, &seed, 0, "random seed of the initialisation"},
        {"--save", OPT_STR, &save, 1, "output checkpoint (.safetensors)"},
    };
    const int src_vocab_default = f.c.src_vocab;
    int r = cli_parse(&cmd_init, argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (r) return r == 1 ? 0 : EXIT_USAGE;
    if (seed < 0) {
        cli_error("init", "--seed must be non-negative, got %d", seed);
        return EXIT_USAGE;
    }
    tfm_arch arch;
    if (tfm_arch_from_name(f.arch, &arch) == TFM_OK && arch == TFM_ARCH_DECODER_ONLY &&
        f.c.src_vocab == src_vocab_default)
        f.c.src_vocab = f.c.tgt_vocab; /* decoder-only: one vocabulary, --tgt-vocab's */
    if (!model_flags_resolve("init", &f)) return EXIT_USAGE;
    tfm_model *m = NULL;
    if (tfm_model_create(&f.c, (uint64_t)seed, &m) != TFM_OK || tfm_model_save(m, save) != TFM_OK) {
        cli_error("init", "%s", tfm_last_error());
        tfm_model_free(m);
        return EXIT_RUNTIME;
    }
    fprintf(stderr, "tfm init: wrote %s (%zu parameters)\n", save, tfm_config_param_count(&f.c));
    tfm_model_free(m);
    return 0;
}
