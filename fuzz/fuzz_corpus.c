/* libFuzzer target: the parallel-corpus reader (tfm_dataset_from_text and tfm_dataset_from_ids,
 * src/train/dataset.c) and a batcher over what it accepts. The input is the source file, a NUL
 * byte, the target file (fuzz_util.h); text is encoded with fuzz/tok400.model, max_len 32. Every
 * accepted pair must respect max_len and the BOS/EOS framing, and one epoch of token batches must
 * hold each pair once. Seeds: fuzz/corpus/corpus/. */
#include "fuzz_util.h"

#include "fuzz_tokenizer.h"
#include "tfm/data.h"

enum { MAX_LEN = 32 };

static void check_dataset(const tfm_dataset *ds, int text) {
    const size_t n = tfm_dataset_size(ds);
    if (n == 0) __builtin_trap();
    for (size_t i = 0; i < n; i++) {
        const int32_t *src, *tgt;
        size_t ns, nt;
        tfm_dataset_pair(ds, i, &src, &ns, &tgt, &nt);
        if (ns > MAX_LEN || nt > MAX_LEN + 1 || nt < 2) __builtin_trap();
        if (text && (tgt[0] != tfm_tokenizer_bos_id(fuzz_tokenizer()) ||
                     tgt[nt - 1] != tfm_tokenizer_eos_id(fuzz_tokenizer())))
            __builtin_trap();
    }
    tfm_batcher *b = NULL;
    if (tfm_batcher_create(ds, 64, 0, 1, 7, &b) != TFM_OK) return;
    size_t rows = 0;
    for (size_t k = tfm_batcher_batches_per_epoch(b); k > 0; k--) {
        tfm_batch batch;
        if (tfm_batcher_next(b, &batch) != TFM_OK) __builtin_trap();
        rows += (size_t)batch.B;
    }
    if (rows != n) __builtin_trap();
    tfm_batcher_free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const tfm_tokenizer *tok = fuzz_tokenizer();
    size_t n1, at2;
    fuzz_split(data, size, &n1, &at2);
    fuzz_file src, tgt;
    if (!fuzz_file_open(&src, data, n1)) return 0;
    if (!fuzz_file_open(&tgt, data + at2, size - at2)) {
        fuzz_file_close(&src);
        return 0;
    }
    tfm_dataset *ds = NULL;
    tfm_dataset_stats st;
    if (tfm_dataset_from_text(tok, src.path, tgt.path, MAX_LEN, tfm_tokenizer_bos_id(tok), tfm_tokenizer_eos_id(tok),
                              &ds, &st) == TFM_OK) {
        if (st.n_pairs != tfm_dataset_size(ds) || st.n_pairs + st.n_skipped_empty + st.n_skipped_long != st.n_lines)
            __builtin_trap();
        check_dataset(ds, 1);
    } else if (ds) {
        __builtin_trap();
    }
    tfm_dataset_free(ds);
    ds = NULL;
    if (tfm_dataset_from_ids(src.path, tgt.path, MAX_LEN, &ds, NULL) == TFM_OK) check_dataset(ds, 0);
    tfm_dataset_free(ds);
    fuzz_file_close(&src);
    fuzz_file_close(&tgt);
    return 0;
}
