#!/usr/bin/env bash
# Issue 33, kind 7: no output may be the same file as an input. For every command with an input and
# an output path, and every such pair of flags, the output is given as the input's own path, as a
# symlink to it and as a hard link to it: exit 1 before any work, a message naming both flags, and
# the input byte-identical afterwards (before, `tfm eval --ref ref.es --output ref.es` exited 0 with
# ref.es holding the hypotheses). Two outputs naming one file are refused too; `--resume R --save R`
# (going on in place) still works. A table: a new command or flag is covered by adding a row.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hard_lib.sh"
source "$(dirname "$0")/hard2_lib.sh"
hard2_models || { finish hard_same_file; exit 1; }
cp -r "$BERT" "$WORK/bert"
SMALL=(--steps 1 --d-model 16 --n-heads 2 --d-ff 32 --n-dec-layers 1 --vocab-size 500 --max-len 48 --batch-tokens 600)

# row IN_FLAG OUT_FLAG IN ARGS...: ARGS run with @OUT replaced by the output, for each of: IN itself,
# a symlink to IN, a hard link to IN (made beside it).
row() {
  local in_flag=$1 out_flag=$2 in=$3
  shift 3
  local how out err rc a args
  cp "$in" "$WORK/before"
  for how in same symlink hardlink; do
    case $how in
      same) out=$in ;;
      symlink) out=$WORK/link.$RANDOM; ln -s "$in" "$out" ;;
      hardlink) out=$WORK/hard.$RANDOM; ln "$in" "$out" ;;
    esac
    args=()
    for a in "$@"; do [ "$a" = @OUT ] && args+=("$out") || args+=("$a"); done
    local label="${args[0]} $in_flag -> $out_flag ($how)"
    err=$("$TFM" "${args[@]}" 2>&1 > /dev/null)
    rc=$?
    [ "$rc" -eq 1 ] && ok || bad "$label: exit $rc, want 1 (${err:0:300})"
    has_text_ "$out_flag $out is the same file as $in_flag" "$err" && ok || bad "$label: message: ${err:0:300}"
    cmp -s "$in" "$WORK/before" && ok || bad "$label: the input changed"
    no_crash "$label" "$err"
    [ "$how" = same ] || rm -f "$out"
  done
}

cp "$S" "$WORK/in.txt"; cp "$R" "$WORK/ref.txt"; cp "$ED" "$WORK/m.st"; cp "$TOK" "$WORK/t.model"
cp "$WORK/corpus/train.en" "$WORK/text.txt"
row --input --output "$WORK/in.txt" translate --model "$ED" --input "$WORK/in.txt" --output @OUT
row --model --output "$WORK/m.st" translate --model "$WORK/m.st" --input "$S" --output @OUT
row --src --output "$WORK/in.txt" eval --model "$ED" --src "$WORK/in.txt" --ref "$R" --output @OUT
row --ref --output "$WORK/ref.txt" eval --model "$ED" --src "$S" --ref "$WORK/ref.txt" --output @OUT
row --model --output "$WORK/m.st" eval --model "$WORK/m.st" --src "$S" --ref "$R" --output @OUT
row --src-ids --dump-logits "$WORK/s.ids" score --model "$ED" --src-ids "$WORK/s.ids" --tgt-ids "$WORK/t.ids" --dump-logits @OUT
row --tgt-ids --dump-logits "$WORK/t.ids" score --model "$ED" --src-ids "$WORK/s.ids" --tgt-ids "$WORK/t.ids" --dump-logits @OUT
row --model --dump-logits "$WORK/m.st" score --model "$WORK/m.st" --src-ids "$WORK/s.ids" --tgt-ids "$WORK/t.ids" --dump-logits @OUT
row --input --output "$WORK/in.txt" tokenize --encode --tokenizer "$TOK" --input "$WORK/in.txt" --output @OUT
row --tokenizer --output "$WORK/t.model" tokenize --encode --tokenizer "$WORK/t.model" --input "$S" --output @OUT
row --input --output "$WORK/s.ids" tokenize --decode --tokenizer "$TOK" --input "$WORK/s.ids" --output @OUT
row --input --output "$WORK/in.txt" tokenize --encode --wordpiece "$BERT/vocab.txt" --input "$WORK/in.txt" --output @OUT
row --wordpiece --output "$WORK/bert/vocab.txt" tokenize --encode --wordpiece "$WORK/bert/vocab.txt" --input "$S" --output @OUT
row --input --save-model "$WORK/text.txt" tokenize --train --input "$S,$WORK/text.txt" --vocab-size 400 --save-model @OUT
row --input --npy "$WORK/in.txt" embed --model "$BERT" --input "$WORK/in.txt" --npy @OUT
row --model --npy "$WORK/bert/model.safetensors" embed --model "$WORK/bert/model.safetensors" --input "$S" --npy @OUT
row --model --npy "$WORK/bert/model.safetensors" embed --model "$WORK/bert" --input "$S" --npy @OUT
row --model --npy "$WORK/bert/vocab.txt" embed --model "$WORK/bert" --input "$S" --npy @OUT
row --init --save "$WORK/m.st" train --init "$WORK/m.st" --src-ids "$WORK/s.ids" --tgt-ids "$WORK/t.ids" --steps 1 --save @OUT
row --src-ids --save "$WORK/s.ids" train --init "$ED" --src-ids "$WORK/s.ids" --tgt-ids "$WORK/t.ids" --steps 1 --save @OUT
row --tgt-ids --save "$WORK/t.ids" train --init "$ED" --src-ids "$WORK/s.ids" --tgt-ids "$WORK/t.ids" --steps 1 --save @OUT
row --data --save "$WORK/corpus/train.en" train --data "$WORK/corpus" --save @OUT "${SMALL[@]}" --n-enc-layers 1
row --data --save-best "$WORK/corpus/valid.es" train --data "$WORK/corpus" --save "$WORK/x.st" --save-best @OUT "${SMALL[@]}" --n-enc-layers 1
row --init --save "$WORK/m.st" train --data "$WORK/corpus" --init "$WORK/m.st" --save @OUT --steps 1
row --text --save "$WORK/text.txt" train --arch decoder-only --text "$S,$WORK/text.txt" --save @OUT "${SMALL[@]}"
row --valid-text --save-best "$WORK/in.txt" train --arch decoder-only --text "$R" --valid-text "$WORK/in.txt" --save "$WORK/x.st" --save-best @OUT "${SMALL[@]}"
row --resume --save-best "$WORK/m.st" train --data "$WORK/corpus" --resume "$WORK/m.st" --save "$WORK/x.st" --save-best @OUT --steps 1

# two outputs that name one file, existing or not yet
expect_fail "--save X --save-best ./X (neither exists)" 1 "is the same file as --save" \
  "$TFM" train --data "$WORK/corpus" --save "$WORK/new.st" --save-best "$WORK/./new.st" "${SMALL[@]}" --n-enc-layers 1
check "nothing written" test ! -e "$WORK/new.st"
cp "$ED" "$WORK/old.st"; ln -s "$WORK/old.st" "$WORK/old.link"
expect_fail "--save X --save-best link-to-X" 1 "is the same file as --save" \
  "$TFM" train --data "$WORK/corpus" --save "$WORK/old.st" --save-best "$WORK/old.link" "${SMALL[@]}" --n-enc-layers 1
# what stays allowed: going on in place with --resume; standard input and output; devices
"$TFM" train --data "$WORK/corpus" --save "$WORK/r.st" "${SMALL[@]}" --n-enc-layers 1 > /dev/null 2>&1
expect_ok "--resume R --save R" "$TFM" train --data "$WORK/corpus" --resume "$WORK/r.st" --save "$WORK/r.st" --steps 2 --batch-tokens 600
expect_ok "--input - --output -" bash -c "\"$TFM\" translate --model \"$ED\" --input - --output - < \"$S\""
ln -s /dev/null "$WORK/null"
expect_ok "--input /dev/null --output a link to /dev/null" "$TFM" tokenize --encode --tokenizer "$TOK" --input /dev/null --output "$WORK/null"
# an output that is a symlink to a file that is no input: that file is replaced, the link stays a
# link (before, the rename turned the link itself into a regular file)
echo old > "$WORK/real.txt"; ln -s "$WORK/real.txt" "$WORK/out.link"
expect_ok "--output a link to another file" "$TFM" tokenize --encode --tokenizer "$TOK" --input "$S" --output "$WORK/out.link"
check "the link stays a link" test -L "$WORK/out.link"
check "the file it names holds the output" test "$(head -1 "$WORK/real.txt")" != old
check "no temporary file left" test -z "$(find "$WORK" -name '*.tmp.*')"

finish hard_same_file
