/* libFuzzer target: a SentencePiece model as a checkpoint carries it (the `tokenizer.model` tensor,
 * any bytes a file holds), loaded through the shim (tfm_tokenizer_load_bytes, src/text/spm_shim.cc)
 * and, when accepted, used: special ids, encoding a fixed sentence, decoding every piece id and
 * serializing again. A malformed model must give an error, never a crash. Debian's libsentencepiece
 * is not instrumented, so libFuzzer steers by our shim only and mostly mutates blindly. Seeds:
 * fuzz/corpus/tokenizer_model/ (fuzz/tok400.model and a smaller model). */
#include "fuzz_util.h"

#include "tfm/tokenizer.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tfm_tokenizer *tok = NULL;
    if (tfm_tokenizer_load_bytes(data, size, &tok) != TFM_OK) {
        if (tok) __builtin_trap(); /* "on error *out is NULL" */
        return 0;
    }
    const int V = tfm_tokenizer_vocab_size(tok);
    if (V <= 0) __builtin_trap();
    (void)tfm_tokenizer_pad_id(tok), (void)tfm_tokenizer_bos_id(tok), (void)tfm_tokenizer_eos_id(tok);
    (void)tfm_tokenizer_unk_id(tok);
    static const char text[] = "In the beginning \xc2\xbfqu\xc3\xa9? \xe6\x97\xa5";
    int32_t *ids = NULL;
    size_t n = 0;
    if (tfm_tokenizer_encode(tok, text, sizeof text - 1, &ids, &n) == TFM_OK)
        for (size_t i = 0; i < n; i++)
            if (ids[i] < 0 || ids[i] >= V) __builtin_trap();
    free(ids);
    const int32_t m = V < 512 ? V : 512;
    int32_t *all = malloc((size_t)m * sizeof *all);
    if (all) {
        for (int32_t i = 0; i < m; i++) {
            all[i] = i;
            (void)tfm_tokenizer_id_to_piece(tok, i);
        }
        char *out = NULL;
        size_t len = 0;
        (void)tfm_tokenizer_decode(tok, all, (size_t)m, &out, &len);
        free(out);
        free(all);
    }
    uint8_t *bytes = NULL;
    size_t blen = 0;
    if (tfm_tokenizer_serialize(tok, &bytes, &blen) == TFM_OK) free(bytes);
    tfm_tokenizer_free(tok);
    return 0;
}
