/* libFuzzer target: SentencePiece through the shim (src/text/spm_shim.cc) with the small committed
 * model fuzz/tok400.model (400 pieces, byte fallback, trained on tests/fixtures/tok_train.txt).
 * The input is encoded as text (invalid UTF-8 and NUL bytes must be refused with an error), the
 * ids decoded again (which must give valid UTF-8), and the same bytes read as little-endian int32
 * ids are decoded too (ids outside [0, V) must be refused). Seeds: fuzz/corpus/tokenizer/. */
#include "fuzz_util.h"

#include "fuzz_tokenizer.h"

#include <stdlib.h>

/* Decoded text must be valid UTF-8 (the tokenizer's contract); a minimal checker of our own so the
 * target does not test the library with itself. */
static int valid_utf8(const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        const unsigned c = s[i];
        size_t k;
        unsigned long cp, min;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            k = 1, cp = c & 0x1Fu, min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            k = 2, cp = c & 0x0Fu, min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            k = 3, cp = c & 0x07u, min = 0x10000;
        } else {
            return 0;
        }
        if (n - i <= k) return 0;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (s[i + j] & 0x3Fu);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
        i += k + 1;
    }
    return 1;
}

static void decode_checked(const tfm_tokenizer *tok, const int32_t *ids, size_t n, int must_work) {
    char *text = NULL;
    size_t len = 0;
    tfm_status st = tfm_tokenizer_decode(tok, ids, n, &text, &len);
    if (st == TFM_OK) {
        if (!text || text[len] != '\0' || !valid_utf8((const unsigned char *)text, len)) __builtin_trap();
    } else if (must_work || text) {
        __builtin_trap();
    }
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const tfm_tokenizer *tok = fuzz_tokenizer();
    const int V = tfm_tokenizer_vocab_size(tok);
    int32_t *ids = NULL;
    size_t n = 0;
    if (tfm_tokenizer_encode(tok, (const char *)data, size, &ids, &n) == TFM_OK) {
        for (size_t i = 0; i < n; i++)
            if (ids[i] < 0 || ids[i] >= V) __builtin_trap();
        decode_checked(tok, ids, n, 1);
    } else if (ids || n) {
        __builtin_trap();
    }
    free(ids);
    /* the bytes as ids: most land outside [0, V), so fold half of them into it */
    const size_t m = size / 4;
    int32_t *raw = malloc((m ? m : 1) * sizeof *raw);
    if (!raw) return 0;
    int in_range = 1;
    for (size_t i = 0; i < m; i++) {
        uint32_t u = (uint32_t)data[4 * i] | (uint32_t)data[4 * i + 1] << 8 | (uint32_t)data[4 * i + 2] << 16 |
                     (uint32_t)data[4 * i + 3] << 24;
        raw[i] = (u & 0x80000000u) ? (int32_t)(u & 0x7FFFFFFFu) : (int32_t)(u % (uint32_t)V);
        if (raw[i] >= V) in_range = 0;
    }
    decode_checked(tok, raw, m, in_range);
    free(raw);
    return 0;
}
