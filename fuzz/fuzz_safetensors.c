/* libFuzzer target: the safetensors reader (src/model/safetensors.c) and the checkpoint loader on
 * top of it (tfm_model_load: names, dtypes, shapes, metadata, the stored tokenizer). Any input must
 * give TFM_OK or an error, never a crash, a sanitizer report, a hang or an allocation the file's
 * size does not justify. Seeds: fuzz/corpus/safetensors/ (checkpoints made by `tfm init` and
 * `tfm train`, docs/FUZZING.md). */
#include "fuzz_util.h"

#include "safetensors.h"
#include "tfm/model.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_file f;
    if (!fuzz_file_open(&f, data, size)) return 0;
    st_file st;
    if (st_open(f.path, &st) == TFM_OK) {
        /* every byte range st_open accepted must be readable: it lies inside the file */
        for (size_t i = 0; i < st.n_tensors; i++) {
            const st_tensor *t = &st.tensors[i];
            void *buf = malloc(t->end - t->begin + 1);
            if (buf && st_read(&st, t, buf) != TFM_OK) __builtin_trap();
            free(buf);
            if (st_find(&st, t->name) == NULL) __builtin_trap();
        }
        for (size_t i = 0; i < st.n_meta; i++)
            if (st_meta_get(&st, st.meta[i].key) == NULL) __builtin_trap();
        st_close(&st);
    }
    tfm_model *m = NULL;
    if (tfm_model_load(f.path, &m) == TFM_OK) tfm_model_free(m);
    fuzz_file_close(&f);
    return 0;
}
