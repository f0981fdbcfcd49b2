/* Byte-level BPE encoding and decoding (include/tfm/bpe.h): added tokens found literally, the
 * NFC normaliser, the pre-tokeniser (bpe_pretok.c), BPE on each piece's bytes (bpe_merge.c), the
 * post-processor's BOS/EOS; decoding through the inverse byte table with `tokenizers`' lossy
 * UTF-8 (Rust's String::from_utf8_lossy). */
#include "bpe_internal.h"
#include "core_internal.h"
#include "utf8.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

typedef struct {
    int32_t *v;
    size_t n, cap;
} id_out;

typedef struct {
    const struct tfm_bpe *b;
    bpe_merge_scratch ms;
    uint32_t *cps;  /* the segment's code points */
    size_t *boff;   /* [n + 1] byte offset of each */
    size_t cap;
    const char *seg; /* the segment's bytes */
    id_out out;
} enc_state;

static int push(id_out *o, int32_t id) {
    if (o->n == o->cap) {
        size_t c = o->cap ? 2 * o->cap : 64;
        int32_t *p = realloc(o->v, c * sizeof *p);
        if (!p) return 0;
        o->v = p;
        o->cap = c;
    }
    o->v[o->n++] = id;
    return 1;
}

static int on_piece(void *ctx, size_t s, size_t e) {
    enc_state *st = ctx;
    const size_t a = st->boff[s];
    return bpe_merge_word(st->b, &st->ms, (const unsigned char *)st->seg + a, st->boff[e] - a, &st->out.v, &st->out.n,
                          &st->out.cap);
}

/* Pre-tokenise and merge the segment t[0..n) (valid UTF-8, normalised). */
static int encode_plain(enc_state *st, const char *t, size_t n) {
    if (n + 1 > st->cap) {
        uint32_t *c = realloc(st->cps, (n + 1) * sizeof *c);
        if (!c) return 0;
        st->cps = c;
        size_t *o = realloc(st->boff, (n + 1) * sizeof *o);
        if (!o) return 0;
        st->boff = o;
        st->cap = n + 1;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; k++) {
        st->boff[k] = i;
        size_t m = utf8_decode((const unsigned char *)t + i, n - i, &st->cps[k]);
        TFM_ASSERT(m > 0);
        i += m;
    }
    st->boff[k] = n;
    st->seg = t;
    return bpe_pretokenize(st->b, st->cps, k, on_piece, st);
}

/* The leftmost, then longest, added token (normalized == norm) in t[from..n); 0 if none. */
static int next_added(const struct tfm_bpe *b, int norm, const char *t, size_t n, size_t from, size_t *at,
                      size_t *len, int32_t *id) {
    for (size_t i = from; i < n; i++) {
        size_t best = 0;
        for (size_t k = 0; k < b->n_added; k++) {
            const bpe_added *a = &b->added[k];
            const char *m = a->match ? a->match : b->tok[a->id];
            const size_t L = a->match ? a->match_len : b->tok_len[a->id];
            if (a->normalized == norm && L > best && L <= n - i && m[0] == t[i] && memcmp(t + i, m, L) == 0) {
                best = L;
                *id = a->id;
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

/* t[0..n) between raw-matched added tokens: normalise, then split on the normalised ones. */
static int encode_normalized(enc_state *st, const char *t, size_t n) {
    char *nfc = NULL;
    if (st->b->nfc && n) {
        utf8proc_uint8_t *r = NULL;
        utf8proc_ssize_t m = utf8proc_map((const utf8proc_uint8_t *)t, (utf8proc_ssize_t)n, &r,
                                          UTF8PROC_STABLE | UTF8PROC_COMPOSE);
        if (m < 0) return 0;
        nfc = (char *)r;
        t = nfc;
        n = (size_t)m;
    }
    int ok = 1;
    for (size_t pos = 0; ok && pos < n;) {
        size_t at = n, len = 0;
        int32_t id = -1;
        const int found = next_added(st->b, 1, t, n, pos, &at, &len, &id);
        ok = encode_plain(st, t + pos, at - pos) && (!found || push(&st->out, id));
        pos = at + len;
    }
    free(nfc);
    return ok;
}

tfm_status tfm_bpe_encode(const tfm_bpe *b, const char *text, size_t len, int add_special, int32_t **ids,
                          size_t *n_ids) {
    RETURN_IF(!ids || !n_ids, TFM_ERR_INVALID_ARG, "tfm_bpe_encode: NULL output");
    *ids = NULL;
    *n_ids = 0;
    RETURN_IF(!b || (!text && len), TFM_ERR_INVALID_ARG, "tfm_bpe_encode: NULL tokenizer or text");
    for (size_t i = 0; i < len;) {
        uint32_t c;
        size_t k = utf8_decode((const unsigned char *)text + i, len - i, &c);
        RETURN_IF(k == 0, TFM_ERR_FORMAT, "invalid UTF-8 at byte offset %zu (byte 0x%02X)", i,
                  (unsigned)(unsigned char)text[i]);
        i += k;
    }
    enc_state st = {.b = b};
    int ok = !(add_special && b->bos_id >= 0) || push(&st.out, b->bos_id);
    for (size_t pos = 0; ok && pos < len;) {
        size_t at = len, alen = 0;
        int32_t id = -1;
        const int found = next_added(b, 0, text, len, pos, &at, &alen, &id);
        ok = encode_normalized(&st, text + pos, at - pos) && (!found || push(&st.out, id));
        pos = at + alen;
    }
    if (ok && add_special && b->eos_id >= 0) ok = push(&st.out, b->eos_id);
    bpe_merge_scratch_free(&st.ms);
    free(st.cps);
    free(st.boff);
    if (!ok) {
        free(st.out.v);
        return tfm_set_error(TFM_ERR_NOMEM, "tfm_bpe_encode: out of memory (%zu bytes of text)", len);
    }
    if (!st.out.n) {
        free(st.out.v);
        st.out.v = NULL;
    }
    *ids = st.out.v;
    *n_ids = st.out.n;
    return TFM_OK;
}

/* ---- decoding ------------------------------------------------------------------------------ */

/* The byte a byte-level character stands for, or -1. */
static int char_byte(const struct tfm_bpe *b, uint32_t c) {
    if (c < 256 && b->byte_char[c] == c) return (int)c;
    if (c < 256 || c >= 256 + 68) return -1;
    for (int x = 0; x < 256; x++)
        if (b->byte_char[x] == c) return x;
    return -1;
}

typedef struct {
    char *v;
    size_t n, cap;
} bytes_t;

static int put(bytes_t *o, const void *p, size_t n) {
    if (o->n + n + 1 > o->cap) {
        size_t c = o->cap ? o->cap : 256;
        while (c < o->n + n + 1) c *= 2;
        char *g = realloc(o->v, c);
        if (!g) return 0;
        o->v = g;
        o->cap = c;
    }
    memcpy(o->v + o->n, p, n);
    o->n += n;
    return 1;
}

/* A token's bytes: every character through the inverse byte table, or, when one character is
 * not in it, the token's own UTF-8 (as the ByteLevel decoder of `tokenizers`). */
static int token_bytes(const struct tfm_bpe *b, const char *t, size_t n, bytes_t *o) {
    const size_t start = o->n;
    for (size_t i = 0; i < n;) {
        uint32_t c = 0;
        size_t k = utf8_decode((const unsigned char *)t + i, n - i, &c);
        int x = k ? char_byte(b, c) : -1;
        if (x < 0) {
            o->n = start;
            return put(o, t, n);
        }
        unsigned char byte = (unsigned char)x;
        if (!put(o, &byte, 1)) return 0;
        i += k;
    }
    return 1;
}

/* Length of the maximal prefix of s[0..n) that could start a well-formed sequence (Unicode
 * Table 3-7), at least 1: what from_utf8_lossy replaces by one U+FFFD. */
static size_t bad_prefix(const unsigned char *s, size_t n) {
    const unsigned c = s[0];
    size_t need;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) need = 2;
    else if (c >= 0xE0 && c <= 0xEF) need = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4) need = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else return 1;
    size_t i = 1;
    if (i < n && s[i] >= lo && s[i] <= hi) {
        for (i = 2; i < need && i < n && s[i] >= 0x80 && s[i] <= 0xBF;) i++;
    }
    return i;
}

static int lossy(const bytes_t *in, bytes_t *out) {
    const unsigned char *s = (const unsigned char *)in->v;
    for (size_t i = 0; i < in->n;) {
        uint32_t c;
        size_t k = utf8_decode(s + i, in->n - i, &c);
        if (k) {
            if (!put(out, s + i, k)) return 0;
            i += k;
        } else {
            if (!put(out, "\xEF\xBF\xBD", 3)) return 0;
            i += bad_prefix(s + i, in->n - i);
        }
    }
    return 1;
}

static int is_special(const struct tfm_bpe *b, int32_t id) {
    for (size_t k = 0; k < b->n_added; k++)
        if (b->added[k].id == id) return b->added[k].special;
    return 0;
}

tfm_status tfm_bpe_decode(const tfm_bpe *b, const int32_t *ids, size_t n_ids, int skip_special, char **text,
                          size_t *len) {
    RETURN_IF(!text || !len, TFM_ERR_INVALID_ARG, "tfm_bpe_decode: NULL output");
    *text = NULL;
    *len = 0;
    RETURN_IF(!b || (!ids && n_ids), TFM_ERR_INVALID_ARG, "tfm_bpe_decode: NULL tokenizer or ids");
    for (size_t i = 0; i < n_ids; i++)
        RETURN_IF(ids[i] < 0 || (size_t)ids[i] >= b->V || !b->tok[ids[i]], TFM_ERR_RANGE,
                  "tfm_bpe_decode: id %d (position %zu) has no token", (int)ids[i], i);
    bytes_t raw = {0}, out = {0};
    int ok = put(&out, "", 0);
    for (size_t i = 0; ok && i < n_ids; i++)
        if (!(skip_special && is_special(b, ids[i]))) ok = token_bytes(b, b->tok[ids[i]], b->tok_len[ids[i]], &raw);
    ok = ok && lossy(&raw, &out);
    free(raw.v);
    if (!ok) {
        free(out.v);
        return tfm_set_error(TFM_ERR_NOMEM, "tfm_bpe_decode: out of memory (%zu ids)", n_ids);
    }
    out.v[out.n] = '\0';
    *text = out.v;
    *len = out.n;
    return TFM_OK;
}

/* ---- small accessors ------------------------------------------------------------------------ */

size_t tfm_bpe_vocab_size(const tfm_bpe *b) { return b->V; }

const char *tfm_bpe_id_to_token(const tfm_bpe *b, int32_t id) {
    return id >= 0 && (size_t)id < b->V ? b->tok[id] : NULL;
}

int32_t tfm_bpe_token_to_id(const tfm_bpe *b, const char *token) {
    return token ? bpe_lookup(b, token, strlen(token)) : -1;
}

int32_t tfm_bpe_bos_id(const tfm_bpe *b) { return b->bos_id; }

int32_t tfm_bpe_eos_id(const tfm_bpe *b) { return b->eos_id; }

void tfm_bpe_free(tfm_bpe *b) { bpe_free(b); }
