/* libFuzzer target: BERT's WordPiece tokenizer (include/tfm/wordpiece.h), what `tfm embed` and
 * `tfm tokenize --wordpiece` read from a Hugging Face folder. The input is cut at its first NUL byte:
 * the first part is a tokenizer file (tokenizer.json when it starts with '{', else vocab.txt) given
 * to tfm_wordpiece_load, the second part is text. The text is encoded with the loaded tokenizer
 * (when the file was accepted) and always with a real BERT vocabulary
 * (tests/fixtures/wordpiece/vocab.txt, loaded once), so the normaliser, pre-tokeniser and
 * longest-match-first search are fuzzed even when the file part is broken.
 * Checks beyond "no crash": a refused file leaves no tokenizer; every id of the vocabulary maps to a
 * token that maps back to it (duplicates are refused); encoded ids lie in [0, V); an encoding holds at
 * most max_tokens ids; with add_special, [CLS] comes first and [SEP] last; invalid UTF-8 is refused
 * with no ids. Seeds: fuzz/corpus/wordpiece/ (a 1,200-token vocab.txt and tokenizer.json, each with
 * verses after the NUL; text alone). */
#include "fuzz_util.h"

#include "tfm/wordpiece.h"

#include <stdlib.h>
#include <string.h>

/* One encoding into *ids (malloc'd, NULL when empty) and *n. Returns 1, or 0 when refused (then
 * checking the error contract). */
static int encode(const tfm_wordpiece *wp, const char *text, size_t len, int add_special, size_t max_tokens,
                  int32_t **ids, size_t *n) {
    *ids = NULL;
    *n = 0;
    if (tfm_wordpiece_encode(wp, text, len, add_special, max_tokens, ids, n) != TFM_OK) {
        if (*ids || *n) __builtin_trap(); /* "on error *ids is NULL and *n_ids 0" */
        return 0;
    }
    if (*n > 0 && !*ids) __builtin_trap();
    const int32_t V = (int32_t)tfm_wordpiece_vocab_size(wp);
    for (size_t i = 0; i < *n; i++)
        if ((*ids)[i] < 0 || (*ids)[i] >= V) __builtin_trap();
    return 1;
}

/* Encodes text[0..len) without and with the special tokens, untruncated, then truncated to the
 * tokenizer's max_length and to 5 ids, and checks how they relate: with specials the plain
 * encoding is either unchanged (no post-processor) or wrapped in [CLS] ... [SEP]; a truncation
 * keeps the first ids and, when wrapped, still ends in [SEP]. */
static void encode_checks(const tfm_wordpiece *wp, const char *text, size_t len) {
    const tfm_wordpiece_settings *s = tfm_wordpiece_settings_of(wp);
    int32_t *plain, *full;
    size_t np, nf;
    const int ok_plain = encode(wp, text, len, 0, SIZE_MAX, &plain, &np);
    const int ok_full = encode(wp, text, len, 1, SIZE_MAX, &full, &nf);
    if (ok_plain != ok_full) __builtin_trap(); /* the same text is valid or not either way */
    if (ok_plain) {
        const int wrapped = nf == np + 2;
        if (!wrapped && nf != np) __builtin_trap();
        if (wrapped && (full[0] != s->cls_id || full[nf - 1] != s->sep_id)) __builtin_trap();
        if (np && memcmp(plain, full + (wrapped ? 1 : 0), np * sizeof *plain) != 0) __builtin_trap();
        const size_t limits[] = {s->max_length, 5};
        for (size_t w = 0; w < sizeof limits / sizeof limits[0]; w++) {
            const size_t k = limits[w];
            int32_t *cut;
            size_t nt;
            /* max_tokens 0 means the tokenizer's max_length; refused only below 2 with specials */
            if (!encode(wp, text, len, 1, w == 0 ? 0 : k, &cut, &nt)) {
                if (!(wrapped && k < 2)) __builtin_trap();
                continue;
            }
            if (nt != (nf < k ? nf : k)) __builtin_trap();
            const size_t head = wrapped && nf > k ? k - 1 : nt; /* ids equal to the untruncated ones */
            if (head && memcmp(cut, full, head * sizeof *cut) != 0) __builtin_trap();
            if (wrapped && nf > k && cut[nt - 1] != s->sep_id) __builtin_trap();
            free(cut);
        }
    }
    free(plain), free(full);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static tfm_wordpiece *bert; /* the fixture vocabulary, loaded on the first input */
    static int bert_tried;
    if (!bert_tried) {
        bert_tried = 1;
        if (tfm_wordpiece_load(TFM_FUZZ_WORDPIECE_VOCAB, &bert) != TFM_OK) {
            fprintf(stderr, "fuzz_wordpiece: cannot load %s\n", TFM_FUZZ_WORDPIECE_VOCAB);
            __builtin_trap(); /* a missing fixture must not turn the target into a silent pass */
        }
    }
    size_t first, second_at;
    fuzz_split(data, size, &first, &second_at);
    const char *text = (const char *)data + second_at;
    const size_t text_len = size - second_at;
    encode_checks(bert, text, text_len);

    fuzz_file f;
    if (!fuzz_file_open(&f, data, first)) return 0;
    tfm_wordpiece *wp = NULL;
    const tfm_status st = tfm_wordpiece_load(f.path, &wp);
    fuzz_file_close(&f);
    if (st != TFM_OK) {
        if (wp) __builtin_trap(); /* "on error *out is NULL" */
        return 0;
    }
    const size_t V = tfm_wordpiece_vocab_size(wp);
    if (V == 0 || tfm_wordpiece_token_to_id(wp, "[UNK]") < 0) __builtin_trap(); /* [UNK] is required */
    for (size_t id = 0; id < V; id++) {
        const char *tok = tfm_wordpiece_id_to_token(wp, (int32_t)id);
        if (!tok || tfm_wordpiece_token_to_id(wp, tok) != (int32_t)id) __builtin_trap();
    }
    if (tfm_wordpiece_id_to_token(wp, (int32_t)V) || tfm_wordpiece_id_to_token(wp, -1)) __builtin_trap();
    encode_checks(wp, text, text_len);
    tfm_wordpiece_free(wp);
    return 0;
}
