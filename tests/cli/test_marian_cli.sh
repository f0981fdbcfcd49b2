#!/usr/bin/env bash
# tfm translate / tfm eval --model DIR on the Hugging Face Marian folder of tests/fixtures/marian
# (tests/reference/make_marian_golden.py, transformers 4.40.2): greedy and beam-4 texts identical
# to MarianMTModel.generate(num_beams=1|4, length_penalty=1.0 (beam 4 also 0.6, 2.0), early_stopping=True) on every
# fixture sentence (each ends before the length limit), in batches and one at a time, with and
# without the KV cache; --tgt-lang puts the >>xx<< prefix; eval scores the greedy output BLEU 100; an unknown --tgt-lang and a
# pickle-only folder are refused.
set -u
source "$(dirname "$0")/lib.sh"
M=$ROOT/tests/fixtures/marian
R=$M/ref
# transformers' max_length 48 counts the start token: at most 47 output tokens, EOS included
LIM=(--max-len-a 0 --max-len-b 47)

"$TFM" translate --model "$M" "${LIM[@]}" --input "$R/dec_src.txt" > "$WORK/greedy.txt" 2>/dev/null
check "greedy = generate(num_beams=1)" diff "$R/greedy.txt" "$WORK/greedy.txt"
"$TFM" translate --model "$M" "${LIM[@]}" --beam 4 --lenpen 1 --input "$R/dec_src.txt" > "$WORK/beam.txt" 2>/dev/null
check "beam 4 = generate(num_beams=4, length_penalty=1.0, early_stopping=True)" diff "$R/beam4.txt" "$WORK/beam.txt"
"$TFM" translate --model "$M" "${LIM[@]}" --beam 4 --batch-size 4 --input "$R/dec_src.txt" > "$WORK/beam1.txt" 2>/dev/null
check "beam 4, one sentence per batch" diff "$R/beam4.txt" "$WORK/beam1.txt"
# other length penalties (tests/reference/make_lenpen_golden.py): 1 and 4 of the 16 outputs change
for A in 0.6 2.0; do
    "$TFM" translate --model "$M" "${LIM[@]}" --beam 4 --lenpen "$A" --input "$R/dec_src.txt" > "$WORK/beam_lp.txt" 2>/dev/null
    check "beam 4 --lenpen $A = generate(num_beams=4, length_penalty=$A, early_stopping=True)" \
        diff "$R/beam4_lp$A.txt" "$WORK/beam_lp.txt"
done
"$TFM" translate --model "$M" "${LIM[@]}" --batch-size 1 --no-kv-cache --input "$R/dec_src.txt" \
  > "$WORK/nocache.txt" 2>/dev/null
check "greedy without the KV cache, one at a time" diff "$R/greedy.txt" "$WORK/nocache.txt"

# separate vocabularies (make_marian_golden.py --separate: vocab.json + target_vocab.json, untied)
MS=$ROOT/tests/fixtures/marian_sep
"$TFM" translate --model "$MS" "${LIM[@]}" --input "$MS/ref/dec_src.txt" > "$WORK/sep_greedy.txt" 2>/dev/null
check "separate vocabularies: greedy = generate(num_beams=1)" diff "$MS/ref/greedy.txt" "$WORK/sep_greedy.txt"
"$TFM" translate --model "$MS" "${LIM[@]}" --beam 4 --lenpen 1 --input "$MS/ref/dec_src.txt" > "$WORK/sep_beam.txt" 2>/dev/null
check "separate vocabularies: beam 4 = generate(num_beams=4)" diff "$MS/ref/beam4.txt" "$WORK/sep_beam.txt"

# --tgt-lang es: the lines that began with ">>es<< ", given without it
grep -n '^>>es<< ' "$R/dec_src.txt" | cut -d: -f1 > "$WORK/es.n"
awk 'NR == FNR { want[$1]; next } FNR in want' "$WORK/es.n" "$R/dec_src.txt" | sed 's/^>>es<< //' > "$WORK/es.src"
awk 'NR == FNR { want[$1]; next } FNR in want' "$WORK/es.n" "$R/greedy.txt" > "$WORK/es.ref"
check "some >>es<< lines" test -s "$WORK/es.src"
"$TFM" translate --model "$M" "${LIM[@]}" --tgt-lang es --input "$WORK/es.src" > "$WORK/es.got" 2>/dev/null
check "--tgt-lang es = the >>es<< prefix" diff "$WORK/es.ref" "$WORK/es.got"
expect_fail "unknown --tgt-lang" 1 "has no >>de<<" "$TFM" translate --model "$M" --tgt-lang de --input "$WORK/es.src"

# --output
"$TFM" translate --model "$M" "${LIM[@]}" --input "$R/dec_src.txt" --output "$WORK/again.txt" 2>/dev/null
check "--output" diff "$R/greedy.txt" "$WORK/again.txt"

# eval: the greedy output against itself is BLEU 100
"$TFM" eval --model "$M" "${LIM[@]}" --src "$R/dec_src.txt" --ref "$R/greedy.txt" > "$WORK/eval.txt" 2>/dev/null
check "eval: BLEU 100 against the greedy output" grep -q '^BLEU = 100.00' "$WORK/eval.txt"

# a folder with only pytorch_model.bin: refused, with the command that converts it
mkdir -p "$WORK/bin"
cp "$M/config.json" "$M/source.spm" "$M/target.spm" "$M/vocab.json" "$WORK/bin/"
printf 'not a pickle tfm reads' > "$WORK/bin/pytorch_model.bin"
expect_fail "pytorch_model.bin only" 1 "save_pretrained('$WORK/bin', safe_serialization=True)" \
  "$TFM" translate --model "$WORK/bin" --input "$WORK/es.src"
# a broken source.spm: the error names the folder's file, not a checkpoint's tokenizer.model tensor
mkdir -p "$WORK/spm"
cp "$M"/*.json "$M"/*.spm "$M/model.safetensors" "$WORK/spm/"
head -c 100 "$M/source.spm" > "$WORK/spm/source.spm"
expect_fail "truncated source.spm" 1 "tokenizer files) is not valid: source.spm: " \
  "$TFM" translate --model "$WORK/spm" --input "$WORK/es.src"
finish marian_cli
