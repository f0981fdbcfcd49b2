/* WordPiece encoding (include/tfm/wordpiece.h): special tokens found in the raw text, BERT's
 * normaliser and pre-tokeniser (wordpiece_basic.c), then greedy longest-match-first WordPiece
 * (Wu et al. 2016, "Google's Neural Machine Translation System", §4.1; the algorithm of BERT's
 * WordpieceTokenizer and of `tokenizers`' models/wordpiece), [CLS]/[SEP] and truncation. */
#include "core_internal.h"
#include "utf8.h"
#include "wordpiece_internal.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* ---- the vocabulary as a sorted index ---------------------------------------------------- */

static int cmp_bytes(const char *a, size_t na, const char *b, size_t nb) {
    int c = memcmp(a, b, na < nb ? na : nb);
    if (c) return c;
    return na < nb ? -1 : na > nb;
}

typedef struct {
    const char *s;
    size_t n;
    int32_t id;
} index_entry;

static int cmp_entries(const void *pa, const void *pb) {
    const index_entry *a = pa, *b = pb;
    int c = cmp_bytes(a->s, a->n, b->s, b->n);
    return c ? c : (a->id > b->id) - (a->id < b->id);
}

int wp_index_build(struct tfm_wordpiece *wp, int32_t *dup_a, int32_t *dup_b) {
    index_entry *e = malloc((wp->V ? wp->V : 1) * sizeof *e);
    if (!e) return -1;
    for (size_t i = 0; i < wp->V; i++) e[i] = (index_entry){wp->blob + wp->off[i], wp->len[i], (int32_t)i};
    qsort(e, wp->V, sizeof *e, cmp_entries);
    int ok = 1;
    for (size_t i = 0; i < wp->V; i++) {
        wp->sorted[i] = e[i].id;
        if (ok && i > 0 && cmp_bytes(e[i - 1].s, e[i - 1].n, e[i].s, e[i].n) == 0) {
            *dup_a = e[i - 1].id; /* equal tokens are in id order: a < b */
            *dup_b = e[i].id;
            ok = 0;
        }
    }
    free(e);
    return ok;
}

int32_t wp_lookup(const struct tfm_wordpiece *wp, const char *s, size_t n) {
    size_t lo = 0, hi = wp->V;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int32_t id = wp->sorted[mid];
        int c = cmp_bytes(wp->blob + wp->off[id], wp->len[id], s, n);
        if (c == 0) return id;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

/* ---- encoding ------------------------------------------------------------------------------ */

typedef struct {
    int32_t *v;
    size_t n, cap;
} id_vec;

static int push_id(id_vec *a, int32_t id) {
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 64;
        int32_t *p = realloc(a->v, cap * sizeof *p);
        if (!p) return 0;
        a->v = p;
        a->cap = cap;
    }
    a->v[a->n++] = id;
    return 1;
}

/* Per-call scratch: the segment's code points, its normalised form, one word's bytes. */
typedef struct {
    wp_cps raw, norm, tmp;
    char *word;     /* prefix_len bytes of room, then the word's UTF-8 */
    size_t *bound;  /* [chars + 1] byte offset of each character in the word */
    size_t word_cap; /* characters the two arrays above hold */
} scratch;

static void scratch_free(scratch *s) {
    free(s->raw.v);
    free(s->norm.v);
    free(s->tmp.v);
    free(s->word);
    free(s->bound);
}

/* WordPiece on one word cps[0..nc): the longest vocabulary entry that starts the rest of the
 * word ("##"-prefixed after the first piece); the whole word is [UNK] if some rest has no entry
 * or if it is longer than max_input_chars_per_word characters. */
static int wordpiece_word(const struct tfm_wordpiece *wp, scratch *s, const uint32_t *cps, size_t nc, id_vec *out) {
    if (nc > wp->s.max_input_chars_per_word) return push_id(out, wp->s.unk_id);
    if (nc > s->word_cap) {
        size_t cap = nc < 64 ? 64 : nc;
        char *w = realloc(s->word, wp->prefix_len + 4 * cap);
        if (!w) return 0;
        s->word = w;
        size_t *b = realloc(s->bound, (cap + 1) * sizeof *b);
        if (!b) return 0;
        s->bound = b;
        s->word_cap = cap;
    }
    /* The word's bytes start after prefix_len bytes of room. A piece that starts at byte b of the
     * word is looked up with the prefix written just before it, over bytes of pieces already
     * taken: the search only moves forward. */
    char *w = s->word + wp->prefix_len;
    size_t nb = 0;
    for (size_t i = 0; i < nc; i++) {
        s->bound[i] = nb;
        nb += (size_t)utf8proc_encode_char((utf8proc_int32_t)cps[i], (utf8proc_uint8_t *)w + nb);
    }
    s->bound[nc] = nb;
    size_t first = out->n;
    for (size_t start = 0; start < nc;) {
        int32_t id = -1;
        size_t end = nc;
        char *piece = w + s->bound[start];
        size_t extra = 0;
        if (start > 0) {
            extra = wp->prefix_len;
            memcpy(piece - extra, wp->prefix, extra);
        }
        for (; end > start; end--) {
            id = wp_lookup(wp, piece - extra, extra + s->bound[end] - s->bound[start]);
            if (id >= 0) break;
        }
        if (id < 0) {
            out->n = first; /* the whole word is unknown */
            return push_id(out, wp->s.unk_id);
        }
        if (!push_id(out, id)) return 0;
        start = end;
    }
    return 1;
}

/* Steps 2-4 on the raw text segment t[0..n) (valid UTF-8). */
static int encode_segment(const struct tfm_wordpiece *wp, scratch *s, const char *t, size_t n, id_vec *out) {
    s->raw.n = 0;
    for (size_t i = 0; i < n;) {
        uint32_t c = 0;
        size_t k = utf8_decode((const unsigned char *)t + i, n - i, &c);
        TFM_ASSERT(k > 0); /* validated by the caller */
        if (!wp_cps_push(&s->raw, c)) return 0;
        i += k;
    }
    if (!wp_normalize(&wp->s, s->raw.v, s->raw.n, &s->norm, &s->tmp)) return 0;
    size_t pos = 0, a, b;
    while (wp_next_word(s->norm.v, s->norm.n, &pos, &a, &b))
        if (!wordpiece_word(wp, s, s->norm.v + a, b - a, out)) return 0;
    return 1;
}

/* The leftmost, then longest, special token in t[from..n): its id and byte range; 0 if none. */
static int next_special(const struct tfm_wordpiece *wp, const char *t, size_t n, size_t from, size_t *at,
                        size_t *len, int32_t *id) {
    for (size_t i = from; i < n; i++) {
        size_t best = 0;
        for (size_t k = 0; k < wp->n_special; k++) {
            int32_t sid = wp->special[k];
            size_t L = wp->len[sid];
            if (L > best && L <= n - i && memcmp(t + i, wp->blob + wp->off[sid], L) == 0) {
                best = L;
                *id = sid;
            }
        }
        if (best) {
            *at = i;
            *len = best;
            return 1;
        }
    }
    return 0;
}

tfm_status tfm_wordpiece_encode(const tfm_wordpiece *wp, const char *text, size_t len, int add_special,
                                size_t max_tokens, int32_t **ids, size_t *n_ids) {
    RETURN_IF(!ids || !n_ids, TFM_ERR_INVALID_ARG, "tfm_wordpiece_encode: NULL output");
    *ids = NULL;
    *n_ids = 0;
    RETURN_IF(!wp || (!text && len), TFM_ERR_INVALID_ARG, "tfm_wordpiece_encode: NULL tokenizer or text");
    for (size_t i = 0; i < len;) { /* well-formed UTF-8; NUL is a character (clean_text drops it) */
        uint32_t c;
        size_t k = utf8_decode((const unsigned char *)text + i, len - i, &c);
        RETURN_IF(k == 0, TFM_ERR_FORMAT, "invalid UTF-8 at byte offset %zu (byte 0x%02X)", i,
                  (unsigned)(unsigned char)text[i]);
        i += k;
    }
    const int specials = add_special && wp->prefix_id >= 0;
    const size_t n_added = specials ? 1u + (wp->suffix_id >= 0) : 0u;
    if (max_tokens == 0) max_tokens = wp->s.max_length;
    RETURN_IF(max_tokens < n_added, TFM_ERR_RANGE,
              "tfm_wordpiece_encode: max_tokens %zu leaves no room for [CLS] and [SEP]", max_tokens);

    id_vec out = {0};
    scratch s = {0};
    int ok = !specials || push_id(&out, wp->prefix_id);
    for (size_t pos = 0; ok && pos < len;) {
        size_t at = len, slen = 0;
        int32_t sid = -1;
        int found = next_special(wp, text, len, pos, &at, &slen, &sid);
        ok = encode_segment(wp, &s, text + pos, at - pos, &out);
        if (ok && found) ok = push_id(&out, sid);
        pos = at + slen;
    }
    scratch_free(&s);
    if (ok && out.n + (specials && wp->suffix_id >= 0) > max_tokens) /* keep the first ids */
        out.n = max_tokens - (specials && wp->suffix_id >= 0);
    if (ok && specials && wp->suffix_id >= 0) ok = push_id(&out, wp->suffix_id);
    if (!ok) {
        free(out.v);
        return tfm_set_error(TFM_ERR_NOMEM, "tfm_wordpiece_encode: out of memory (%zu bytes of text)", len);
    }
    if (out.n == 0) {
        free(out.v);
        out.v = NULL;
    }
    *ids = out.v;
    *n_ids = out.n;
    return TFM_OK;
}

/* ---- small accessors ------------------------------------------------------------------------ */

const tfm_wordpiece_settings *tfm_wordpiece_settings_of(const tfm_wordpiece *wp) { return &wp->s; }

size_t tfm_wordpiece_vocab_size(const tfm_wordpiece *wp) { return wp->V; }

const char *tfm_wordpiece_id_to_token(const tfm_wordpiece *wp, int32_t id) {
    return id >= 0 && (size_t)id < wp->V ? wp->blob + wp->off[id] : NULL;
}

int32_t tfm_wordpiece_token_to_id(const tfm_wordpiece *wp, const char *token) {
    return token ? wp_lookup(wp, token, strlen(token)) : -1;
}

void wp_free(struct tfm_wordpiece *wp) {
    if (!wp) return;
    free(wp->blob);
    free(wp->off);
    free(wp->len);
    free(wp->sorted);
    free(wp->special);
    free(wp);
}

void tfm_wordpiece_free(tfm_wordpiece *wp) { wp_free(wp); }
