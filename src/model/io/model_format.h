/* Model formats (docs/MODELS.md, "Model formats"): every kind of file or folder tfm_model_load
 * reads is one model_format, a small table of operations in one file of src/model/io/:
 *
 *   fmt_tfm.c       tfm's own safetensors checkpoint (nn.Transformer names, docs/FORMATS.md)
 *   fmt_hf_bert.c   a Hugging Face BERT folder (model_type "bert", docs/BERT.md)
 *   fmt_hf_lm.c     Hugging Face GPT-2 and Llama-family folders ("gpt2", "llama", "qwen2", "mistral", docs/LLM.md)
 *   fmt_hf_marian.c a Hugging Face Marian / opus-mt folder (model_type "marian", docs/MARIAN.md)
 *   fmt_hf_m2m100.c a Hugging Face M2M100 / NLLB-200 folder (model_type "m2m_100", docs/NLLB.md)
 *   hf_bart.c       the encoder/decoder layers those two BART-family formats share
 *
 * model_load.c is the one driver: it finds the format of a path (model_format_find), opens its
 * safetensors file, and runs the operations in order —
 *   read_config       the format's configuration → tfm_config (the family's traits as data:
 *                     embed_scale, pe_layout/pe_offset, norm_first, no_final_norm, embed_norm,
 *                     activation, decoder_start_id, suppress; include/tfm/model.h)
 *   (model_alloc)     the parameter table of that configuration (params.c)
 *   read_tensors      every tensor found by the format's name, checked (dtype, shape), copied or
 *                     packed (q/k/v → in_proj) into the table; unknown tensors are errors
 *   attach_tokenizer  optional: the format's tokenizer files stored in the model as the bytes
 *                     tfm_model_tokenizer returns (the `tokenizer.model` tensor once saved)
 * A new family is one new file with one new table, added to k_formats in model_load.c. */
#ifndef TFM_MODEL_FORMAT_H
#define TFM_MODEL_FORMAT_H

#include "safetensors.h"
#include "tfm/model.h"

#include <stdint.h>

struct cJSON;

/** What the driver hands each operation. */
typedef struct {
    const char *path;          /* as the caller gave it: a file, or a Hugging Face folder */
    char dir[4096];            /* the model's folder (a Hugging Face model), or "" */
    char weights[4200];        /* the safetensors file the driver opened as `st` */
    st_file st;                /* the weights, open for every operation */
    const struct cJSON *config; /* a Hugging Face folder's config.json, parsed; NULL otherwise */
    char config_path[4200];    /* its path, for messages */
} fmt_source;

typedef struct model_format {
    /** For messages: "tfm checkpoint", "Hugging Face BERT", ... */
    const char *name;
    /** The config.json "model_type" this format reads ("bert"); NULL: not a Hugging Face format. */
    const char *hf_model_type;
    /** The transformers class whose from_pretrained/save_pretrained converts the folder's
     * pytorch_model.bin to model.safetensors ("AutoModel", "AutoModelForSeq2SeqLM"), for the
     * message that refuses a pickle. */
    const char *hf_auto_class;
    /** Optional: 1 if this format reads `path`, where model_type is config.json's "model_type" of
     * a Hugging Face folder (or of the folder of a .safetensors file with no tfm metadata) and
     * NULL for anything else. Never fails. NULL: a Hugging Face format recognises its
     * hf_model_type, tfm's checkpoint everything that is not a Hugging Face model. */
    int (*recognise)(const char *path, const char *model_type);
    /** The configuration, validated (tfm_config_validate). Errors: TFM_ERR_FORMAT /
     * TFM_ERR_UNSUPPORTED naming the file and key. May check the tensors' names and shapes
     * before the driver allocates the model. */
    tfm_status (*read_config)(const fmt_source *src, tfm_config *cfg);
    /** Fills every tensor of the model `m` (allocated from read_config's configuration) from
     * src->st. Errors: TFM_ERR_FORMAT naming the file and the tensor (missing, misshaped, wrong
     * dtype, unexpected). */
    tfm_status (*read_tensors)(const fmt_source *src, tfm_model *m);
    /** Optional (NULL: the format has no tokenizer, or read_tensors stored it): stores the
     * tokenizer in `m` (tfm_model_set_tokenizer). Errors: naming the tokenizer file. */
    tfm_status (*attach_tokenizer)(const fmt_source *src, tfm_model *m);
} model_format;

/** The one tensor reader of the Hugging Face formats (hf_tensor.c): the tensor `name` of the
 * safetensors file f, of dtype F32, BF16 or F16 (the 16-bit ones widened to float exactly, as
 * transformers' from_pretrained(torch_dtype=torch.float32) does) and shape (rows) (cols 0) or
 * (rows, cols) — (cols, rows) as stored when `transposed` (GPT-2's Conv1D) — into dst as
 * (rows, cols) floats. tmp: scratch of rows·cols floats, needed only when transposed. used: when
 * not NULL, used[i] is set for the file's tensor i once read. Errors: TFM_ERR_FORMAT "PATH: tensor
 * 'NAME' is missing (WHAT needs it)" or naming its shape and the expected one; TFM_ERR_UNSUPPORTED
 * naming another dtype; TFM_ERR_NOMEM. */
tfm_status hf_read_tensor(const st_file *f, const char *name, size_t rows, size_t cols, int transposed, float *dst,
                          float *tmp, uint8_t *used, const char *what);

/** hf_read_tensor of an untransposed tensor, without `used`. */
tfm_status hf_read_f32(const st_file *f, const char *name, size_t rows, size_t cols, float *dst, const char *what);

extern const model_format model_format_tfm;     /* fmt_tfm.c */
extern const model_format model_format_hf_bert; /* fmt_hf_bert.c */
extern const model_format model_format_hf_gpt2;  /* fmt_hf_lm.c */
extern const model_format model_format_hf_llama; /* fmt_hf_lm.c */
extern const model_format model_format_hf_qwen2; /* fmt_hf_lm.c */
extern const model_format model_format_hf_mistral; /* fmt_hf_lm.c */
extern const model_format model_format_hf_marian; /* fmt_hf_marian.c */
extern const model_format model_format_hf_m2m100; /* fmt_hf_m2m100.c */

/** The model at `path` through its format (tfm_model_load; hf_only: tfm_model_load_hf). Errors:
 * those of the format's operations; TFM_ERR_IO for a Hugging Face folder without config.json or
 * model.safetensors; TFM_ERR_UNSUPPORTED for a model_type no format reads (the message lists
 * those tfm reads) and for a folder with only pytorch_model.bin (the message gives the one-line
 * transformers command that converts it). */
tfm_status model_format_load(const char *path, int hf_only, tfm_model **out);

#endif
