/* libFuzzer target: the BLEU/chrF file reader (tfm_bleu_chrf_files, src/infer/bleu_files.c):
 * validation of a hypothesis and a reference file, then sacreBLEU's 13a tokenizer, n-gram counts
 * and chrF on whatever passes. The input is the hypothesis file, a NUL byte, the reference file
 * (fuzz_util.h). Seeds: fuzz/corpus/bleu/ (the pairs of tests/fixtures/bleu/ joined so). */
#include "fuzz_util.h"

#include "tfm/bleu.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t n1, at2;
    fuzz_split(data, size, &n1, &at2);
    fuzz_file hyp, ref;
    if (!fuzz_file_open(&hyp, data, n1)) return 0;
    if (!fuzz_file_open(&ref, data + at2, size - at2)) {
        fuzz_file_close(&hyp);
        return 0;
    }
    tfm_bleu_stats bleu = {0};
    tfm_chrf_stats chrf = {0};
    size_t n = 0;
    if (tfm_bleu_chrf_files(hyp.path, ref.path, &bleu, &chrf, &n) == TFM_OK) {
        const double b = tfm_bleu_compute(&bleu).score, c = tfm_chrf_compute(&chrf);
        if (!(b >= 0 && b <= 100.0000001) || !(c >= 0 && c <= 100.0000001)) __builtin_trap();
    }
    fuzz_file_close(&hyp);
    fuzz_file_close(&ref);
    return 0;
}
