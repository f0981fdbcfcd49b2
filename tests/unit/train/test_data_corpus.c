/* The batcher on the real Bible corpus (data/bible-en-es, made by `make corpus`): a joint 8k
 * tokenizer on a sample, the whole training set encoded, three epochs checked batch by batch,
 * padding under 8 % at 3,000-token batches (numbers printed). SKIP (77) without the corpus.
 * tfm-test: slow (it needs the corpus that `make corpus` builds; ~2 s once that exists) */
#define _POSIX_C_SOURCE 200809L

#include "batch_check.h"
#include "core_internal.h"
#include "test_util.h"
#include "tfm/data.h"
#include "tfm/tokenizer.h"

#include <unistd.h>

static void test_real_corpus(void) {
    const char *src = test_path("data/bible-en-es/train.en"), *tgt = test_path("data/bible-en-es/train.es");
    if (access(src, R_OK) != 0 || access(tgt, R_OK) != 0) {
        printf("SKIP: data/bible-en-es not found (make corpus, or scripts/get-corpus, makes it)\n");
        exit(TEST_SKIP);
    }
    const char *paths[2] = {src, tgt};
    tfm_tokenizer_train_opts o;
    tfm_tokenizer_train_opts_default(&o);
    o.vocab_size = 8000;
    o.input_sentence_size = 10000; /* a sample keeps this test quick; the lengths are close to a full model's */
    tfm_tokenizer *tok = NULL;
    double t0 = tfm_now_s();
    tfm_status s = tfm_tokenizer_train(paths, 2, &o, &tok);
    CHECK(s == TFM_OK, "tokenizer on the corpus: %s", tfm_last_error());
    if (s != TFM_OK) return;
    double t1 = tfm_now_s();
    tfm_dataset *ds = NULL;
    tfm_dataset_stats st;
    s = tfm_dataset_from_text(tok, src, tgt, 256, TFM_TOK_BOS_ID, TFM_TOK_EOS_ID, &ds, &st);
    double t2 = tfm_now_s();
    CHECK(s == TFM_OK, "corpus dataset: %s", tfm_last_error());
    if (s == TFM_OK) {
        printf("corpus: tokenizer (8k, 10k-line sample) %.1f s; encoded %zu + %zu lines in %.2f s (%.0f lines/s); "
               "%zu pairs, %zu skipped empty, %zu too long; %zu source + %zu target tokens; longest %d / %d\n",
               t1 - t0, st.n_lines, st.n_lines, t2 - t1, 2.0 * (double)st.n_lines / (t2 - t1), st.n_pairs,
               st.n_skipped_empty, st.n_skipped_long, st.src_tokens, st.tgt_tokens, st.max_src_len, st.max_tgt_len);
        CHECK(st.n_lines > 30000 && st.n_pairs > 30000, "corpus: %zu lines, %zu pairs", st.n_lines, st.n_pairs);
        pad_tally tally = {0};
        check_epochs(ds, 3000, 0, 1, 1, 2, "corpus, budget 3000", &tally);
        tfm_batcher *bt = NULL;
        CHECK(tfm_batcher_create(ds, 3000, 0, 1, 1, &bt) == TFM_OK, "batcher: %s", tfm_last_error());
        if (!bt) exit(test_finish("data_corpus"));
        int mB = 0, mS = 0, mT = 0;
        tfm_batcher_max_dims(bt, &mB, &mS, &mT);
        double pf = pad_fraction(&tally);
        printf("corpus, budget 3000: %zu batches/epoch, padding %.2f%% (source %.2f%%, target %.2f%%), "
               "%.0f target tokens per batch; max dims B %d S %d T %d\n",
               tally.batches, 100 * pf, 100 * (1 - tally.src_tokens / tally.src_slots),
               100 * (1 - tally.tgt_tokens / tally.tgt_slots), tally.tgt_tokens / (double)tally.batches, mB, mS, mT);
        CHECK(pf < 0.08, "corpus padding %.2f%% >= 8%%", 100 * pf);
        tfm_batcher_free(bt);
        tfm_dataset_free(ds);
    }
    tfm_tokenizer_free(tok);
}

int main(void) {
    test_real_corpus();
    return test_finish("data_corpus");
}
