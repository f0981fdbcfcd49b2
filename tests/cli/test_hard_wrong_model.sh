#!/usr/bin/env bash
# Issue 33, kind 10: a model of the wrong architecture is refused before any output or work, with a
# message that says what the model is and which command runs it. Every command that takes a model,
# given each architecture it cannot run: an encoder-only Hugging Face BERT folder (and its
# model.safetensors), an encoder-decoder, a decoder-only LM. Exit non-zero, nothing on standard
# output (before, tfm generate printed the prompt first), no file written, and for BERT "is an
# encoder-only model (BERT) ... use tfm embed" (before: "has no tokenizer", or SentencePiece's
# "Vocabulary size too high" after reading the corpus). A table: a new command is a new row.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hard_lib.sh"
source "$(dirname "$0")/hard2_lib.sh"
hard2_models || { finish hard_wrong_model; exit 1; }
O=$WORK/out/o
mkdir -p "$WORK/out"

# row WANT MODEL ARGS...: ARGS with @M replaced by MODEL must fail naming WANT, print nothing on
# standard output and write nothing in $WORK/out.
row() {
  local want=$1 model=$2 a
  shift 2
  local args=()
  for a in "$@"; do [ "$a" = @M ] && args+=("$model") || args+=("$a"); done
  local label="${args[0]} --model ${model#"$WORK"/}"
  local err rc
  err=$("$TFM" "${args[@]}" 2> "$WORK/err" > "$WORK/stdout")
  rc=$?
  err=$(cat "$WORK/err")
  [ "$rc" -ne 0 ] && ok || bad "$label: exit 0"
  has_text_ "$want" "$err" && ok || bad "$label: message lacks '$want': ${err:0:300}"
  [ ! -s "$WORK/stdout" ] && ok || bad "$label: printed before its error: $(head -c 200 "$WORK/stdout")"
  [ -z "$(ls -A "$WORK/out")" ] && ok || bad "$label: wrote $(ls "$WORK/out")"
  no_crash "$label" "$err"
}

BERT_SAYS="is an encoder-only model (BERT)"
for bert in "$BERT" "$BERT/model.safetensors"; do
  row "$BERT_SAYS" "$bert" translate --model @M --input "$S" --output "$O"
  row "$BERT_SAYS" "$bert" eval --model @M --src "$S" --ref "$R" --output "$O"
  row "$BERT_SAYS" "$bert" generate --model @M --prompt "And God"
  row "$BERT_SAYS" "$bert" perplexity --model @M --text "$S"
  row "$BERT_SAYS" "$bert" score --model @M --src-ids "$WORK/s.ids" --tgt-ids "$WORK/t.ids" --dump-logits "$O"
  row "$BERT_SAYS" "$bert" train --data "$WORK/corpus" --init @M --save "$O" --steps 1
  row "$BERT_SAYS" "$bert" train --arch decoder-only --text "$S" --init @M --save "$O" --steps 1
  row "$BERT_SAYS" "$bert" train --init @M --src-ids "$WORK/s.ids" --tgt-ids "$WORK/t.ids" --steps 1 --save "$O"
done
row "use tfm embed" "$BERT" translate --model @M --input "$S"
row "use tfm embed" "$BERT" train --data "$WORK/corpus" --init @M --save "$O" --steps 1
row "is an encoder-decoder model: tfm generate needs a decoder-only model" "$ED" generate --model @M --prompt "And God"
row "is an encoder-decoder model: tfm perplexity needs a decoder-only model" "$ED" perplexity --model @M --text "$S"
row "is a decoder-only model: tfm translate needs an encoder-decoder model" "$LM" translate --model @M --input "$S" --output "$O"
row "is a decoder-only model: tfm eval needs an encoder-decoder model" "$LM" eval --model @M --src "$S" --ref "$R" --output "$O"
row "a decoder-only model does not embed" "$LM" embed --model @M --input "$S" --npy "$O"
row "an encoder-decoder model does not embed" "$ED" similarity --model @M --query a --text b

finish hard_wrong_model
