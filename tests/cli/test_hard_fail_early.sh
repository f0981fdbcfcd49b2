#!/usr/bin/env bash
# Issue 12, kind 3: every command checks every output destination and every input before the work.
# For each command and each destination (a missing folder, a folder where the file should go, a
# path under a regular file) or missing input: non-zero exit, a message naming the path, no
# decoding (no speed report), under 2 s on a 3,000-line input (decoding it takes far longer), and
# nothing written anywhere (no file, no temporary file left).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hard_lib.sh"

M=$WORK/m.safetensors
hard_model "$M" || { bad "tiny model: $(tail -3 "$WORK/hard_model.log")"; finish hard_fail_early; exit 1; }
D=$WORK/data
mkdir -p "$D" "$WORK/a_folder"
for i in $(seq 3000); do echo "And God said, Let there be light: and there was light $i."; done > "$D/src.txt"
sed 's/.*/Y dijo Dios/' "$D/src.txt" > "$D/ref.txt"
printf '5 6 7\n8 9\n' > "$D/src.ids"; printf '1 5 6 2\n1 7 2\n' > "$D/tgt.ids"
echo "hello world" > "$D/plain.txt"
T=$WORK/t.model
"$TFM" tokenize --train --input "$WORK/corpus/train.en" --vocab-size 400 --save-model "$T" 2>/dev/null || bad "tokenizer"

# fails_early LABEL PATH CMD...: exit 1, PATH in the message, no speed report, < 2 s, no file changed
fails_early() {
  local label=$1 path=$2
  shift 2
  local before after err rc t0 t1
  before=$(cd "$WORK" && find . | sort)
  t0=$(date +%s%N)
  err=$("$@" 2>&1 >/dev/null)
  rc=$?
  t1=$(date +%s%N)
  after=$(cd "$WORK" && find . | sort)
  [ "$rc" -eq 1 ] && ok || bad "$label: exit $rc, want 1 ($err)"
  has_text_ "$path" "$err" && ok || bad "$label: the message does not name $path: $err"
  has_text_ "sentences/s" "$err" && bad "$label: decoded before failing: $err" || ok
  [ $(((t1 - t0) / 1000000)) -lt 2000 ] && ok || bad "$label: took $(((t1 - t0) / 1000000)) ms"
  [ "$before" = "$after" ] && ok || bad "$label: files changed: $(diff <(echo "$before") <(echo "$after"))"
  no_crash "$label" "$err"
}

for dest in "$WORK/no_such_dir/out.txt" "$WORK/a_folder" "$D/plain.txt/out.txt"; do
  fails_early "translate --output $dest" "$dest" "$TFM" translate --model "$M" --input "$D/src.txt" --output "$dest"
  fails_early "eval --output $dest" "$dest" "$TFM" eval --model "$M" --src "$D/src.txt" --ref "$D/ref.txt" --output "$dest"
  fails_early "score --dump-logits $dest" "$dest" "$TFM" score --model "$M" --src-ids "$D/src.ids" --tgt-ids "$D/tgt.ids" --dump-logits "$dest"
  fails_early "tokenize --encode --output $dest" "$dest" "$TFM" tokenize --encode --tokenizer "$T" --input "$D/src.txt" --output "$dest"
  fails_early "tokenize --decode --output $dest" "$dest" "$TFM" tokenize --decode --tokenizer "$T" --input "$D/src.ids" --output "$dest"
  fails_early "tokenize --train --save-model $dest" "$dest" "$TFM" tokenize --train --input "$WORK/corpus/train.en" --vocab-size 400 --save-model "$dest"
  fails_early "train --save $dest" "$dest" "$TFM" train --data "$WORK/corpus" --save "$dest" --steps 1 --d-model 16 --n-heads 2 --d-ff 32 --n-enc-layers 1 --n-dec-layers 1 --vocab-size 500 --max-len 48
  fails_early "train --save-best $dest" "$dest" "$TFM" train --data "$WORK/corpus" --save "$WORK/x.st" --save-best "$dest" --steps 1 --d-model 16 --n-heads 2 --d-ff 32 --n-enc-layers 1 --n-dec-layers 1 --vocab-size 500 --max-len 48
done
# missing inputs: named before the model is loaded or anything decoded
nf=$WORK/no_such_input.txt
fails_early "translate --input missing" "$nf" "$TFM" translate --model "$M" --input "$nf" --output "$WORK/o.txt"
fails_early "eval --src missing" "$nf" "$TFM" eval --model "$M" --src "$nf" --ref "$D/ref.txt"
fails_early "eval --ref missing" "$nf" "$TFM" eval --model "$M" --src "$D/src.txt" --ref "$nf"
fails_early "bleu --hyp missing" "$nf" "$TFM" bleu --hyp "$nf" --ref "$D/ref.txt"
fails_early "bleu --ref missing" "$nf" "$TFM" bleu --hyp "$D/src.txt" --ref "$nf"
fails_early "tokenize --train, second input missing" "$nf" "$TFM" tokenize --train --input "$WORK/corpus/train.en,$nf" --vocab-size 400 --save-model "$WORK/t2.model"
fails_early "score --tgt-ids missing" "$nf" "$TFM" score --model "$M" --src-ids "$D/src.ids" --tgt-ids "$nf"

finish hard_fail_early
