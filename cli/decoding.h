/* Decoding flags and the translate-and-report step shared by tfm translate and tfm eval. */
#ifndef TFM_CLI_DECODING_H
#define TFM_CLI_DECODING_H

#include "args.h"
#include "memory_check.h"
#include "tfm/tfm.h"

typedef struct {
    int beam, batch, max_len_b;
    float lenpen, max_len_a;
    int no_cache;
    const char *max_memory; /* --max-memory (cli/memory_check.h), NULL: MemAvailable */
    const char *beam_stop;  /* --beam-stop (tfm_beam_stop's names), NULL: finished */
    const char *tgt_lang;   /* --tgt-lang: a multilingual Marian model's >>xx<< prefix, NLLB's target
                               code; NULL: none */
    const char *src_lang;   /* --src-lang (LANG_OPTS): NLLB's source code; NULL: not given */
    int nllb_legacy;        /* --nllb-legacy */
} decode_flags;

#define DECODE_FLAGS_DEFAULT {1, 64, 10, 1.0f, 1.5f, 0, NULL, NULL, NULL, NULL, 0}

/* The source-language flags of a multilingual model (NLLB, docs/NLLB.md): tfm translate and tfm eval. */
#define LANG_OPTS(f)                                                                               \
    {"--src-lang", OPT_STR, &(f).src_lang, 0, "NLLB: the source language code (default eng_Latn)"}, \
        {"--nllb-legacy", OPT_FLAG, &(f).nllb_legacy, 0,                                          \
         "NLLB: the source as pieces </s> [src_lang] (transformers' legacy_behaviour)"}

/* The cli_opt entries of the decoding flags (expands to several initialisers). */
#define DECODE_OPTS(f)                                                                             \
    {"--beam", OPT_INT, &(f).beam, 0, "beam size (1: greedy)"},                                    \
        {"--lenpen", OPT_FLOAT, &(f).lenpen, 0, "length penalty alpha: score / length^alpha"},     \
        {"--beam-stop", OPT_STR, &(f).beam_stop, 0,                                                \
         "finished: a sentence stops once K hypotheses ended (fairseq, CTranslate2; default); "   \
         "bound: once no live beam can beat the best ended one (tensor2tensor; slower)"},          \
        {"--max-len-a", OPT_FLOAT, &(f).max_len_a, 0, "at most a * source tokens + b output tokens"}, \
        {"--max-len-b", OPT_INT, &(f).max_len_b, 0, "(see --max-len-a)"},                          \
        {"--batch-size", OPT_INT, &(f).batch, 0, "sentences decoded together (divided by the beam)"},    \
        {"--tgt-lang", OPT_STR, &(f).tgt_lang, 0,                                                  \
         "target language: a multilingual opus-mt model's >>LANG<< prefix (docs/MARIAN.md), NLLB's code such as " \
         "spa_Latn (docs/NLLB.md)"}, \
        {"--no-kv-cache", OPT_FLAG, &(f).no_cache, 0, "recompute the whole prefix every step (slow; for comparison)"}, \
        MEMORY_OPT((f).max_memory)

/* Checks the flags and fills a decode config; prints an error and returns 0 if they are bad. */
int make_config(const char *cmd, const decode_flags *f, tfm_decode_config *dc);

/* --tgt-lang: puts ">>LANG<< " in front of every non-blank line (in place), as a user of a
 * multilingual Marian model does; the piece >>LANG<< must be in the tokenizer's vocabulary.
 * Returns 0 on error (printed). lang NULL: nothing to do. */
int apply_tgt_lang(const char *cmd, const tfm_tokenizer *tok, const char *lang, char **lines, size_t n);

/* The language flags: a tokenizer with language codes (NLLB) gets --src-lang, --tgt-lang (required)
 * and --nllb-legacy (tfm_tokenizer_set_langs) and dc forces the target's code first; any other
 * takes --tgt-lang as Marian's prefix (apply_tgt_lang). Prints an error and returns 0 when the
 * flags do not fit the model. */
int apply_langs(const char *cmd, const decode_flags *f, tfm_tokenizer *tok, tfm_decode_config *dc, char **lines,
                size_t n);

/* Prints the tokenizer's language codes, "code id" a line, on stdout; an error (returning 0) when it
 * has none. */
int list_langs(const char *cmd, const char *path, const tfm_tokenizer *tok);

/* Translates lines into out[n] (read from `input`, named in messages; NULL: stdin); prints speed
 * and any truncation on stderr. Returns 0 on error (printed). */
int translate_lines(const char *cmd, const char *input, const tfm_model *m, tfm_tokenizer *tok,
                    const tfm_decode_config *dc, int batch, char **lines, size_t n, char **out);

#endif
