/* Checkpoints beside the model's own tensors (docs/FORMATS.md): the configuration as metadata, and
 * named extra tensors under a reserved prefix (a trainer's train_state.*) written into and read
 * from the same file. The file format itself (safetensors.h) stays inside src/model/. */
#ifndef TFM_CHECKPOINT_H
#define TFM_CHECKPOINT_H

#include "tfm/model.h"

#include <stddef.h>

/** The checkpoint metadata of a configuration (docs/FORMATS.md keys, docs/POSITION.md options):
 * kv[2i] is a key, kv[2i+1] its value (pointing into vals or to static names); returns the pair
 * count. The one list of what a configuration is: checkpoints write it, MPI ranks compare it. */
#define MODEL_META_MAX 40

/** The tensor a checkpoint stores the serialized tokenizer in (U8, 1-D). */
#define CKPT_TOKENIZER_TENSOR "tokenizer.model"
typedef struct {
    char vals[MODEL_META_MAX][32];
    const char *kv[2 * MODEL_META_MAX];
} model_meta;
size_t model_metadata(const tfm_config *c, model_meta *out);

/** One extra tensor of a checkpoint: 1-D, `count` elements of `dtype` ("F32", "F64", "I64", "U8":
 * 4, 8, 8, 1 bytes), at `data` (the caller's buffer: written from, or read into). `name` carries
 * a reserved prefix (train_state.) so that a model load skips it. */
typedef struct {
    const char *name;
    const char *dtype;
    size_t count;
    void *data;
} ckpt_tensor;

/** tfm_model_save plus extra tensors, written in the same atomic file.
 * Errors: those of tfm_model_save; TFM_ERR_INVALID_ARG for an unknown dtype. */
tfm_status model_save_extra(const tfm_model *m, const char *path, const ckpt_tensor *extra, size_t n_extra);

/** Reads each extra tensor of the checkpoint at `path` into its buffer, in order, after checking
 * it is there, 1-D, of the dtype and element count asked. Errors: those of opening the file
 * (TFM_ERR_IO, TFM_ERR_FORMAT); TFM_ERR_FORMAT "PATH: no tensor 'NAME': MISSING" for the first
 * tensor absent (`missing` says what the file then is not, e.g. "not a resumable checkpoint"), or
 * naming the first whose dtype or shape differs; TFM_ERR_INVALID_ARG for an unknown dtype. The
 * buffers before the failing tensor are filled, the others untouched. */
tfm_status model_read_extra(const char *path, const ckpt_tensor *extra, size_t n_extra, const char *missing);

#endif
