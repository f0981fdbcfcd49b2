/* The byte-level BPE tokenizer's insides (include/tfm/bpe.h), shared by its files:
 * bpe_vocab.c (the token table, its hash, the merge table, the byte-to-unicode table),
 * bpe_load.c (vocab.json + merges.txt, and tokenizer.json's model), bpe_json.c (the rest of
 * tokenizer.json), bpe_pretok.c (the pre-tokeniser patterns), bpe_merge.c (merging by rank) and
 * bpe.c (the API: encode, decode). */
#ifndef TFM_BPE_INTERNAL_H
#define TFM_BPE_INTERNAL_H

#include "tfm/bpe.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* A step of the pre-tokeniser: every digit alone, or one of the three patterns (bpe.h). */
typedef enum { BPE_STEP_DIGITS, BPE_STEP_GPT2, BPE_STEP_LLAMA3, BPE_STEP_QWEN2 } bpe_step;
#define BPE_MAX_STEPS 4

/* Token ids are below 2^24, tfm_config's largest vocabulary: a file naming a larger id is refused
 * before a table of that many rows is allocated (an id of 2e9 would otherwise cost 32 GB). */
#define BPE_MAX_ID 16777215

/* Whether j is a token id (an integer in [0, BPE_MAX_ID]); *out then holds it. */
int bpe_json_id(const cJSON *j, int32_t *out);

/* One added token (matched literally in the text). */
typedef struct {
    int32_t id;
    int special;    /* skipped by decode's skip_special */
    int normalized; /* matched after the normaliser (else on the raw text) */
    char *match;    /* the content normalised, when that differs from the token (NFC), else NULL */
    size_t match_len;
} bpe_added;

struct tfm_bpe {
    size_t V;          /* ids [0, V) */
    char **tok;        /* [V] token strings (NULL: a gap) */
    uint32_t *tok_len; /* [V] */
    int32_t *hslot;    /* [hcap] token ids by hash of the string (-1: empty) */
    size_t hcap;
    uint64_t *mkey;    /* [mcap] merge pairs (a << 32 | b), UINT64_MAX: empty */
    uint32_t *mrank;   /* [mcap] rank of the pair */
    int32_t *mnew;     /* [mcap] id of the merged token */
    size_t mcap, n_merges;
    int32_t byte_id[256];      /* id of each byte's character, -1 if not in the vocabulary */
    uint32_t byte_char[256];   /* GPT-2's bytes_to_unicode */
    bpe_added *added;
    size_t n_added;
    bpe_step steps[BPE_MAX_STEPS]; /* the pre-tokeniser, in order (none: a segment is one piece) */
    size_t n_steps;
    int nfc;           /* normaliser NFC */
    int ignore_merges; /* a piece that is a token is that token */
    int32_t unk_id;    /* -1: unknown characters are dropped (as `tokenizers`) */
    int fuse_unk;
    int32_t bos_id, eos_id; /* the post-processor's; -1: none */
};

/* ---- bpe_vocab.c ---- */

/* Sets up byte_char and an empty tokenizer of V ids (bos/eos/unk -1). Returns 0 when out of memory. */
int bpe_init(struct tfm_bpe *b, size_t V);
/* Gives id the token s[0..n) (copied); 0: out of memory. The id must be < V and have no token. */
int bpe_set_token(struct tfm_bpe *b, int32_t id, const char *s, size_t n);
/* Grows the table to V ids (new ones are gaps); 0: out of memory. */
int bpe_grow(struct tfm_bpe *b, size_t V);
/* Builds the string hash once every token is set: 1; 0 out of memory; -1 if two ids hold the same
 * token (*dup_a < *dup_b set). Also fills byte_id. */
int bpe_index(struct tfm_bpe *b, int32_t *dup_a, int32_t *dup_b);
/* The id of the token s[0..n), or -1. */
int32_t bpe_lookup(const struct tfm_bpe *b, const char *s, size_t n);
/* Adds the merge (a, b) -> c of the next rank (a later duplicate pair takes the later rank, as
 * `tokenizers`); 0 when out of memory. Call bpe_merges_reserve first. */
int bpe_merges_reserve(struct tfm_bpe *b, size_t n);
void bpe_merge_add(struct tfm_bpe *b, int32_t a, int32_t bb, int32_t c, uint32_t rank);
/* The merge of (a, b): 1 with its rank and result, 0 if there is none. */
int bpe_merge_find(const struct tfm_bpe *b, int32_t a, int32_t bb, uint32_t *rank, int32_t *c);
/* Validates the merge "left right" of rank `rank` and adds it; on error the message names
 * `where` (e.g. "merges.txt:7" or "x.json: model.merges[6]"). */
tfm_status bpe_merge_strings(struct tfm_bpe *b, const char *where, const char *left, size_t nl, const char *right,
                             size_t nr, uint32_t rank);
void bpe_free(struct tfm_bpe *b);

/* ---- bpe_load.c ---- */

/* Reads a whole file (NUL-terminated) into *buf; names the file in errors. */
tfm_status bpe_read_file(const char *path, char **buf, size_t *len);
/* Parses JSON text, naming path:line:column on error. */
tfm_status bpe_parse_json(const char *path, const char *buf, size_t len, cJSON **out);
/* A token -> id object (vocab.json or model.vocab) into b (sized, tokens set, indexed). */
tfm_status bpe_load_vocab(const char *path, const char *where, const cJSON *vocab, struct tfm_bpe *b);

/* ---- bpe_json.c ---- */

/* Everything of tokenizer.json into b (freshly zeroed). */
tfm_status bpe_load_tokenizer_json(const char *path, const cJSON *root, struct tfm_bpe *b);

/* ---- bpe_pretok.c ---- */

/* Calls piece(ctx, start, end) for each piece of cps[0..n) in order; stops and returns 0 when
 * piece returns 0, else 1. */
typedef int (*bpe_piece_fn)(void *ctx, size_t start, size_t end);
int bpe_pretokenize(const struct tfm_bpe *b, const uint32_t *cps, size_t n, bpe_piece_fn piece, void *ctx);

/* ---- bpe_merge.c ---- */

/* A candidate merge: key (rank << 32 | position of its left symbol), the merged id. */
typedef struct {
    uint64_t key;
    int32_t new_id;
} bpe_cand;

/* Scratch for bpe_merge_word, reused across words (bpe_merge_scratch_free releases it). */
typedef struct {
    int32_t *id;
    int32_t *prev, *next;
    bpe_cand *heap;
    char *mapped;   /* the piece as byte-level characters (ignore_merges) */
    size_t cap, heap_cap;
} bpe_merge_scratch;
/* Appends the BPE ids of the piece w[0..n) (raw UTF-8 bytes; one initial symbol per byte, the id
 * of its byte-to-unicode character) to out (*n_out grows, *cap_out reallocated). 0 when out of
 * memory. */
int bpe_merge_word(const struct tfm_bpe *b, bpe_merge_scratch *s, const unsigned char *w, size_t n, int32_t **out,
                   size_t *n_out, size_t *cap_out);
void bpe_merge_scratch_free(bpe_merge_scratch *s);

#endif
