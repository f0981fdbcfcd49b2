/* tfm init: a fresh model from flags (docs/FORMATS.md), saved as a safetensors checkpoint. */
#include "model_flags.h"

#include <stdio.h>
#include <stdlib.h>

static int run(int argc, char **argv);

const cli_command cmd_init = {"init", "create a freshly initialised model and save it",
                              "tfm init [--d-model N --n-heads N ...] --save M\n"
                              "       (not given: --arch encoder-decoder has 3 encoder layers, post-LN, untied "
                              "embeddings;\n        decoder-only has none, pre-LN, tied: docs/LM.md)",
                              run};

static int run(int argc, char **argv) {
    model_flags f = model_flags_default();
    const char *save = NULL, *tok_path = NULL;
    int seed = 1;
    cli_opt opts[] = {
        MODEL_OPTS(f),
        {"--src-vocab", OPT_INT, &f.c.src_vocab, 0, "source vocabulary size"},
        {"--tgt-vocab", OPT_INT, &f.c.tgt_vocab, 0, "target vocabulary size"},
        {"--pad-id", OPT_INT, &f.c.pad_id, 0, "padding token id"},
        {"--bos-id", OPT_INT, &f.c.bos_id, 0, "begin-of-sequence token id"},
        {"--eos-id", OPT_INT, &f.c.eos_id, 0, "end-of-sequence token id"},
        {"--seed", OPT_INT, &seed, 0, "random seed of the initialisation"},
        {"--tokenizer", OPT_STR, &tok_path, 0, "store this tokenizer (tfm tokenize --train) in the model; the "
                                               "vocabularies and pad/BOS/EOS ids are its own"},
        {"--save", OPT_STR, &save, 1, "output checkpoint (.safetensors)"},
    };
    const int src_vocab_default = f.c.src_vocab;
    int r = cli_parse(&cmd_init, argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (r) return r == 1 ? 0 : EXIT_USAGE;
    tfm_tokenizer *tok = NULL;
    const size_t n_opts = sizeof opts / sizeof opts[0];
    if (tok_path) { /* the five ids come from the tokenizer: giving one as well is an error */
        const char *given = cli_given_within(argc, argv, opts, n_opts, &f.c.src_vocab, &f.c.src_vocab + 1);
        if (!given) given = cli_given_within(argc, argv, opts, n_opts, &f.c.tgt_vocab, &f.c.tgt_vocab + 1);
        if (!given) given = cli_given_within(argc, argv, opts, n_opts, &f.c.pad_id, &f.c.pad_id + 1);
        if (!given) given = cli_given_within(argc, argv, opts, n_opts, &f.c.bos_id, &f.c.bos_id + 1);
        if (!given) given = cli_given_within(argc, argv, opts, n_opts, &f.c.eos_id, &f.c.eos_id + 1);
        if (given) {
            cli_error("init", "%s and --tokenizer exclude each other: the tokenizer sets the vocabularies and ids", given);
            return EXIT_USAGE;
        }
        if (tfm_tokenizer_load_file(tok_path, &tok) != TFM_OK) {
            cli_error("init", "--tokenizer: %s", tfm_last_error());
            return EXIT_RUNTIME;
        }
        f.c.src_vocab = f.c.tgt_vocab = tfm_tokenizer_vocab_size(tok);
        f.c.pad_id = tfm_tokenizer_pad_id(tok);
        f.c.bos_id = tfm_tokenizer_bos_id(tok);
        f.c.eos_id = tfm_tokenizer_eos_id(tok);
    }
    if (seed < 0) {
        cli_error("init", "--seed must be non-negative, got %d", seed);
        return EXIT_USAGE;
    }
    tfm_arch arch;
    if (tfm_arch_from_name(f.arch, &arch) == TFM_OK && arch == TFM_ARCH_DECODER_ONLY &&
        f.c.src_vocab == src_vocab_default)
        f.c.src_vocab = f.c.tgt_vocab; /* decoder-only: one vocabulary, --tgt-vocab's */
    if (!model_flags_resolve("init", &f)) {
        tfm_tokenizer_free(tok);
        return EXIT_USAGE;
    }
    tfm_model *m = NULL;
    uint8_t *bytes = NULL;
    size_t len = 0;
    tfm_status st = tfm_model_create(&f.c, (uint64_t)seed, &m);
    if (st == TFM_OK && tok && (st = tfm_tokenizer_serialize(tok, &bytes, &len)) == TFM_OK)
        st = tfm_model_set_tokenizer(m, bytes, len);
    free(bytes);
    tfm_tokenizer_free(tok);
    if (st != TFM_OK || tfm_model_save(m, save) != TFM_OK) {
        cli_error("init", "%s", tfm_last_error());
        tfm_model_free(m);
        return EXIT_RUNTIME;
    }
    fprintf(stderr, "tfm init: wrote %s (%zu parameters)\n", save, tfm_config_param_count(&f.c));
    tfm_model_free(m);
    return 0;
}
