/* Length buckets for tfm eval --by-length and tfm perplexity --by-position: a list of inclusive
 * upper edges E1 < E2 < ... < Ek (in subword tokens); bucket i holds lengths (E(i-1), Ei], the
 * first [0, E1], and a last, open bucket lengths > Ek. */
#ifndef TFM_CLI_LEN_BUCKETS_H
#define TFM_CLI_LEN_BUCKETS_H

#include <stddef.h>

#define LEN_BUCKETS_MAX 64
#define LEN_BUCKETS_DEFAULT "10,20,30,40,60,80,120"

typedef struct {
    int n_edges;                  /* k; there are k + 1 buckets */
    int edges[LEN_BUCKETS_MAX];   /* strictly increasing, >= 1 */
} len_buckets;

/* Parses "E1,E2,..." (positive integers, strictly increasing, at most LEN_BUCKETS_MAX). Prints
 * "tfm <cmd>: error: --buckets ...: ..." and returns 0 if malformed. */
int len_buckets_parse(const char *cmd, const char *spec, len_buckets *b);

/* The bucket (0..n_edges) of a length in tokens. */
int len_bucket_of(const len_buckets *b, size_t len);

/* The bucket's smallest length, and its largest (-1 for the last, open bucket). */
int len_bucket_lo(const len_buckets *b, int i);
int len_bucket_hi(const len_buckets *b, int i);

/* "0-10", "11-20", ..., "121+" into buf (cap bytes); returns buf. */
const char *len_bucket_label(const len_buckets *b, int i, char *buf, size_t cap);

#endif
