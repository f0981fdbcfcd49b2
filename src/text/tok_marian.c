/* Marian's tokenizer (transformers' MarianTokenizer, 4.40.2) as a tfm_tokenizer kind (tok_kind.h):
 * two SentencePiece models and a vocabulary, kept as one blob (core/parts.h) with the parts
 * source.spm, target.spm, vocab.json and, for separate vocabularies, target_vocab.json.
 *
 * encode (the source side), as MarianTokenizer(text).input_ids:
 *   1. language code: the regular expression >>.+<< (greedy, '.' any character but a newline);
 *      a match at the start of the text is the code, its piece looked up in vocab.json; every
 *      match is removed from the text (re.sub), at the start or not;
 *   2. the rest is cut into pieces by source.spm (EncodeAsPieces: an unknown character is its own
 *      piece), each looked up in vocab.json — the ids are vocab.json's, not SentencePiece's — and
 *      a piece vocab.json lacks is <unk>;
 *   3. </s> appended.
 *   MarianTokenizer defines a Moses punctuation normaliser (sacremoses, when installed) but 4.40.2
 *   never calls it while tokenising: no normalisation here either. Literal "</s>", "<unk>" and
 *   "<pad>" inside the text are pieces of text here (transformers splits them out as the special
 *   tokens).
 * decode (the target side), as batch_decode(ids, skip_special_tokens=True): </s>, <pad> and <unk>
 * dropped, each id → its piece (target_vocab.json, or vocab.json), target.spm's DecodePieces, "▁"
 * → " ", Python's str.strip(), then clean_up_tokenization (" ." → "." and the rest, below). */
#include "bpe_internal.h"
#include "parts.h"
#include "tok_kind.h"
#include "utf8.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    tfm_tokenizer *spm[2];    /* source.spm, target.spm */
    struct tfm_bpe *vocab[2]; /* vocab.json, target_vocab.json (the first again when shared) */
    int separate;
    tok_specials sp;
} marian_tok;

static void marian_free(void *state) {
    marian_tok *t = state;
    if (!t) return;
    for (int k = 0; k < 2; k++) {
        tfm_tokenizer_free(t->spm[k]);
        if (k == 0 || t->separate) bpe_free(t->vocab[k]); /* frees the struct too */
    }
    free(t);
}

/* Part `name` of the blob as a SentencePiece model. */
static tfm_status load_spm(const void *blob, size_t len, const char *name, tfm_tokenizer **out) {
    const unsigned char *d;
    size_t n;
    TRY(parts_find(blob, len, PARTS_MAGIC_MARIAN, name, &d, &n));
    tfm_status st = tfm_tokenizer_load_bytes(d, n, out);
    return st == TFM_OK ? TFM_OK : tfm_error_prefix(st, "%s: ", name);
}

/* Part `name` (a JSON object {piece: id}) as a vocabulary of dense ids 0..V-1. */
static tfm_status load_vocab(const void *blob, size_t len, const char *name, struct tfm_bpe **out) {
    struct tfm_bpe *b = *out = calloc(1, sizeof *b);
    RETURN_IF(!b, TFM_ERR_NOMEM, "%s: out of memory", name);
    const unsigned char *d;
    size_t n;
    TRY(parts_find(blob, len, PARTS_MAGIC_MARIAN, name, &d, &n));
    cJSON *root = NULL;
    TRY(bpe_parse_json(name, (const char *)d, n, &root));
    tfm_status st = bpe_load_vocab(name, "the vocabulary", root, b);
    cJSON_Delete(root);
    TRY(st);
    for (size_t i = 0; i < b->V; i++)
        RETURN_IF(!b->tok[i], TFM_ERR_FORMAT, "%s: no piece has id %zu (ids must be 0 .. %zu)", name, i, b->V - 1);
    return TFM_OK;
}

static tfm_status marian_load(const void *blob, size_t len, void **state) {
    *state = NULL;
    marian_tok *t = calloc(1, sizeof *t);
    RETURN_IF(!t, TFM_ERR_NOMEM, "out of memory loading a Marian tokenizer");
    const unsigned char *d;
    size_t n;
    t->separate = parts_find(blob, len, PARTS_MAGIC_MARIAN, "target_vocab.json", &d, &n) == TFM_OK;
    tfm_clear_error();
    tfm_status st = load_spm(blob, len, "source.spm", &t->spm[0]);
    if (st == TFM_OK) st = load_spm(blob, len, "target.spm", &t->spm[1]);
    if (st == TFM_OK) st = load_vocab(blob, len, "vocab.json", &t->vocab[0]);
    if (st == TFM_OK && t->separate) st = load_vocab(blob, len, "target_vocab.json", &t->vocab[1]);
    if (st == TFM_OK && !t->separate) t->vocab[1] = t->vocab[0];
    if (st == TFM_OK) {
        const struct tfm_bpe *v = t->vocab[0];
        t->sp = (tok_specials){bpe_lookup(v, "<pad>", 5), -1, bpe_lookup(v, "</s>", 4), bpe_lookup(v, "<unk>", 5)};
        if (t->sp.unk < 0 || t->sp.pad < 0 || t->sp.eos < 0)
            st = tfm_set_error(TFM_ERR_FORMAT, "vocab.json: it must hold <unk>, <pad> and </s> (MarianTokenizer's)");
    }
    if (st != TFM_OK) {
        marian_free(t);
        return st;
    }
    *state = t;
    return TFM_OK;
}

static int marian_vocab_size(const void *state) { return (int)((const marian_tok *)state)->vocab[0]->V; }
static int marian_tgt_vocab_size(const void *state) { return (int)((const marian_tok *)state)->vocab[1]->V; }

static tok_specials marian_specials(const void *state) { return ((const marian_tok *)state)->sp; }

static int32_t marian_piece_to_id(const void *state, const char *piece) {
    const marian_tok *t = state;
    const int32_t id = bpe_lookup(t->vocab[0], piece, strlen(piece));
    return id >= 0 ? id : t->sp.unk;
}

static const char *marian_id_to_piece(const void *state, int32_t id) {
    const marian_tok *t = state;
    return id >= 0 && (size_t)id < t->vocab[0]->V ? t->vocab[0]->tok[id] : NULL;
}

/* The first match of >>.+<< in s[from, n) (greedy: to the last "<<" after it), as [*a, *b); 0 if none. */
static int find_code(const char *s, size_t n, size_t from, size_t *a, size_t *b) {
    size_t last = SIZE_MAX; /* the last "<<" of s, the end of a greedy match */
    for (size_t j = n >= 2 ? n - 2 : 0; n >= 2; j--) {
        if (s[j] == '<' && s[j + 1] == '<') {
            last = j;
            break;
        }
        if (j == 0) break;
    }
    for (size_t i = from; last != SIZE_MAX && i + 1 < n; i++) {
        if (s[i] != '>' || s[i + 1] != '>') continue;
        if (last < i + 3) return 0; /* '.+' needs one character between ">>" and "<<" */
        if (memchr(s + i + 2, '\n', last - (i + 2))) continue; /* '.' is not a newline */
        *a = i;
        *b = last + 2;
        return 1;
    }
    return 0;
}

static tfm_status marian_encode(const void *state, const char *text, size_t len, int32_t **ids, size_t *n_ids) {
    const marian_tok *t = state;
    *ids = NULL;
    *n_ids = 0;
    char *rest = malloc(len + 1);
    RETURN_IF(!rest, TFM_ERR_NOMEM, "out of memory encoding %zu bytes", len);
    int32_t code = -1;
    size_t k = 0, at = 0, a, b;
    while (find_code(text, len, at, &a, &b)) { /* re.sub(">>.+<<", "", text); the one at 0 is the code */
        if (a == 0) {
            char piece[256];
            const size_t pl = b < sizeof piece ? b : sizeof piece - 1;
            memcpy(piece, text, pl);
            piece[pl] = '\0';
            code = b < sizeof piece ? marian_piece_to_id(t, piece) : t->sp.unk;
        }
        memcpy(rest + k, text + at, a - at);
        k += a - at;
        at = b;
    }
    memcpy(rest + k, text + at, len - at);
    k += len - at;
    char **pieces = NULL;
    size_t np = 0;
    tfm_status st = spm_encode_pieces(t->spm[0], rest, k, &pieces, &np);
    free(rest);
    TRY(st);
    int32_t *out = malloc((np + 2) * sizeof *out);
    if (!out) {
        free(pieces);
        return tfm_set_error(TFM_ERR_NOMEM, "out of memory for %zu ids", np + 2);
    }
    size_t n = 0;
    if (code >= 0) out[n++] = code;
    for (size_t i = 0; i < np; i++) out[n++] = marian_piece_to_id(t, pieces[i]);
    out[n++] = t->sp.eos;
    free(pieces);
    *ids = out;
    *n_ids = n;
    return TFM_OK;
}

/* In place: "▁" → " ", str.strip() (hf_spm_text), then transformers' clean_up_tokenization, one
 * replace after another. */
static size_t finish_text(char *s, size_t n) {
    n = hf_spm_text(s, n);
    static const char *const from[] = {" .", " ?", " !", " ,", " ' ", " n't", " 'm", " 's", " 've", " 're"};
    static const char *const to[] = {".", "?", "!", ",", "'", "n't", "'m", "'s", "'ve", "'re"};
    for (size_t r = 0; r < sizeof from / sizeof from[0]; r++) {
        const size_t fl = strlen(from[r]), tl = strlen(to[r]);
        size_t w = 0;
        for (size_t i = 0; i < n;) {
            if (i + fl <= n && memcmp(s + i, from[r], fl) == 0) {
                memcpy(s + w, to[r], tl); /* tl < fl: never overtakes the reader */
                w += tl;
                i += fl;
            } else {
                s[w++] = s[i++];
            }
        }
        n = w;
    }
    s[n] = '\0';
    return n;
}

static tfm_status marian_decode(const void *state, const int32_t *ids, size_t n_ids, char **text, size_t *len) {
    const marian_tok *t = state;
    *text = NULL;
    *len = 0;
    const struct tfm_bpe *v = t->vocab[1];
    const char **pieces = malloc((n_ids ? n_ids : 1) * sizeof *pieces);
    RETURN_IF(!pieces, TFM_ERR_NOMEM, "out of memory decoding %zu ids", n_ids);
    size_t np = 0;
    for (size_t i = 0; i < n_ids; i++) {
        if (ids[i] < 0 || (size_t)ids[i] >= v->V) {
            free(pieces);
            return tfm_set_error(TFM_ERR_RANGE, "tokenizer decode: id %d at position %zu is outside the vocabulary [0, %zu)",
                                 (int)ids[i], i + 1, v->V);
        }
        if (ids[i] == t->sp.eos || ids[i] == t->sp.pad || ids[i] == t->sp.unk) continue; /* skip_special_tokens */
        pieces[np++] = v->tok[ids[i]];
    }
    tfm_status st = spm_decode_pieces(t->spm[1], pieces, np, text, len);
    free(pieces);
    TRY(st);
    *len = finish_text(*text, *len);
    return TFM_OK;
}

const tok_kind tok_kind_marian = {
    .magic = PARTS_MAGIC_MARIAN,
    .load = marian_load,
    .free = marian_free,
    .vocab_size = marian_vocab_size,
    .tgt_vocab_size = marian_tgt_vocab_size,
    .specials = marian_specials,
    .piece_to_id = marian_piece_to_id,
    .id_to_piece = marian_id_to_piece,
    .encode = marian_encode,
    .decode = marian_decode,
};
