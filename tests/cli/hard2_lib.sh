# Shared by the issue-33 tests (tests/cli/test_hard_*.sh of "Hardening II", docs/HARDENING.md kinds
# 6-13): the tiny models every row of their tables needs, made in about a second. Source after
# lib.sh and hard_lib.sh.

# hard2_models: $WORK/corpus (tiny_corpus, lib.sh), and
#   $ED  an encoder-decoder with its tokenizer (hard_model),
#   $LM  a decoder-only language model with its tokenizer, trained for 4 steps on train.en,
#   $TOK a SentencePiece tokenizer trained on train.en,
#   $BERT the tiny Hugging Face BERT folder of tests/golden/bert_tiny,
#   $S, $R  aligned English and Spanish text (the corpus's valid.*),
#   $WORK/s.ids, $WORK/t.ids  two aligned id files (targets with BOS 1 and EOS 2);
# returns non-zero (after a FAIL) if any cannot be made.
hard2_models() {
  ED=$WORK/ed.st LM=$WORK/lm.st TOK=$WORK/tok.model BERT=$ROOT/tests/golden/bert_tiny
  S=$WORK/corpus/valid.en R=$WORK/corpus/valid.es
  printf '5 6 7\n8 9\n' > "$WORK/s.ids"; printf '1 5 6 2\n1 7 2\n' > "$WORK/t.ids"
  hard_model "$ED" || { bad "tiny encoder-decoder: $(tail -3 "$WORK/hard_model.log")"; return 1; }
  "$TFM" train --arch decoder-only --text "$WORK/corpus/train.en" --save "$LM" --steps 4 --d-model 16 --n-heads 2 \
    --d-ff 32 --n-dec-layers 1 --vocab-size 500 --batch-tokens 600 --warmup 2 --eval-every 2 --max-len 48 --seed 1 \
    > /dev/null 2> "$WORK/lm.log" || { bad "tiny LM: $(tail -3 "$WORK/lm.log")"; return 1; }
  "$TFM" tokenize --train --input "$WORK/corpus/train.en" --vocab-size 400 --save-model "$TOK" 2> "$WORK/tok.log" ||
    { bad "tokenizer: $(tail -3 "$WORK/tok.log")"; return 1; }
}
