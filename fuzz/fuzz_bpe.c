/* libFuzzer target: byte-level BPE (include/tfm/bpe.h), what `tfm tokenize --bpe` reads from a
 * Hugging Face folder. The input is cut at its first two NUL bytes into a file A, a file B and
 * text: A is given to tfm_bpe_load (as tokenizer.json) and A, B to tfm_bpe_load_files (as
 * vocab.json, merges.txt). The text is encoded with every tokenizer accepted and always with the
 * fixture tests/fixtures/bpe/gpt2.json (loaded once), so the pre-tokeniser patterns and the merge
 * heap are fuzzed even when the files are broken.
 * Checks beyond "no crash": a refused file leaves no tokenizer; every id of the vocabulary with a
 * token maps back to it; encoded ids have tokens; with the post-processor, BOS comes first and
 * the rest equals the plain encoding; decode gives well-formed UTF-8; under the fixture (every
 * byte a token, no normaliser) decode(encode(text)) is the text; invalid UTF-8 is refused with no
 * ids. Seeds: fuzz/corpus/bpe/ (small tokenizer.json files of each setup, with merges and text). */
#include "fuzz_util.h"

#include "tfm/bpe.h"
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

/* Encodes into *ids (malloc'd, NULL when empty) and checks; returns 0 when refused. */
static int encode(const tfm_bpe *b, const char *text, size_t len, int add_special, int32_t **ids, size_t *n) {
    *ids = NULL;
    *n = 0;
    if (tfm_bpe_encode(b, text, len, add_special, ids, n) != TFM_OK) {
        if (*ids || *n) __builtin_trap(); /* "on error *ids is NULL and *n_ids 0" */
        if (utf8_first_invalid(text, len) == len) __builtin_trap(); /* valid text (no NUL) is never refused */
        return 0;
    }
    if (*n > 0 && !*ids) __builtin_trap();
    for (size_t i = 0; i < *n; i++)
        if (!tfm_bpe_id_to_token(b, (*ids)[i])) __builtin_trap();
    return 1;
}

static void checks(const tfm_bpe *b, const char *text, size_t len, int round_trip) {
    size_t n, nf;
    int32_t *ids, *full;
    const int ok = encode(b, text, len, 0, &ids, &n);
    if (ok != encode(b, text, len, 1, &full, &nf)) __builtin_trap(); /* valid or not either way */
    if (ok) {
        const size_t bos = tfm_bpe_bos_id(b) >= 0, eos = tfm_bpe_eos_id(b) >= 0;
        if (nf != n + bos + eos || (bos && full[0] != tfm_bpe_bos_id(b))) __builtin_trap();
        if (n && memcmp(full + bos, ids, n * sizeof *ids) != 0) __builtin_trap();
        char *back = NULL;
        size_t bl = 0;
        if (tfm_bpe_decode(b, ids, n, 0, &back, &bl) != TFM_OK) __builtin_trap();
        if (utf8_first_invalid(back, bl) < bl && memchr(back, 0, bl) == NULL) __builtin_trap();
        if (round_trip && (bl != len || memcmp(back, text, len) != 0)) __builtin_trap();
        free(back);
    }
    free(ids);
    free(full);
}

static void vocab_checks(const tfm_bpe *b) {
    const size_t V = tfm_bpe_vocab_size(b);
    for (size_t id = 0; id < V; id++) {
        const char *t = tfm_bpe_id_to_token(b, (int32_t)id);
        if (t && tfm_bpe_token_to_id(b, t) != (int32_t)id) __builtin_trap();
    }
    if (tfm_bpe_id_to_token(b, (int32_t)V) || tfm_bpe_id_to_token(b, -1)) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static tfm_bpe *gpt2; /* the fixture, loaded on the first input */
    static int tried;
    if (!tried) {
        tried = 1;
        if (tfm_bpe_load(TFM_FUZZ_BPE_JSON, &gpt2) != TFM_OK) {
            fprintf(stderr, "fuzz_bpe: cannot load %s\n", TFM_FUZZ_BPE_JSON);
            __builtin_trap(); /* a missing fixture must not turn the target into a silent pass */
        }
    }
    size_t a_len, b_at, b_len, t_at;
    fuzz_split(data, size, &a_len, &b_at);
    fuzz_split(data + b_at, size - b_at, &b_len, &t_at);
    t_at += b_at;
    const char *text = (const char *)data + t_at;
    const size_t text_len = size - t_at;
    checks(gpt2, text, text_len, 1);

    fuzz_file fa, fb;
    if (!fuzz_file_open(&fa, data, a_len)) return 0;
    tfm_bpe *b = NULL;
    if (tfm_bpe_load(fa.path, &b) == TFM_OK) {
        vocab_checks(b);
        checks(b, text, text_len, 0);
        tfm_bpe_free(b);
    } else if (b) {
        __builtin_trap(); /* "on error *out is NULL" */
    }
    b = NULL;
    if (fuzz_file_open(&fb, data + b_at, b_len)) {
        if (tfm_bpe_load_files(fa.path, fb.path, &b) == TFM_OK) {
            vocab_checks(b);
            checks(b, text, text_len, 0);
            tfm_bpe_free(b);
        } else if (b) {
            __builtin_trap();
        }
        fuzz_file_close(&fb);
    }
    fuzz_file_close(&fa);
    return 0;
}
