/* Hugging Face model folders (docs/BERT.md, docs/MODELS.md): recognising one, its JSON files and
 * config.json's keys, its paths. The loaders are the Hugging Face formats of model_format.h
 * (fmt_hf_*.c), run by tfm_model_load / tfm_model_load_hf (model_load.c). */
#ifndef TFM_HF_H
#define TFM_HF_H

#include "core_internal.h"

#include <stddef.h>

/** 1 if `path` is a Hugging Face model rather than a transformer.c checkpoint: a folder, or a
 * safetensors file with a config.json beside it and no `arch` in its metadata. Never fails (an
 * unreadable path is "not HF": tfm_model_load then reports it). */
int hf_is_model(const char *path);

/** The folder of a HF model given as its folder or as a file inside it, into dir (size n).
 * Errors: TFM_ERR_IO naming the path when it does not exist (a mistyped folder is not taken for a
 * file in its parent); TFM_ERR_INVALID_ARG (the path does not fit). */
tfm_status hf_model_dir(const char *path, char *dir, size_t n);

/** 1 if `path` exists and is a directory. */
int hf_is_dir(const char *path);

/** The whole file `dir/name` (at most 1 GiB) into *data (malloc'd, *len bytes). Errors: TFM_ERR_IO
 * naming it, with `hint` (what the folder holds) when it cannot be opened; TFM_ERR_NOMEM. */
tfm_status hf_read_file(const char *dir, const char *name, const char *hint, unsigned char **data, size_t *len);

/** Stores the files names[0..n) of the folder `dir` in the model `m` as one blob under `magic`
 * (core/parts.h; tfm_model_set_tokenizer): the tokenizer a format's attach_tokenizer attaches. The
 * first n_required must exist; the others are left out when absent. Errors: those of
 * hf_read_file (a required file missing: TFM_ERR_IO naming it, with `hint`), TFM_ERR_NOMEM. */
struct tfm_model;
tfm_status hf_attach_files(struct tfm_model *m, const char *dir, const char *magic, const char *const *names, size_t n,
                           size_t n_required, const char *hint);

/** Parses the JSON file `path` (at most 64 MiB; any JSON value) into *out (cJSON_Delete it).
 * Errors: TFM_ERR_IO (cannot open/read, naming the path), TFM_ERR_FORMAT ("path:line:col: not
 * valid JSON"), TFM_ERR_NOMEM. */
struct cJSON;
tfm_status hf_json_load(const char *path, struct cJSON **out);

/** config.json key `key` of `root` (file `path`, for messages) as an integer in [0, 16777216]
 * into *out; absent or null: an error if required, else *out unchanged. Errors: TFM_ERR_FORMAT
 * naming the file and key. */
tfm_status hf_cfg_int(const char *path, const struct cJSON *root, const char *key, int required, int *out);

/** Two required config.json integers that must agree (the encoder's and the decoder's heads or FFN
 * width: tfm's two stacks share them) into *out. Errors: hf_cfg_int's; TFM_ERR_UNSUPPORTED when
 * they differ, naming the file and both keys. */
tfm_status hf_cfg_same_int(const char *path, const struct cJSON *root, const char *a, const char *b, int *out);

/** config.json key `key` as a string, or NULL if absent or not a string. */
const char *hf_cfg_str(const struct cJSON *root, const char *key);

/** config.json boolean `key` into *out; absent or null: dflt. Errors: TFM_ERR_FORMAT (not a bool). */
tfm_status hf_cfg_bool(const char *path, const struct cJSON *root, const char *key, int dflt, int *out);

/** config.json number `key` into *out; absent or null: dflt. Errors: TFM_ERR_FORMAT (not a number). */
tfm_status hf_cfg_float(const char *path, const struct cJSON *root, const char *key, float dflt, float *out);

/** Whether transformers 4.40.2's generate forces EOS as the last token at the length limit for the
 * model folder `dir` (ForcedEOSTokenLogitsProcessor): 1 when its forced_eos_token_id is set (an
 * int, or a list of one int: transformers allows a list; one of several ids is refused).
 * generate reads model.generation_config: generation_config.json's when the folder has one of its
 * own, but config.json's when that file only copies the model config ("_from_model_config":
 * true: generate rebuilds it from config.json, which then decides) or is absent. `cfg` is
 * config.json (`cfg_path`, for messages). A forced id other than eos_id is refused (tfm forces
 * EOS only). Errors: TFM_ERR_FORMAT naming the file and key; TFM_ERR_UNSUPPORTED (another id, or
 * a list of several, naming the file and key);
 * hf_json_load's. */
tfm_status hf_forced_eos(const char *dir, const char *cfg_path, const struct cJSON *cfg, int eos_id, int *forced);

/** What sentence-transformers' files in a model folder say (modules.json, 1_Pooling/config.json,
 * sentence_bert_config.json); the defaults where a file is absent. */
typedef enum { HF_POOL_MEAN = 0, HF_POOL_CLS = 1, HF_POOL_MAX = 2 } hf_pooling;
typedef struct {
    hf_pooling pooling;  /* pooling_mode_*_tokens: mean (default), cls or max */
    int normalize;       /* 1 if modules.json lists sentence_transformers.models.Normalize, or has no
                            modules.json (the L2-normalised vector of docs/BERT.md) */
    int max_seq_length;  /* sentence_bert_config.json's max_seq_length, 0 if absent */
} hf_st_settings;

/** Reads the sentence-transformers settings of the model folder `dir`. Errors: TFM_ERR_FORMAT /
 * TFM_ERR_IO naming the file and key, TFM_ERR_UNSUPPORTED for a pooling mode we do not run
 * (mean_sqrt_len, several modes at once, weightedmean, lasttoken). */
tfm_status hf_st_settings_load(const char *dir, hf_st_settings *out);

#endif
