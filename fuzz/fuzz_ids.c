/* libFuzzer target: the token-id file reader (src/text/ids.c, docs/FORMATS.md) and the vocabulary
 * check after it. Any input gives TFM_OK or an error; on success the offsets must be monotone and
 * end at the id count. Seeds: fuzz/corpus/ids/. */
#include "fuzz_util.h"

#include "tfm/ids.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_file f;
    if (!fuzz_file_open(&f, data, size)) return 0;
    tfm_id_lines lines = {0};
    if (tfm_id_lines_read(f.path, &lines) == TFM_OK) {
        if (lines.n_lines == 0 || lines.offsets[0] != 0) __builtin_trap();
        for (size_t i = 0; i < lines.n_lines; i++) {
            if (lines.offsets[i + 1] < lines.offsets[i]) __builtin_trap();
            for (size_t k = lines.offsets[i]; k < lines.offsets[i + 1]; k++)
                if (lines.ids[k] < 0) __builtin_trap();
        }
        (void)tfm_id_lines_check_vocab(&lines, f.path, 1000);
    } else if (lines.ids || lines.offsets || lines.n_lines) {
        __builtin_trap(); /* "on error *out is left empty" */
    }
    tfm_id_lines_free(&lines);
    fuzz_file_close(&f);
    return 0;
}
