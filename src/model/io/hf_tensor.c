/* Reading one tensor of a Hugging Face safetensors file, checked (model_format.h). */
#include "model_format.h"

#include <string.h>

tfm_status hf_read_f32(const st_file *f, const char *name, size_t rows, size_t cols, float *dst, const char *what) {
    const st_tensor *t = st_find(f, name);
    RETURN_IF(!t, TFM_ERR_FORMAT, "%s: tensor '%s' is missing (%s needs it)", f->path, name, what);
    RETURN_IF(strcmp(t->dtype, "F32") != 0, TFM_ERR_FORMAT, "%s: tensor '%s' has dtype %s, expected F32", f->path,
              t->name, t->dtype);
    const int ndim = cols ? 2 : 1;
    if (t->ndim != ndim || t->shape[0] != rows || (cols && t->shape[1] != cols)) {
        char got[96] = "";
        size_t k = 0;
        for (int i = 0; i < t->ndim && k < sizeof got - 24; i++)
            k += (size_t)snprintf(got + k, sizeof got - k, "%s%llu", i ? ", " : "", (unsigned long long)t->shape[i]);
        if (cols)
            return tfm_set_error(TFM_ERR_FORMAT, "%s: tensor '%s' has shape [%s], expected [%zu, %zu]", f->path, t->name,
                                 got, rows, cols);
        return tfm_set_error(TFM_ERR_FORMAT, "%s: tensor '%s' has shape [%s], expected [%zu]", f->path, t->name, got,
                             rows);
    }
    return st_read(f, t, dst);
}
