/* BPE on one piece (bpe_internal.h): the merge loop of `tokenizers`' models/bpe/word.rs
 * (merge_all), which gives the same result as GPT-2's encoder.py (always merge the pair of lowest
 * rank, leftmost first) in O(n log n): the symbols form a doubly linked list over their starting
 * positions, and a binary min-heap holds candidate merges keyed (rank, position of the left
 * symbol) and the merged id. A popped candidate whose left symbol is gone, is last, or no longer forms a pair that
 * merges into the same token is stale and skipped; after a merge the pairs with the new
 * neighbours are pushed. Each merge removes a symbol and pushes at most two candidates, so a
 * word of n bytes costs at most 3n heap operations. */
#include "bpe_internal.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

static int grow(bpe_merge_scratch *s, size_t n) {
    if (n <= s->cap) return 1;
    size_t cap = s->cap ? s->cap : 64;
    while (cap < n) cap *= 2;
    int32_t *a = realloc(s->id, cap * sizeof *a);
    if (!a) return 0;
    s->id = a;
    a = realloc(s->prev, cap * sizeof *a);
    if (!a) return 0;
    s->prev = a;
    a = realloc(s->next, cap * sizeof *a);
    if (!a) return 0;
    s->next = a;
    bpe_cand *h = realloc(s->heap, 3 * cap * sizeof *h);
    if (!h) return 0;
    s->heap = h;
    char *m = realloc(s->mapped, 2 * cap);
    if (!m) return 0;
    s->mapped = m;
    s->cap = cap;
    return 1;
}

static void heap_push(bpe_cand *h, size_t *n, bpe_cand v) {
    size_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2].key > v.key) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

static bpe_cand heap_pop(bpe_cand *h, size_t *n) {
    bpe_cand top = h[0], v = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && h[c + 1].key < h[c].key) c++;
        if (h[c].key >= v.key) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = v;
    return top;
}

static int push_out(int32_t **out, size_t *n, size_t *cap, int32_t id) {
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        int32_t *p = realloc(*out, c * sizeof *p);
        if (!p) return 0;
        *out = p;
        *cap = c;
    }
    (*out)[(*n)++] = id;
    return 1;
}

/* A candidate merge of the pair starting at symbol i, if its two symbols merge. */
static void candidate(const struct tfm_bpe *b, bpe_merge_scratch *s, size_t *hn, int32_t i) {
    uint32_t rank;
    int32_t m;
    const int32_t j = s->next[i];
    if (j >= 0 && bpe_merge_find(b, s->id[i], s->id[j], &rank, &m)) 
        heap_push(s->heap, hn, (bpe_cand){(uint64_t)rank << 32 | (uint32_t)i, m});
}

int bpe_merge_word(const struct tfm_bpe *b, bpe_merge_scratch *s, const unsigned char *w, size_t n, int32_t **out,
                   size_t *n_out, size_t *cap_out) {
    if (n == 0) return 1;
    if (!grow(s, n)) return 0;
    if (b->ignore_merges) { /* the whole piece is a token: take it as it is (2 bytes a character) */
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            m += (size_t)utf8proc_encode_char((utf8proc_int32_t)b->byte_char[w[i]], (utf8proc_uint8_t *)s->mapped + m);
        }
        int32_t id = bpe_lookup(b, s->mapped, m);
        if (id >= 0) return push_out(out, n_out, cap_out, id);
    }
    /* the initial symbols: one per byte; a byte whose character is not a token becomes unk_id
     * (consecutive ones fused with fuse_unk) or is dropped when there is no unk_token */
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t id = b->byte_id[w[i]];
        if (id < 0) {
            if (b->unk_id < 0) continue;
            if (b->fuse_unk && k > 0 && s->id[k - 1] == b->unk_id) continue;
            id = b->unk_id;
        }
        s->id[k++] = id;
    }
    for (size_t i = 0; i < k; i++) {
        s->prev[i] = (int32_t)i - 1;
        s->next[i] = i + 1 < k ? (int32_t)i + 1 : -1;
    }
    size_t hn = 0;
    for (size_t i = 0; i + 1 < k; i++) candidate(b, s, &hn, (int32_t)i);
    while (hn) {
        const bpe_cand top = heap_pop(s->heap, &hn);
        const int32_t i = (int32_t)(uint32_t)top.key, j = s->next[i];
        uint32_t rank;
        int32_t m;
        if (s->id[i] < 0 || j < 0) continue; /* removed, or last */
        /* stale unless the pair there now merges into the same token (word.rs compares new ids) */
        if (!bpe_merge_find(b, s->id[i], s->id[j], &rank, &m) || m != top.new_id) continue;
        s->id[i] = m;
        s->id[j] = -1;
        s->next[i] = s->next[j];
        if (s->next[j] >= 0) s->prev[s->next[j]] = i;
        if (s->prev[i] >= 0) candidate(b, s, &hn, s->prev[i]);
        candidate(b, s, &hn, i);
    }
    for (int32_t i = k ? 0 : -1; i >= 0; i = s->next[i])
        if (!push_out(out, n_out, cap_out, s->id[i])) return 0;
    return 1;
}

void bpe_merge_scratch_free(bpe_merge_scratch *s) {
    free(s->id);
    free(s->prev);
    free(s->next);
    free(s->heap);
    free(s->mapped);
    memset(s, 0, sizeof *s);
}
