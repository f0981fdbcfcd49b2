/* The tables of a byte-level BPE tokenizer (bpe_internal.h): tokens by id, an open-addressing
 * hash from token string to id (FNV-1a, linear probing), the merge table (pair of ids -> rank and
 * merged id, hashed with splitmix64's mix) and GPT-2's byte-to-unicode table. */
#include "bpe_internal.h"
#include "core_internal.h"
#include "hash.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* GPT-2's bytes_to_unicode (openai/gpt-2 src/encoder.py): the printable bytes '!'..'~',
 * '¡'..'¬', '®'..'ÿ' stand for themselves; the other 68 bytes, in order, become U+0100.. */
static void byte_table(uint32_t *out) {
    uint32_t n = 0;
    for (uint32_t c = 0; c < 256; c++) {
        const int printable = (c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF);
        out[c] = printable ? c : 256 + n++;
    }
}

int bpe_init(struct tfm_bpe *b, size_t V) {
    byte_table(b->byte_char);
    for (int i = 0; i < 256; i++) b->byte_id[i] = -1;
    b->unk_id = b->bos_id = b->eos_id = -1;
    return bpe_grow(b, V);
}

int bpe_grow(struct tfm_bpe *b, size_t V) {
    if (V <= b->V) return 1;
    char **t = realloc(b->tok, V * sizeof *t);
    if (!t) return 0;
    b->tok = t;
    uint32_t *l = realloc(b->tok_len, V * sizeof *l);
    if (!l) return 0;
    b->tok_len = l;
    for (size_t i = b->V; i < V; i++) b->tok[i] = NULL, b->tok_len[i] = 0;
    b->V = V;
    return 1;
}

int bpe_set_token(struct tfm_bpe *b, int32_t id, const char *s, size_t n) {
    char *t = malloc(n + 1);
    if (!t) return 0;
    memcpy(t, s, n);
    t[n] = '\0';
    b->tok[id] = t;
    b->tok_len[id] = (uint32_t)n;
    return 1;
}

static uint64_t str_hash(const char *s, size_t n) {
    uint64_t h = 0xCBF29CE484222325ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001B3ULL;
    return hash_mix64(h);
}

int32_t bpe_lookup(const struct tfm_bpe *b, const char *s, size_t n) {
    if (!b->hcap) return -1;
    for (size_t i = str_hash(s, n) & (b->hcap - 1);; i = (i + 1) & (b->hcap - 1)) {
        int32_t id = b->hslot[i];
        if (id < 0) return -1;
        if (b->tok_len[id] == n && memcmp(b->tok[id], s, n) == 0) return id;
    }
}

int bpe_index(struct tfm_bpe *b, int32_t *dup_a, int32_t *dup_b) {
    size_t cap = 64;
    while (cap < 2 * b->V) cap *= 2;
    free(b->hslot);
    b->hslot = malloc(cap * sizeof *b->hslot);
    if (!b->hslot) return 0;
    b->hcap = cap;
    for (size_t i = 0; i < cap; i++) b->hslot[i] = -1;
    for (size_t id = 0; id < b->V; id++) {
        if (!b->tok[id]) continue;
        size_t i = str_hash(b->tok[id], b->tok_len[id]) & (cap - 1);
        for (; b->hslot[i] >= 0; i = (i + 1) & (cap - 1)) {
            int32_t o = b->hslot[i];
            if (b->tok_len[o] == b->tok_len[id] && memcmp(b->tok[o], b->tok[id], b->tok_len[id]) == 0) {
                *dup_a = o;
                *dup_b = (int32_t)id;
                return -1;
            }
        }
        b->hslot[i] = (int32_t)id;
    }
    for (int c = 0; c < 256; c++) {
        utf8proc_uint8_t u[4];
        utf8proc_ssize_t k = utf8proc_encode_char((utf8proc_int32_t)b->byte_char[c], u);
        b->byte_id[c] = bpe_lookup(b, (const char *)u, (size_t)k);
    }
    return 1;
}

/* ---- merges --------------------------------------------------------------------------------- */

static uint64_t pair_key(int32_t a, int32_t c) { return (uint64_t)(uint32_t)a << 32 | (uint32_t)c; }

int bpe_merges_reserve(struct tfm_bpe *b, size_t n) {
    size_t cap = 64;
    while (cap < 2 * n) cap *= 2;
    b->mkey = malloc(cap * sizeof *b->mkey);
    b->mrank = malloc(cap * sizeof *b->mrank);
    b->mnew = malloc(cap * sizeof *b->mnew);
    if (!b->mkey || !b->mrank || !b->mnew) return 0;
    b->mcap = cap;
    for (size_t i = 0; i < cap; i++) b->mkey[i] = UINT64_MAX;
    return 1;
}

void bpe_merge_add(struct tfm_bpe *b, int32_t a, int32_t bb, int32_t c, uint32_t rank) {
    const uint64_t k = pair_key(a, bb);
    size_t i = hash_mix64(k) & (b->mcap - 1);
    while (b->mkey[i] != UINT64_MAX && b->mkey[i] != k) i = (i + 1) & (b->mcap - 1);
    if (b->mkey[i] == UINT64_MAX) b->n_merges++;
    b->mkey[i] = k; /* a repeated pair: the later rank wins (a HashMap built in order) */
    b->mrank[i] = rank;
    b->mnew[i] = c;
}

int bpe_merge_find(const struct tfm_bpe *b, int32_t a, int32_t bb, uint32_t *rank, int32_t *c) {
    if (!b->mcap) return 0;
    const uint64_t k = pair_key(a, bb);
    for (size_t i = hash_mix64(k) & (b->mcap - 1); b->mkey[i] != UINT64_MAX; i = (i + 1) & (b->mcap - 1))
        if (b->mkey[i] == k) {
            *rank = b->mrank[i];
            *c = b->mnew[i];
            return 1;
        }
    return 0;
}

tfm_status bpe_merge_strings(struct tfm_bpe *b, const char *where, const char *left, size_t nl, const char *right,
                             size_t nr, uint32_t rank) {
    int32_t a = bpe_lookup(b, left, nl), c = bpe_lookup(b, right, nr);
    RETURN_IF(a < 0, TFM_ERR_FORMAT, "%s: merge '%.*s %.*s': '%.*s' is not in the vocabulary", where, (int)nl, left,
              (int)nr, right, (int)nl, left);
    RETURN_IF(c < 0, TFM_ERR_FORMAT, "%s: merge '%.*s %.*s': '%.*s' is not in the vocabulary", where, (int)nl, left,
              (int)nr, right, (int)nr, right);
    char small[256], *cat = nl + nr <= sizeof small ? small : malloc(nl + nr);
    RETURN_IF(!cat, TFM_ERR_NOMEM, "%s: out of memory", where);
    memcpy(cat, left, nl);
    memcpy(cat + nl, right, nr);
    int32_t m = bpe_lookup(b, cat, nl + nr);
    if (cat != small) free(cat);
    RETURN_IF(m < 0, TFM_ERR_FORMAT, "%s: merge '%.*s %.*s': the merged token '%.*s%.*s' is not in the vocabulary",
              where, (int)nl, left, (int)nr, right, (int)nl, left, (int)nr, right);
    bpe_merge_add(b, a, c, m, rank);
    return TFM_OK;
}

void bpe_free(struct tfm_bpe *b) {
    if (!b) return;
    for (size_t i = 0; i < b->V; i++) free(b->tok[i]);
    free(b->tok);
    free(b->tok_len);
    free(b->hslot);
    free(b->mkey);
    free(b->mrank);
    free(b->mnew);
    for (size_t k = 0; k < b->n_added; k++) free(b->added[k].match);
    free(b->added);
    free(b);
}
