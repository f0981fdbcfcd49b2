/* --max-memory and the memory check before training or decoding (include/tfm/memory.h): a run
 * whose estimate exceeds the limit (--max-memory, else MemAvailable of /proc/meminfo) stops
 * before the work with the estimate and the flags to lower. */
#ifndef TFM_CLI_MEMORY_CHECK_H
#define TFM_CLI_MEMORY_CHECK_H

#include "tfm/tfm.h"

/* The cli_opt entry of the flag; dst is a const char *. */
#define MEMORY_OPT(dst)                                                                            \
    {"--max-memory", OPT_STR, &(dst), 0,                                                           \
     "refuse to start if the run needs more memory (e.g. 2G; default: MemAvailable)"}

/* Checks the flag's value (NULL: not given). Prints the error and returns 0 if it is malformed. */
int memory_flag_ok(const char *cmd, const char *max_memory);

/* Training: estimates the run (tfm_memory_estimate_train) and compares it with the limit. Prints
 * the refusal ("... lower --batch-tokens/--batch-size or the model size") and returns 0 if the run
 * would not fit; 1 otherwise (also when no limit is known). */
int memory_fits_train(const char *cmd, const char *max_memory, const tfm_config *c, tfm_optimizer opt,
                      const tfm_batcher *train, const tfm_batcher *valid, size_t data_bytes,
                      const char *batch_flag);

/* Decoding n lines with dc in batches of `batch` sentences: the same, for decoding (the flags to
 * lower: --batch-size, --beam, --max-len-a/--max-len-b). Each line is encoded with tok for its real
 * token count, and the batches are those tfm_translate_text decodes (tfm_memory_estimate_translate).
 * A line tok cannot encode is left to decoding, which reports it before decoding anything. */
int memory_fits_decode(const char *cmd, const char *max_memory, const tfm_model *m, const tfm_tokenizer *tok,
                       const tfm_decode_config *dc, int batch, char *const *lines, size_t n);

#endif
