// The C shim over SentencePiece (Debian's libsentencepiece 0.1.97): the only C++ in transformer.c.
//
// Everything here is a thin translation: C arguments in, SentencePiece calls, tfm_status and a
// message out. Every entry point catches all C++ exceptions (std::bad_alloc becomes
// TFM_ERR_NOMEM, anything else a status with the exception's text), so none crosses into C.
// The contract is documented in include/tfm/tokenizer.h.
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

extern "C" {
#include "core_internal.h"
#include "parts.h"
}
#include "tfm/fileio.h"
#include "tfm/text.h"
#include "tfm/tokenizer.h"
#include "tok_kind.h"
#include "utf8.h"

// A SentencePiece model (kind NULL: sp), or a tokenizer of another kind (tok_kind.h): its state
// and the blob it was loaded from (what tfm_tokenizer_serialize gives back).
struct tfm_tokenizer {
    sentencepiece::SentencePieceProcessor sp;
    const tok_kind *kind = nullptr;
    void *state = nullptr;
    std::string blob;
    ~tfm_tokenizer() {
        if (kind) kind->free(state);
    }
};

// Every kind of tokenizer besides SentencePiece's, recognised by the magic line of its blob.
static const tok_kind *const k_kinds[] = {&tok_kind_marian, &tok_kind_nllb};

namespace {

// Runs `body` (returning tfm_status) with every exception turned into a status and a message.
template <class F> tfm_status guarded(const char *what, F &&body) {
    try {
        return body();
    } catch (const std::bad_alloc &) {
        return tfm_set_error(TFM_ERR_NOMEM, "%s: out of memory", what);
    } catch (const std::exception &e) {
        return tfm_set_error(TFM_ERR_INVALID_ARG, "%s: %s", what, e.what());
    } catch (...) {
        return tfm_set_error(TFM_ERR_INVALID_ARG, "%s: unknown C++ exception", what);
    }
}

// The training sentences: the lines of each file in turn, "\n" or "\r\n" stripped, blank lines
// (tfm/text.h) skipped, each checked to be valid UTF-8. A read error or bad line ends the iteration early and
// is kept in `err`/`msg`; tfm_tokenizer_train() reports it (SentencePiece also sees it through
// status()).
class FileLines : public sentencepiece::SentenceIterator {
  public:
    FileLines(const char *const *paths, size_t n_paths) : paths_(paths, paths + n_paths) { Next(); }
    ~FileLines() override { close(); }
    FileLines(const FileLines &) = delete;
    FileLines &operator=(const FileLines &) = delete;

    bool done() const override { return done_; }
    const std::string &value() const override { return line_; }
    sentencepiece::util::Status status() const override {
        if (err == TFM_OK) return sentencepiece::util::Status();
        return sentencepiece::util::Status(sentencepiece::util::StatusCode::kDataLoss, msg);
    }

    void Next() override {
        while (!done_) {
            if (!f_) {
                if (file_ == paths_.size()) {
                    done_ = true;
                    return;
                }
                f_ = std::fopen(paths_[file_], "rb");
                if (!f_) {
                    fail(TFM_ERR_IO, std::string(paths_[file_]) + ": cannot open: " + std::strerror(errno));
                    return;
                }
                tfm_status st = tfm_line_reader_from_stream(f_, paths_[file_], 0, &reader_);
                if (st != TFM_OK) {
                    fail(st, tfm_last_error());
                    return;
                }
            }
            const char *line = nullptr;
            size_t n = 0;
            tfm_status st = tfm_line_reader_next(reader_, &line, &n);
            if (st != TFM_OK) { // a read error or a NUL byte, named with file and line
                fail(st, tfm_last_error());
                return;
            }
            if (!line) {
                close();
                file_++;
                continue;
            }
            size_t bad = utf8_first_invalid(line, n);
            if (bad < n) {
                fail(TFM_ERR_FORMAT, std::string(paths_[file_]) + ":" +
                                         std::to_string(tfm_line_reader_line_number(reader_)) +
                                         ": invalid UTF-8 at byte " + std::to_string(bad + 1) + " of the line");
                return;
            }
            if (tfm_text_is_blank(line, n)) continue; // tfm/text.h: e.g. only U+00A0 or U+200B
            line_.assign(line, n);
            n_sentences++;
            return;
        }
    }

    tfm_status err = TFM_OK;
    std::string msg;
    size_t n_sentences = 0;

  private:
    void close() {
        tfm_line_reader_free(reader_);
        reader_ = nullptr;
        if (f_) std::fclose(f_);
        f_ = nullptr;
    }

    void fail(tfm_status st, std::string m) {
        err = st;
        msg = std::move(m);
        done_ = true;
    }

    std::vector<const char *> paths_;
    size_t file_ = 0;
    std::FILE *f_ = nullptr;
    tfm_line_reader *reader_ = nullptr; // over f_
    std::string line_;
    bool done_ = false;
};

tfm_status check_train_opts(const tfm_tokenizer_train_opts &o) {
    RETURN_IF(o.vocab_size < 8, TFM_ERR_INVALID_ARG, "tokenizer: vocab_size %d is too small", o.vocab_size);
    RETURN_IF(!(o.character_coverage > 0.0f && o.character_coverage <= 1.0f), TFM_ERR_INVALID_ARG,
              "tokenizer: character_coverage %g is outside (0, 1]", (double)o.character_coverage);
    RETURN_IF(o.input_sentence_size < 0 || (o.input_sentence_size > 0 && o.input_sentence_size <= 100),
              TFM_ERR_INVALID_ARG,
              "tokenizer: input_sentence_size %d must be 0 (all lines) or over 100 (SentencePiece's minimum)",
              o.input_sentence_size);
    RETURN_IF(o.max_sentence_length < 1, TFM_ERR_INVALID_ARG,
              "tokenizer: max_sentence_length %d must be positive", o.max_sentence_length);
    RETURN_IF(o.num_threads < 1 || o.num_threads > 1024, TFM_ERR_INVALID_ARG,
              "tokenizer: num_threads %d is outside [1, 1024]", o.num_threads);
    RETURN_IF(o.seed == UINT_MAX, TFM_ERR_INVALID_ARG,
              "tokenizer: seed %u is reserved by SentencePiece", o.seed);
    return TFM_OK;
}

// SentencePiece's failure as our error: its "Vocabulary size too high (N). Please set it to a
// value <= M." (an assertion message that starts with a C++ file name) becomes one sentence naming
// the limit; any other message is passed on.
tfm_status train_error(const tfm_tokenizer_train_opts &o, const char *msg) {
    const char *p = std::strstr(msg, "Please set it to a value <= ");
    long most = -1;
    if (std::strstr(msg, "Vocabulary size too high") && p) most = std::strtol(p + std::strlen("Please set it to a value <= "), nullptr, 10);
    if (most > 0)
        return tfm_set_error(TFM_ERR_INVALID_ARG, "vocab_size %d is more than the text supports: at most %ld pieces",
                             o.vocab_size, most);
    return tfm_set_error(TFM_ERR_INVALID_ARG, "tokenizer training failed: %s", msg);
}

tfm_status copy_out(const std::string &s, uint8_t **bytes, size_t *len) {
    uint8_t *p = static_cast<uint8_t *>(std::malloc(s.size() + 1));
    RETURN_IF(!p, TFM_ERR_NOMEM, "tokenizer: out of memory for %zu bytes", s.size());
    std::memcpy(p, s.data(), s.size());
    p[s.size()] = 0;
    *bytes = p;
    *len = s.size();
    return TFM_OK;
}

// SentencePiece's Decode of ids or pieces into *text (malloc'd, NUL-terminated, *len bytes).
template <class T>
tfm_status decode_out(const tfm_tokenizer *tok, const std::vector<T> &v, char **text, size_t *len) {
    std::string s;
    sentencepiece::util::Status st = tok->sp.Decode(v, &s);
    RETURN_IF(!st.ok(), TFM_ERR_FORMAT, "tokenizer decode: %s", st.message());
    uint8_t *bytes = nullptr;
    TRY(copy_out(s, &bytes, len));
    *text = reinterpret_cast<char *>(bytes);
    return TFM_OK;
}

} // namespace

extern "C" {

void tfm_tokenizer_train_opts_default(tfm_tokenizer_train_opts *opts) {
    opts->vocab_size = 8000;
    opts->vocab_size_at_most = 0;
    opts->character_coverage = 1.0f;
    opts->input_sentence_size = 2000000;
    opts->max_sentence_length = 8192;
    opts->num_threads = 2;
    opts->byte_fallback = 1;
    opts->seed = 1;
    opts->verbose = 0;
}

tfm_status tfm_tokenizer_train(const char *const *paths, size_t n_paths,
                               const tfm_tokenizer_train_opts *opts, tfm_tokenizer **out) {
    *out = nullptr;
    RETURN_IF(n_paths == 0 || !paths, TFM_ERR_INVALID_ARG, "tokenizer: no training files given");
    tfm_tokenizer_train_opts o;
    if (opts) o = *opts;
    else tfm_tokenizer_train_opts_default(&o);
    TRY(check_train_opts(o));
    return guarded("tokenizer training", [&]() -> tfm_status {
        FileLines lines(paths, n_paths);
        if (lines.err != TFM_OK) return tfm_set_error(lines.err, "%s", lines.msg.c_str());
        RETURN_IF(lines.done(), TFM_ERR_FORMAT, "tokenizer: the training files hold no text");

        // Options as SentencePiece's trainer flags (spm_train --help documents each).
        std::unordered_map<std::string, std::string> kw = {
            {"model_type", "unigram"},
            {"vocab_size", std::to_string(o.vocab_size)},
            {"hard_vocab_limit", o.vocab_size_at_most ? "false" : "true"},
            {"character_coverage", std::to_string(o.character_coverage)},
            {"input_sentence_size", std::to_string(o.input_sentence_size)},
            {"shuffle_input_sentence", "true"},
            {"max_sentence_length", std::to_string(o.max_sentence_length)},
            {"num_threads", std::to_string(o.num_threads)},
            {"byte_fallback", o.byte_fallback ? "true" : "false"},
            // Exact round trips: no NFKC, no whitespace collapsing (tokenizer.h).
            {"normalization_rule_name", "identity"},
            {"remove_extra_whitespaces", "false"},
            {"add_dummy_prefix", "true"},
            {"pad_id", std::to_string(TFM_TOK_PAD_ID)},
            {"bos_id", std::to_string(TFM_TOK_BOS_ID)},
            {"eos_id", std::to_string(TFM_TOK_EOS_ID)},
            {"unk_id", std::to_string(TFM_TOK_UNK_ID)},
            {"pad_piece", "<pad>"},
            {"bos_piece", "<s>"},
            {"eos_piece", "</s>"},
            {"unk_piece", "<unk>"},
            {"minloglevel", o.verbose ? "0" : "1"},
        };
        // Seeds the sampling of input_sentence_size lines (and the shuffle), so training is
        // deterministic; SentencePiece otherwise seeds from std::random_device.
        sentencepiece::SetRandomGeneratorSeed(o.seed);
        std::string model;
        sentencepiece::util::Status st = sentencepiece::SentencePieceTrainer::Train(kw, &lines, &model);
        if (lines.err != TFM_OK) return tfm_set_error(lines.err, "%s", lines.msg.c_str());
        if (!st.ok()) return train_error(o, st.message());

        // owned until handed out: an exception inside SentencePiece must not leak it
        std::unique_ptr<tfm_tokenizer> tok(new tfm_tokenizer());
        st = tok->sp.LoadFromSerializedProto(model);
        if (!st.ok())
            return tfm_set_error(TFM_ERR_FORMAT, "tokenizer: the trained model does not load: %s",
                                 st.message());
        *out = tok.release();
        return TFM_OK;
    });
}

tfm_status tfm_tokenizer_load_bytes(const void *data, size_t len, tfm_tokenizer **out) {
    *out = nullptr;
    RETURN_IF(!data && len > 0, TFM_ERR_INVALID_ARG, "tokenizer: NULL model bytes");
    RETURN_IF(len == 0, TFM_ERR_FORMAT, "tokenizer: the model is empty (0 bytes)");
    for (const tok_kind *k : k_kinds) {
        if (!parts_is(data, len, k->magic)) continue;
        return guarded("tokenizer load", [&]() -> tfm_status {
            std::unique_ptr<tfm_tokenizer> tok(new tfm_tokenizer());
            tok->blob.assign(static_cast<const char *>(data), len);
            TRY(k->load(tok->blob.data(), tok->blob.size(), &tok->state));
            tok->kind = k;
            *out = tok.release();
            return TFM_OK;
        });
    }
    return guarded("tokenizer load", [&]() -> tfm_status {
        // owned until handed out: SentencePiece throws on some malformed models (darts_clone's
        // "zero-length key", found by fuzz/fuzz_tokenizer_model.c), and that must not leak it
        std::unique_ptr<tfm_tokenizer> tok(new tfm_tokenizer());
        sentencepiece::util::Status st =
            tok->sp.LoadFromSerializedProto(absl::string_view(static_cast<const char *>(data), len));
        if (!st.ok())
            return tfm_set_error(TFM_ERR_FORMAT,
                                 "tokenizer: %zu bytes are not a SentencePiece model: %s", len,
                                 st.message());
        if (tok->sp.GetPieceSize() <= 0)
            return tfm_set_error(TFM_ERR_FORMAT, "tokenizer: the model has no pieces");
        *out = tok.release();
        return TFM_OK;
    });
}

tfm_status tfm_tokenizer_serialize(const tfm_tokenizer *tok, uint8_t **bytes, size_t *len) {
    *bytes = nullptr;
    *len = 0;
    return guarded("tokenizer serialize",
                   [&]() -> tfm_status {
                       return copy_out(tok->kind ? tok->blob : tok->sp.serialized_model_proto(), bytes, len);
                   });
}

int tfm_tokenizer_vocab_size(const tfm_tokenizer *tok) {
    return tok->kind ? tok->kind->vocab_size(tok->state) : tok->sp.GetPieceSize();
}
int tfm_tokenizer_pad_id(const tfm_tokenizer *tok) {
    return tok->kind ? tok->kind->specials(tok->state).pad : tok->sp.pad_id();
}
int tfm_tokenizer_bos_id(const tfm_tokenizer *tok) {
    return tok->kind ? tok->kind->specials(tok->state).bos : tok->sp.bos_id();
}
int tfm_tokenizer_eos_id(const tfm_tokenizer *tok) {
    return tok->kind ? tok->kind->specials(tok->state).eos : tok->sp.eos_id();
}
int tfm_tokenizer_unk_id(const tfm_tokenizer *tok) {
    return tok->kind ? tok->kind->specials(tok->state).unk : tok->sp.unk_id();
}

int32_t tfm_tokenizer_piece_to_id(const tfm_tokenizer *tok, const char *piece) {
    if (tok->kind) return tok->kind->piece_to_id(tok->state, piece);
    try {
        return tok->sp.PieceToId(piece);
    } catch (...) {
        return tok->sp.unk_id();
    }
}

const char *tfm_tokenizer_id_to_piece(const tfm_tokenizer *tok, int32_t id) {
    if (tok->kind) return tok->kind->id_to_piece(tok->state, id);
    if (id < 0 || id >= tok->sp.GetPieceSize()) return nullptr;
    return tok->sp.IdToPiece(id).c_str();
}

tfm_status tfm_tokenizer_encode(const tfm_tokenizer *tok, const char *text, size_t len,
                                int32_t **ids, size_t *n_ids) {
    *ids = nullptr;
    *n_ids = 0;
    RETURN_IF(!text && len > 0, TFM_ERR_INVALID_ARG, "tokenizer encode: NULL text");
    size_t bad = utf8_first_invalid(text, len);
    RETURN_IF(bad < len, TFM_ERR_FORMAT, "tokenizer encode: %s at byte %zu of %zu",
              text[bad] == 0 ? "NUL byte" : "invalid UTF-8", bad + 1, len);
    if (tok->kind) return tok->kind->encode(tok->state, text, len, ids, n_ids);
    if (len == 0) return TFM_OK;
    return guarded("tokenizer encode", [&]() -> tfm_status {
        std::vector<int> v;
        sentencepiece::util::Status st = tok->sp.Encode(absl::string_view(text, len), &v);
        RETURN_IF(!st.ok(), TFM_ERR_FORMAT, "tokenizer encode: %s", st.message());
        if (v.empty()) return TFM_OK;
        int32_t *p = static_cast<int32_t *>(std::malloc(v.size() * sizeof(int32_t)));
        RETURN_IF(!p, TFM_ERR_NOMEM, "tokenizer encode: out of memory for %zu ids", v.size());
        for (size_t i = 0; i < v.size(); i++) p[i] = static_cast<int32_t>(v[i]);
        *ids = p;
        *n_ids = v.size();
        return TFM_OK;
    });
}

tfm_status tfm_tokenizer_decode(const tfm_tokenizer *tok, const int32_t *ids, size_t n_ids,
                                char **text, size_t *len) {
    *text = nullptr;
    *len = 0;
    RETURN_IF(!ids && n_ids > 0, TFM_ERR_INVALID_ARG, "tokenizer decode: NULL ids");
    if (tok->kind) return tok->kind->decode(tok->state, ids, n_ids, text, len);
    return guarded("tokenizer decode", [&]() -> tfm_status {
        const int vocab = tok->sp.GetPieceSize();
        const int skip[3] = {tok->sp.pad_id(), tok->sp.bos_id(), tok->sp.eos_id()};
        std::vector<int> v;
        v.reserve(n_ids);
        for (size_t i = 0; i < n_ids; i++) {
            RETURN_IF(ids[i] < 0 || ids[i] >= vocab, TFM_ERR_RANGE,
                      "tokenizer decode: id %d at position %zu is outside the vocabulary [0, %d)",
                      (int)ids[i], i + 1, vocab);
            if (ids[i] == skip[0] || ids[i] == skip[1] || ids[i] == skip[2]) continue;
            v.push_back(ids[i]);
        }
        return decode_out(tok, v, text, len);
    });
}

void tfm_tokenizer_free(tfm_tokenizer *tok) { delete tok; }

tfm_status tfm_tokenizer_set_langs(tfm_tokenizer *tok, const char *src_lang, const char *tgt_lang, int legacy) {
    if (tok->kind && tok->kind->set_langs) return tok->kind->set_langs(tok->state, src_lang, tgt_lang, legacy);
    RETURN_IF(src_lang || tgt_lang || legacy, TFM_ERR_INVALID_ARG,
              "this model's tokenizer has no language codes (--src-lang, --tgt-lang and --nllb-legacy are for NLLB)");
    return TFM_OK;
}

int32_t tfm_tokenizer_forced_first(const tfm_tokenizer *tok) {
    return tok->kind && tok->kind->forced_first ? tok->kind->forced_first(tok->state) : -1;
}

const char *tfm_tokenizer_lang(const tfm_tokenizer *tok, size_t k, int32_t *id) {
    return tok->kind && tok->kind->lang ? tok->kind->lang(tok->state, k, id) : nullptr;
}

int tok_side_vocab_size(const tfm_tokenizer *tok, int target) {
    if (target && tok->kind && tok->kind->tgt_vocab_size) return tok->kind->tgt_vocab_size(tok->state);
    return tfm_tokenizer_vocab_size(tok);
}

int tok_model_rows_ok(const tfm_tokenizer *tok, int rows, int target) {
    const int V = tok_side_vocab_size(tok, target);
    return V == rows || (tok->kind && tok->kind->model_may_be_larger && V < rows);
}

tfm_status spm_encode_pieces(const tfm_tokenizer *tok, const char *text, size_t len, char ***pieces, size_t *n) {
    *pieces = nullptr;
    *n = 0;
    return guarded("tokenizer encode", [&]() -> tfm_status {
        std::vector<std::string> v;
        sentencepiece::util::Status st = tok->sp.Encode(absl::string_view(text, len), &v);
        RETURN_IF(!st.ok(), TFM_ERR_FORMAT, "tokenizer encode: %s", st.message());
        size_t bytes = v.size() * sizeof(char *);
        for (const std::string &p : v) bytes += p.size() + 1;
        char **out = static_cast<char **>(std::malloc(bytes ? bytes : 1));
        RETURN_IF(!out, TFM_ERR_NOMEM, "tokenizer encode: out of memory for %zu pieces", v.size());
        char *at = reinterpret_cast<char *>(out + v.size());
        for (size_t i = 0; i < v.size(); i++) {
            out[i] = at;
            std::memcpy(at, v[i].c_str(), v[i].size() + 1);
            at += v[i].size() + 1;
        }
        *pieces = out;
        *n = v.size();
        return TFM_OK;
    });
}

tfm_status spm_decode_pieces(const tfm_tokenizer *tok, const char *const *pieces, size_t n, char **text, size_t *len) {
    *text = nullptr;
    *len = 0;
    return guarded("tokenizer decode", [&]() -> tfm_status {
        std::vector<std::string> v(pieces, pieces + n);
        return decode_out(tok, v, text, len);
    });
}

} // extern "C"
