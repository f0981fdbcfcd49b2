/* transformer.c — corpus BLEU and chrF exactly as sacreBLEU 2.6.0 computes them with its defaults.
 *
 * BLEU (Papineni et al. 2002, "BLEU: a Method for Automatic Evaluation of Machine Translation"),
 * with the reproducibility conventions of sacreBLEU (Post 2018, "A Call for Clarity in Reporting
 * BLEU Scores"): mteval-v13a tokenisation, mixed case, one reference per segment, n-gram orders
 * 1..4, corpus-level statistics (sums over segments, then one score), the brevity penalty
 * exp(1 - r/c) when c < r, and the "exp" smoothing of mteval-v13a (an order with no match gets the
 * precision 1 / (2^k · total), k counting such orders).
 *
 * chrF2 (Popović 2015, "chrF: character n-gram F-score for automatic MT evaluation"): character
 * n-grams of orders 1..6 over Unicode code points of each segment with all whitespace removed,
 * no word n-grams, β = 2; counts summed over the corpus; precision and recall averaged over the
 * orders both sides have n-grams of (sacreBLEU's default, "eff:yes"; no eps smoothing); then
 * F_β = (1+β²)·P·R / (β²·P + R).
 *
 * Usage: zero a tfm_bleu_stats / tfm_chrf_stats, add every (hypothesis, reference) pair, then
 * compute. Strings are NUL-terminated UTF-8, one segment each (a trailing "\r" or other trailing
 * whitespace is ignored, as sacreBLEU ignores it). Adding is independent per pair, so statistics
 * of sub-corpora may be summed field by field. */
#ifndef TFM_BLEU_H
#define TFM_BLEU_H

#include "tfm/export.h"

#include "tfm/status.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TFM_BLEU_MAX_ORDER 4  /* word n-gram orders of BLEU */
#define TFM_CHRF_CHAR_ORDER 6 /* character n-gram orders of chrF */
#define TFM_CHRF_BETA 2       /* recall weighs β times precision */
/** The sacreBLEU release whose defaults and output these functions reproduce. */
#define TFM_SACREBLEU_VERSION "2.6.0"

/** Sufficient statistics of corpus BLEU. Zero-initialise (`tfm_bleu_stats s = {0};`) for an
 * empty corpus. Lengths and counts are in 13a tokens. */
typedef struct {
    uint64_t n_segments;                    /* pairs added */
    uint64_t hyp_len;                       /* tokens in all hypotheses (c) */
    uint64_t ref_len;                       /* tokens in all references (r) */
    uint64_t correct[TFM_BLEU_MAX_ORDER];   /* clipped n-gram matches, [n-1] for order n */
    uint64_t total[TFM_BLEU_MAX_ORDER];     /* hypothesis n-grams, [n-1] for order n */
} tfm_bleu_stats;

/** A corpus BLEU score and the parts sacreBLEU prints. */
typedef struct {
    double score;                             /* BLEU in [0, 100] */
    double precisions[TFM_BLEU_MAX_ORDER];    /* smoothed n-gram precisions, in percent */
    double bp;                                /* brevity penalty in [0, 1] */
    double ratio;                             /* hyp_len / ref_len (0 when ref_len is 0) */
    uint64_t hyp_len, ref_len;                /* tokens */
} tfm_bleu_score;

/** Adds one (hypothesis, reference) pair: tokenises both with mteval-v13a rules and accumulates
 * their lengths and clipped n-gram counts of orders 1..4 into `stats`.
 * Errors: TFM_ERR_INVALID_ARG (a NULL pointer), TFM_ERR_FORMAT (a string that is not valid
 * UTF-8, naming which and the byte offset; `stats` is then unchanged), TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_bleu_add(tfm_bleu_stats *stats, const char *hyp, const char *ref);

/** Corpus BLEU from accumulated statistics (sacreBLEU's compute_bleu with smooth_method "exp",
 * effective_order off). An empty corpus, or one without a single matching unigram, scores 0;
 * an order with no hypothesis n-grams at all (every hypothesis shorter than n) also gives 0. */
TFM_API tfm_bleu_score tfm_bleu_compute(const tfm_bleu_stats *stats);

/** Writes sacreBLEU's score line, e.g.
 * "BLEU = 12.34 45.6/23.4/12.3/6.7 (BP = 0.950 ratio = 0.951 hyp_len = 1234 ref_len = 1297)",
 * without a newline, into buf (truncated to cap-1 bytes). Returns the length the whole line
 * needs, like snprintf. */
TFM_API int tfm_bleu_format(const tfm_bleu_score *score, char *buf, size_t cap);

/** sacreBLEU's signature of the BLEU computed here:
 * "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0". Static storage. */
TFM_API const char *tfm_bleu_signature(void);

/** Sufficient statistics of corpus chrF: for each character order n (index n-1), the number of
 * hypothesis n-grams (counted only for segments whose reference has n-grams of that order, as
 * sacreBLEU does), of reference n-grams, and of clipped matches. Zero-initialise for an empty
 * corpus. */
typedef struct {
    uint64_t n_segments;
    uint64_t hyp[TFM_CHRF_CHAR_ORDER];
    uint64_t ref[TFM_CHRF_CHAR_ORDER];
    uint64_t match[TFM_CHRF_CHAR_ORDER];
} tfm_chrf_stats;

/** Adds one (hypothesis, reference) pair: character n-grams of orders 1..6 over Unicode code
 * points, whitespace (Python's str.split() set, e.g. U+00A0 and U+3000 too) removed first.
 * Errors: TFM_ERR_INVALID_ARG (a NULL pointer), TFM_ERR_FORMAT (invalid UTF-8; `stats` is then
 * unchanged), TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_chrf_add(tfm_chrf_stats *stats, const char *hyp, const char *ref);

/** Corpus chrF2 in [0, 100] from accumulated statistics (0 for an empty corpus). */
TFM_API double tfm_chrf_compute(const tfm_chrf_stats *stats);

/** sacreBLEU's signature of the chrF computed here:
 * "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0". Static storage. */
TFM_API const char *tfm_chrf_signature(void);

/** The one validation of hypotheses and references that `tfm bleu` (through tfm_bleu_chrf_files)
 * and `tfm eval` share (docs/HARDENING.md), in this order: every hypothesis line, then every
 * reference line, is valid UTF-8; the counts are equal; there is at least one pair (sacreBLEU
 * refuses empty input as well). hyp[0..n_hyp) and ref[0..n_ref) are NUL-terminated lines of the
 * files named hyp_path and ref_path (used in messages only); hyp_role names the first file's role
 * in messages: "hypothesis" (tfm bleu) or "source" (tfm eval, whose hypotheses are the source
 * lines' translations, one each).
 * Errors: TFM_ERR_FORMAT with, exactly:
 *   "PATH:LINE: invalid UTF-8 at byte column C (byte 0xXX) in the ROLE file",
 *   "line counts differ: ROLE file 'H' has N lines, reference file 'R' has M lines",
 *   "'H' and 'R' have no lines: nothing to score (sacreBLEU refuses empty input too)";
 * TFM_ERR_INVALID_ARG for a NULL argument. */
TFM_API tfm_status tfm_bleu_check_segments(const char *hyp_role, const char *hyp_path, const char *const *hyp, size_t n_hyp,
                                           const char *ref_path, const char *const *ref, size_t n_ref);

/** Reads a hypothesis file and a reference file (UTF-8, one segment per line, "\n" or "\r\n"
 * line ends, a last line without a line end still counts) and adds every line pair to `bleu`
 * and `chrf` (either may be NULL). `n_lines` (nullable) receives the number of pairs (>= 1). Both
 * files are opened before either is read.
 * Errors: TFM_ERR_IO (a file that cannot be opened or read, naming it), TFM_ERR_FORMAT (a NUL
 * byte, naming the file, line and byte column; and every refusal of tfm_bleu_check_segments:
 * invalid UTF-8, line counts that differ, two empty files), TFM_ERR_NOMEM. On error the statistics
 * are unchanged. */
TFM_API tfm_status tfm_bleu_chrf_files(const char *hyp_path, const char *ref_path, tfm_bleu_stats *bleu,
                                       tfm_chrf_stats *chrf, size_t *n_lines);

#ifdef __cplusplus
}
#endif
#endif
