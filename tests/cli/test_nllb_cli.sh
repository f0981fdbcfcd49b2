#!/usr/bin/env bash
# tfm translate and tfm eval on the tiny NLLB / M2M100 folder of tests/fixtures/nllb
# (tests/reference/make_nllb_golden.py, docs/NLLB.md): greedy and beam-4 translations identical
# to transformers' generate(forced_bos_token_id=spa_Latn) text, tfm eval's BLEU 100 against the
# greedy text, --list-langs, and the errors of an
# NLLB folder: an unknown language code (the message says how to list the valid ones), a missing
# --tgt-lang, a folder without sentencepiece.bpe.model, one with only pytorch_model.bin.
set -u
source "$(dirname "$0")/lib.sh"
M=$ROOT/tests/fixtures/nllb
G=$ROOT/tests/golden/nllb
L=(--src-lang eng_Latn --tgt-lang spa_Latn --max-len-a 0 --max-len-b 60)

"$TFM" translate --model "$M" "${L[@]}" --input "$G/sentences.txt" > "$WORK/greedy.txt" 2> "$WORK/err"
check "greedy = transformers' text ($(head -c 300 "$WORK/err"))" cmp -s "$WORK/greedy.txt" "$G/greedy.txt"
"$TFM" translate --model "$M" "${L[@]}" --beam 4 --lenpen 1.0 --input "$G/sentences.txt" > "$WORK/beam4.txt" 2> "$WORK/err"
check "beam 4 = transformers' text ($(head -c 300 "$WORK/err"))" cmp -s "$WORK/beam4.txt" "$G/beam4.txt"
"$TFM" translate --model "$M" "${L[@]}" --beam 4 --batch-size 1 < "$G/sentences.txt" > "$WORK/beam4b1.txt" 2>/dev/null
# fra_Latn, never first in the model's training: the forced code decides the output
"$TFM" translate --model "$M" "${L[@]}" --tgt-lang fra_Latn --beam 4 --input "$G/sentences.txt" > "$WORK/fra.txt" 2>/dev/null
check "--tgt-lang fra_Latn, beam 4 = transformers' text" cmp -s "$WORK/fra.txt" "$G/beam4_fra.txt"
check "beam 4, one sentence a batch, stdin: the same" cmp -s "$WORK/beam4b1.txt" "$G/beam4.txt"

bleu=$("$TFM" eval --model "$M" "${L[@]}" --src "$G/sentences.txt" --ref "$G/greedy.txt" 2>/dev/null | head -1)
check "eval: BLEU 100 against transformers' greedy text ($bleu)" test "${bleu:0:13}" = "BLEU = 100.00"

langs=$("$TFM" translate --model "$M" --list-langs 2>&1)
check "--list-langs: the three codes with their ids ($langs)" test "$langs" = "$(cat "$G/lang_ids.txt")"

expect_fail "unknown --tgt-lang" 1 "--list-langs" "$TFM" translate --model "$M" --src-lang eng_Latn --tgt-lang deu_Latn --input "$G/sentences.txt"
expect_fail "unknown --src-lang" 1 "xx_Latn" "$TFM" translate --model "$M" --src-lang xx_Latn --tgt-lang spa_Latn --input "$G/sentences.txt"
expect_fail "no --tgt-lang" 1 "--tgt-lang" "$TFM" translate --model "$M" --src-lang eng_Latn --input "$G/sentences.txt"

mkdir -p "$WORK/nospm" "$WORK/bin"
cp "$M/config.json" "$M/model.safetensors" "$M/tokenizer_config.json" "$WORK/nospm/"
expect_fail "no sentencepiece.bpe.model" 1 "sentencepiece.bpe.model" "$TFM" translate --model "$WORK/nospm" "${L[@]}" --input "$G/sentences.txt"
cp "$M/config.json" "$M/sentencepiece.bpe.model" "$WORK/bin/"
echo "not a pickle" > "$WORK/bin/pytorch_model.bin"
expect_fail "pytorch_model.bin only" 1 "AutoModelForSeq2SeqLM" "$TFM" translate --model "$WORK/bin" "${L[@]}" --input "$G/sentences.txt"

finish test_nllb_cli
