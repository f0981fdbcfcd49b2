/* transformer.c — training data: aligned sentence pairs in memory (a dataset) and batches over
 * them (a batcher).
 *
 * A dataset holds every usable pair of two aligned files as token ids: the source as encoded
 * (no BOS/EOS), the target as a whole row, BOS first and EOS last (docs/FORMATS.md). A batcher cuts
 * the dataset into padded batches for tfm_trainer_step() / tfm_model_score(), either of
 * similar-length pairs holding about `batch_tokens` tokens each (tfm_batcher_create) or of a fixed
 * number of lines (tfm_batcher_create_lines), in a seeded order that can be saved and restored
 * exactly (two integers), so an interrupted run resumes bit for bit. */
#ifndef TFM_DATA_H
#define TFM_DATA_H

#include "tfm/export.h"

#include "tfm/ids.h"
#include "tfm/status.h"
#include "tfm/tokenizer.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The longest line accepted in a text corpus file, in bytes (line end excluded): 1 MiB. A longer
 * line is an error naming the file and line, not a pair silently dropped. */
#define TFM_DATA_MAX_LINE_BYTES (1024 * 1024)

/** An immutable set of (source, target) id sequences. */
typedef struct tfm_dataset tfm_dataset;

/** What loading a dataset kept and skipped. */
typedef struct {
    size_t n_lines;          /* lines in each file */
    size_t n_pairs;          /* pairs kept (tfm_dataset_size) */
    size_t n_skipped_empty;  /* pairs skipped because a side is blank (tfm_text_is_blank) */
    size_t n_skipped_long;   /* pairs skipped because a side is longer than max_len (see below) */
    size_t src_tokens;       /* source ids kept, in total */
    size_t tgt_tokens;       /* target ids kept, in total, BOS and EOS included */
    int max_src_len;         /* longest kept source, in ids */
    int max_tgt_len;         /* longest kept target row, in ids, BOS and EOS included */
} tfm_dataset_stats;

/** Loads two aligned UTF-8 text files (line i of src_path translates line i of tgt_path; "\n" or
 * "\r\n" line ends; a last line without a newline counts) and encodes every line with `tok`.
 * Source sequences are the ids as encoded; target rows are bos_id, the ids, eos_id.
 *
 * Skipped, and counted in *stats: a pair with a blank side (tfm_text_is_blank: empty, or only
 * Unicode white space, default-ignorable format characters and controls); a pair whose source has more than max_len ids or whose target row (BOS and EOS
 * included) has more than max_len + 1 ids — the decoder then reads at most max_len positions.
 * Every line is still checked, so a skipped pair's invalid UTF-8 is an error too.
 *
 * max_len >= 1; bos_id, eos_id in [0, V) of `tok`. `stats` may be NULL. Errors, each naming the
 * file (and 1-based line): TFM_ERR_INVALID_ARG for bad arguments; TFM_ERR_IO for a file that cannot
 * be opened or read; TFM_ERR_FORMAT for files with different line counts (both files and counts
 * named), invalid UTF-8 or a NUL byte (file:line and the byte offset in the line), a line over
 * TFM_DATA_MAX_LINE_BYTES (file:line), an empty file, or no usable pair (the skip counts named);
 * TFM_ERR_NOMEM. On error *out is NULL. */
TFM_API tfm_status tfm_dataset_from_text(const tfm_tokenizer *tok, const char *src_path, const char *tgt_path, int max_len,
                                         int bos_id, int eos_id, tfm_dataset **out, tfm_dataset_stats *stats);

/** What tfm_dataset_from_lm_text read. */
typedef struct {
    size_t n_files;      /* files read */
    size_t n_lines;      /* lines in all of them */
    size_t n_sequences;  /* sequences kept (tfm_dataset_size) */
    size_t n_blank;      /* blank lines skipped (tfm_text_is_blank) */
    size_t n_cut;        /* lines longer than max_len − 1 subwords, cut to max_len (no EOS) */
    size_t tokens;       /* ids kept, BOS and EOS included */
    int max_row_len;     /* longest row, BOS and EOS included (<= max_len + 1) */
} tfm_lm_text_stats;

/** A language-model dataset (docs/LM.md) from UTF-8 text files paths[0..n_paths), read in order:
 * each non-blank line is one sequence, the target row bos_id, its subwords, eos_id; a line of more
 * than max_len − 1 subwords keeps its first max_len and no EOS (the row then has max_len + 1 ids:
 * the decoder reads max_len positions). Every pair has an empty source (a batch's one pad column,
 * which a decoder-only model never reads), so tfm_batcher_create batches by target tokens.
 * tfm_dataset_line gives
 * the line within its own file. Errors, naming file:line: TFM_ERR_IO, TFM_ERR_FORMAT (invalid UTF-8,
 * a NUL byte, a line over TFM_DATA_MAX_LINE_BYTES, an empty file, no non-blank line at all),
 * TFM_ERR_INVALID_ARG, TFM_ERR_NOMEM. `stats` may be NULL. On error *out is NULL. */
TFM_API tfm_status tfm_dataset_from_lm_text(const tfm_tokenizer *tok, const char *const *paths, size_t n_paths, int max_len,
                                            int bos_id, int eos_id, tfm_dataset **out, tfm_lm_text_stats *stats);

/** Loads two aligned token-id files (docs/FORMATS.md, read by tfm_id_lines_read()): source lines as
 * written (may be empty), target lines whole rows (BOS first, EOS last). Nothing is skipped: every
 * line becomes a pair. Errors: those of tfm_id_lines_read(); TFM_ERR_FORMAT for different line
 * counts (both files and counts named); TFM_ERR_RANGE naming file:line for a source longer than
 * max_len ids or a target row with fewer than 2 or more than max_len + 1 ids; TFM_ERR_INVALID_ARG
 * for max_len < 1; TFM_ERR_NOMEM. Ids are not checked against a vocabulary here: use
 * tfm_dataset_check_vocab(). `stats` may be NULL. On error *out is NULL. */
TFM_API tfm_status tfm_dataset_from_ids(const char *src_path, const char *tgt_path, int max_len, tfm_dataset **out,
                                        tfm_dataset_stats *stats);

/** As tfm_dataset_from_ids() on id files already read: the same checks (src_path and tgt_path name
 * the files in messages). Once the checks pass the dataset takes over the arrays of *src and *tgt
 * and both are left empty ({0}); after a failed check they are left as they were. Either way
 * tfm_id_lines_free() on both afterwards is right. */
TFM_API tfm_status tfm_dataset_from_id_lines(tfm_id_lines *src, const char *src_path, tfm_id_lines *tgt, const char *tgt_path,
                                             int max_len, tfm_dataset **out, tfm_dataset_stats *stats);

/** Checks every source id is in [0, src_vocab) and every target id in [0, tgt_vocab).
 * Errors: TFM_ERR_RANGE naming the file, its 1-based line and the id. */
TFM_API tfm_status tfm_dataset_check_vocab(const tfm_dataset *ds, int src_vocab, int tgt_vocab);

/** Number of pairs (>= 1 for any dataset these functions return). */
TFM_API size_t tfm_dataset_size(const tfm_dataset *ds);

/** Pair i, 0 <= i < size: *src [*src_len] source ids, *tgt [*tgt_len] the whole target row (BOS
 * first, EOS last). The arrays belong to the dataset and stay valid while it lives. Any of the four
 * outputs may be NULL. */
TFM_API void tfm_dataset_pair(const tfm_dataset *ds, size_t i, const int32_t **src, size_t *src_len, const int32_t **tgt,
                              size_t *tgt_len);

/** The 1-based line of the files pair i came from (pairs skipped while loading leave gaps). */
TFM_API size_t tfm_dataset_line(const tfm_dataset *ds, size_t i);

/** Releases a dataset (NULL is fine). A batcher made from it must be freed first. */
TFM_API void tfm_dataset_free(tfm_dataset *ds);

/** Cuts a dataset into padded batches; see tfm_batcher_create(). */
typedef struct tfm_batcher tfm_batcher;

/** One padded batch, laid out as tfm_trainer_step() and tfm_model_score() take it. The arrays
 * belong to the batcher and stay valid until the next tfm_batcher_next/seek/free. */
typedef struct {
    int B, S, T;             /* rows; source width; target width (whole rows, BOS..EOS); S >= 1, T >= 2 */
    const int32_t *src;      /* [B, S] row-major, each row padded at the end with pad_id */
    const int32_t *tgt;      /* [B, T] row-major, each row padded at the end with pad_id */
    const size_t *pairs;     /* [B] dataset index of each row */
    size_t src_tokens;       /* non-pad source ids in the batch */
    size_t tgt_tokens;       /* non-pad target ids in the batch, BOS and EOS included (the loss
                                counts tgt_tokens − B prediction targets) */
} tfm_batch;

/** Makes a batcher over `ds` (which must outlive it). All memory is allocated here.
 *
 * Batches. The pairs are sorted by (target length, source length) and cut greedily, in that order,
 * into batches: a batch of B pairs with longest source S and longest target row T costs
 * B · max(S, T) tokens, padding included, and a pair joins the current batch only while that cost
 * stays <= batch_tokens. A pair whose max(S, T) alone exceeds batch_tokens forms a batch of one (the
 * only batches over the budget). Sorting by length keeps padding low (~1–3 % on the Bible corpus at
 * 3000 tokens). The cut depends only on the lengths, so every epoch has the same number of batches,
 * with the same (B, S, T) shapes: tfm_batcher_max_dims() is exact.
 *
 * Order. shuffle = 1: each epoch e is a pure function of (seed, e): pairs with equal (target,
 * source) lengths are shuffled among themselves (so batch contents vary between epochs), then the
 * order of the batches is shuffled (Fisher–Yates on PCG32). shuffle = 0: pairs of equal lengths
 * stay in dataset order and batches come shortest first, the same every epoch (for validation).
 *
 * Errors: TFM_ERR_INVALID_ARG for batch_tokens < 1 or shuffle not 0/1; TFM_ERR_NOMEM. On error
 * *out is NULL. */
TFM_API tfm_status tfm_batcher_create(const tfm_dataset *ds, int batch_tokens, int pad_id, int shuffle, uint64_t seed,
                                      tfm_batcher **out);

/** Makes a batcher of line-count batches over `ds` (which must outlive it), as the id-file mode of
 * `tfm train` uses (--batch-size): B = min(batch_lines, pairs); every epoch has pairs / B batches of
 * exactly B rows, padded as tfm_batcher_create's. With shuffle = 1 and B < pairs, epoch e takes the
 * pairs in a seeded permutation (Fisher–Yates on PCG32, a pure function of (seed, e)) and the last
 * pairs mod B of that permutation sit the epoch out; otherwise (B == pairs, or shuffle = 0) every
 * batch takes its pairs in dataset order, so with B >= pairs every step uses every line, in file
 * order. Every other function treats both kinds alike; tfm_batcher_max_dims() is then a bound
 * (B, the longest source, the longest target row), not every epoch's maximum.
 * Errors: TFM_ERR_INVALID_ARG for batch_lines < 1 or shuffle not 0/1; TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_batcher_create_lines(const tfm_dataset *ds, int batch_lines, int pad_id, int shuffle, uint64_t seed,
                                            tfm_batcher **out);

/** What the batches are cut by, as the resumable checkpoint stores it (train_state.position[2]):
 * batch_tokens (> 0) for token batches, −B (< 0) for line batches of B rows. Two batchers over the
 * same dataset with the same value, pad_id, shuffle and seed make the same batches. */
TFM_API int64_t tfm_batcher_batching(const tfm_batcher *b);

/** The largest B, S and T of any batch of any epoch (each maximum taken on its own; any may be
 * NULL): what tfm_trainer_create() needs. Note max_B · max_T can far exceed batch_tokens (many short
 * rows or few long ones); tfm_batcher_max_tokens() gives the real bound on B · S and B · T. */
TFM_API void tfm_batcher_max_dims(const tfm_batcher *b, int *max_B, int *max_S, int *max_T);

/** The largest B · S and B · T of any batch (tokens, padding included; either may be NULL): with
 * a pair longer than batch_tokens alone this can exceed batch_tokens. */
TFM_API void tfm_batcher_max_tokens(const tfm_batcher *b, size_t *max_src_tokens, size_t *max_tgt_tokens);

/** Batches in every epoch (>= 1). */
TFM_API size_t tfm_batcher_batches_per_epoch(const tfm_batcher *b);

/** The next batch. After the last batch of epoch e comes the first of epoch e + 1 (reshuffled).
 * Never allocates; never fails (returns TFM_OK; the status is there for future sources). */
TFM_API tfm_status tfm_batcher_next(tfm_batcher *b, tfm_batch *out);

/** The position of the batch the next tfm_batcher_next() returns: epoch (from 0) and index within
 * that epoch, in [0, batches_per_epoch). A fresh batcher is at (0, 0). Store both for resume. */
TFM_API void tfm_batcher_position(const tfm_batcher *b, uint64_t *epoch, uint64_t *index);

/** Moves to (epoch, index), as returned by tfm_batcher_position(): the following batches are
 * exactly, bit for bit, those a batcher that got there by calling next() would return (same
 * dataset, batch_tokens, pad_id, shuffle and seed). index == batches_per_epoch means (epoch + 1, 0).
 * Costs O(pairs + batches), no allocation. Errors: TFM_ERR_RANGE for index > batches_per_epoch
 * (position unchanged). */
TFM_API tfm_status tfm_batcher_seek(tfm_batcher *b, uint64_t epoch, uint64_t index);

/** Releases a batcher (NULL is fine). */
TFM_API void tfm_batcher_free(tfm_batcher *b);

#ifdef __cplusplus
}
#endif
#endif
