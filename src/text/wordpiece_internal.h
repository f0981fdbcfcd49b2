/* The WordPiece tokenizer's insides (include/tfm/wordpiece.h), shared by its three files:
 * wordpiece_load.c (vocab.txt and tokenizer.json), wordpiece_basic.c (BERT's normaliser and
 * pre-tokeniser on code points) and wordpiece.c (longest-match-first WordPiece and the API). */
#ifndef TFM_WORDPIECE_INTERNAL_H
#define TFM_WORDPIECE_INTERNAL_H

#include "tfm/wordpiece.h"

#include <stddef.h>
#include <stdint.h>

/* Longest continuing-subword prefix accepted ("##" for BERT). */
#define WP_MAX_PREFIX 16

struct tfm_wordpiece {
    tfm_wordpiece_settings s;
    size_t V;              /* tokens; ids [0, V) */
    char *blob;            /* every token, NUL-terminated, one after another */
    size_t *off;           /* [V] start of token id in blob */
    uint32_t *len;         /* [V] its length in bytes */
    int32_t *sorted;       /* [V] ids in byte order of their tokens, for binary search */
    int32_t *special;      /* [n_special] ids of the tokens matched literally in raw text */
    size_t n_special;
    int32_t prefix_id, suffix_id; /* added by add_special ([CLS], [SEP]); -1: nothing */
    char prefix[WP_MAX_PREFIX + 1]; /* continuing-subword prefix, "##" */
    size_t prefix_len;
};

/* A growing array of code points. */
typedef struct {
    uint32_t *v;
    size_t n, cap;
} wp_cps;

/* Appends c; returns 0 when out of memory. */
int wp_cps_push(wp_cps *a, uint32_t c);

/* Builds wp->sorted from wp->blob/off/len: 1 on success; 0 if two ids hold the same token
 * (*dup_a < *dup_b are set to the first such pair); -1 when out of memory. */
int wp_index_build(struct tfm_wordpiece *wp, int32_t *dup_a, int32_t *dup_b);

/* The id of the token bytes s[0..n), or -1. */
int32_t wp_lookup(const struct tfm_wordpiece *wp, const char *s, size_t n);

/* BERT's normaliser (wordpiece.h step 2) on in[0..n): the result replaces out's contents; tmp is
 * scratch. Returns 0 when out of memory. */
int wp_normalize(const tfm_wordpiece_settings *s, const uint32_t *in, size_t n, wp_cps *out, wp_cps *tmp);

/* BERT's pre-tokeniser (step 3): the next word of cps[*pos..n) as [*start, *end), advancing *pos
 * past it; returns 0 when no word is left. */
int wp_next_word(const uint32_t *cps, size_t n, size_t *pos, size_t *start, size_t *end);

/* Frees everything a tokenizer holds (for the loaders' error paths too). */
void wp_free(struct tfm_wordpiece *wp);

#endif
