#!/usr/bin/env bash
# study/pe_study.sh end to end on a tiny budget (docs/STUDY.md): a corpus made from
# tests/fixtures/tok_train.txt with verse references (20 verses a chapter, "Ruth 3" held out), a
# 16-wide model, 20 steps a run, every default encoding with 2 seeds. Checks: the held-out
# chapter is absent from every training file; one report row per encoding, every translation cell
# a number; `learned` is N/A past its table (2C..16C) and a number at 1C, every other encoding a
# number at every length; the five figures decode as PNGs of the stated 1000 x 550; and resuming:
# a first pass stopped early (tfm train --time-limit) leaves checkpoints and exits 1, the second
# pass resumes them and ends with the same model as a run made in one go.
# tfm-test: slow (about 30 s of CPU: 44 tiny runs and their decoding; it needs no corpus)
source "$(dirname "$0")/lib.sh"
command -v /usr/bin/python3 > /dev/null && /usr/bin/python3 -c "import matplotlib" 2> /dev/null ||
  skip "python3-matplotlib is missing (scripts/install-deps installs it)"
export OMP_NUM_THREADS=1
C=$WORK/corpus
mkdir -p "$C"
fix=$ROOT/tests/fixtures/tok_train.txt
split=$(grep -n '^Y ACONTECI' "$fix" | head -1 | cut -d: -f1)
tail -n +"$split" "$fix" > "$C/train.es"
head -n "$(wc -l < "$C/train.es")" "$fix" > "$C/train.en"
awk '{ printf "Ruth %d:%d\n", int((NR - 1) / 20) + 1, (NR - 1) % 20 + 1 }' "$C/train.en" > "$C/train.ref"
export D_MODEL=16 N_HEADS=2 N_LAYERS=1 D_FF=32 BATCH_TOKENS=1500 VOCAB=400 CONTEXT=16 MIN_LONG=5 HELDOUT="Ruth 3"
export SAVE_EVERY=5 TFM
O=$WORK/study
STUDY=("$ROOT/study/pe_study.sh" -d "$C" -o "$O" -s 20 -l 20)

# pass 1: every run stopped after a few steps (a resumable checkpoint), so the study is unfinished
if PE_STUDY_TRAIN_FLAGS="--time-limit 0.0005" "${STUDY[@]}" > "$WORK/p1.out" 2> "$WORK/p1.err"; then
  bad "an unfinished study exited 0"
else
  ok
fi
grep -q "training stopped at step" "$WORK/p1.err" && ok || bad "pass 1 stopped no run: $(tail -3 "$WORK/p1.err")"
# pass 2: resumes them
"${STUDY[@]}" > "$WORK/p2.out" 2> "$WORK/p2.err" && ok || bad "pass 2: $(grep -v '^== .*done$' "$WORK/p2.err" | tail -5)"
grep -q ": resuming " "$WORK/p2.err" && ok || bad "pass 2 resumed nothing"
[ "$(ls "$O"/runs/*/*/*/eval.done | wc -l)" = 44 ] && ok || bad "$(ls "$O"/runs/*/*/*/eval.done | wc -l) of 44 runs finished"

# the split: no verse of the held-out chapter in any training file
grep -c . "$O/data/test/single.en" | grep -qx 20 && ok || bad "held-out verses: $(wc -l < "$O/data/test/single.en"), want 20"
held=$(sed -n '41,60p' "$C/train.en")
if grep -Fxq -f <(echo "$held") "$O/data/mt/train.en"; then bad "a held-out verse is in mt/train.en"; else ok; fi
first=$(sed -n '41p' "$C/train.en" | cut -d' ' -f1-8)
if grep -Fq "$first" "$O/data/lm/train.txt"; then bad "held-out text in lm/train.txt"; else ok; fi
L=$(sed -n 's/^L=//p' "$O/data/params.sh")
awk -v L="$L" '{ if (NF > L) exit 1 }' <("$TFM" tokenize --encode --tokenizer "$O/data/tok.model" --input "$O/data/mt/train.en") &&
  ok || bad "a training source is longer than L = $L"
[ "$(awk -v L="$L" '$1 > L' "$O/data/test/single.len" | wc -l)" -ge 5 ] && ok || bad "fewer than MIN_LONG held-out sources past L"

# the report: one row per encoding
csv=$O/report.csv
want="none sinusoidal sinusoidal:pe-zero-pad sinusoidal:pe-scale learned floater shaw t5 rope rope:rope-pairing=half alibi"
[ "$(tail -n +2 "$csv" | cut -d, -f1 | tr '\n' ' ')" = "$want " ] && ok || bad "report rows: $(cut -d, -f1 "$csv" | tr '\n' ' ')"
/usr/bin/python3 - "$csv" << 'PY' && ok || bad "report cells (numbers; learned N/A past its table)"
import csv, re, sys
num = re.compile(r"^-?[0-9.]+( ± [0-9.]+)?$")
for row in csv.DictReader(open(sys.argv[1])):
    assert row["mt_seeds"] == "2" and row["lm_seeds"] == "2", row
    for k in ("mt_bleu", "mt_short", "mt_long", "mt_cat2", "mt_cat4", "mt_cat8", "ppl_1C"):
        assert num.match(row[k]), (row["encoding"], k, row[k])
    for k in ("ppl_2C", "ppl_4C", "ppl_8C", "ppl_16C"):
        if row["encoding"] == "learned":
            assert row[k] == "N/A", (k, row[k])
        else:
            assert num.match(row[k]), (row["encoding"], k, row[k])
PY
grep -q "| learned | 2 | [0-9.]* ± [0-9.]* | N/A | N/A | N/A | N/A |" "$O/report.md" && ok || bad "report.md: learned's LM row"
for f in bleu_vs_length lm_ppl_vs_length lm_loss_vs_position sinusoid_table sinusoid_dot; do
  p=$O/fig/$f.png
  dims=$(od -An -tu1 -j16 -N8 "$p" 2> /dev/null | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4, $5 * 16777216 + $6 * 65536 + $7 * 256 + $8 }')
  [ "$(head -c 8 "$p" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] && [ "$dims" = "1000 550" ] && ok ||
    bad "$f.png: not a 1000 x 550 PNG ($dims)"
  /usr/bin/python3 -c "import sys, matplotlib.image as m; s = m.imread(sys.argv[1]).shape; sys.exit(s[:2] != (550, 1000))" "$p" &&
    ok || bad "$f.png does not decode to 1000 x 550"
done

# resuming gives what one uninterrupted run gives: redo one run in one go and compare
cp -r "$O" "$WORK/again"
rm -rf "$WORK/again/runs/mt/alibi/seed1" "$WORK/again/runs/lm/learned/seed2"
"$ROOT/study/pe_study.sh" -d "$C" -o "$WORK/again" -s 20 -l 20 > /dev/null 2> "$WORK/again.err" || bad "redo: $(tail -3 "$WORK/again.err")"
grep -q "resuming" "$WORK/again.err" && bad "the redone runs resumed something" || ok
cmp -s "$O/runs/mt/alibi/seed1/model.st" "$WORK/again/runs/mt/alibi/seed1/model.st" &&
  cmp -s "$O/runs/mt/alibi/seed1/single.hyp" "$WORK/again/runs/mt/alibi/seed1/single.hyp" && ok ||
  bad "the resumed translation run differs from one made in one go"
cmp -s "$O/runs/lm/learned/seed2/model.st" "$WORK/again/runs/lm/learned/seed2/model.st" && ok ||
  bad "the resumed language-model run differs from one made in one go"
# another budget in the same folder is refused
expect_fail "other settings" 2 "was started with other settings" "$ROOT/study/pe_study.sh" -d "$C" -o "$O" -s 30 -l 20
# and so is another corpus (-d): the splits in $O/data were made from the first one
cp -r "$C" "$WORK/c2"
expect_fail "another -d" 2 "was started with other settings" "$ROOT/study/pe_study.sh" -d "$WORK/c2" -o "$O" -s 20 -l 20
finish pe_study
