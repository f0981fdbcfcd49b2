#!/usr/bin/env bash
# Issue 12, kind 5: `tfm eval` and `tfm bleu` validate hypotheses and references with one function
# (tfm_bleu_check_segments): given the same bad files (eval's --src in the place of bleu's --hyp),
# both exit 1 with the same message — the first file's role word aside ("source" / "hypothesis") —
# and eval refuses before decoding. Inputs: two empty files, one empty, counts that differ either
# way, invalid UTF-8 (lone continuation, overlong, surrogate, truncated) in either file, NUL bytes.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hard_lib.sh"

M=$WORK/m.safetensors
hard_model "$M" || { bad "tiny model: $(tail -3 "$WORK/hard_model.log")"; finish hard_validation; exit 1; }
F=$WORK/f
mkdir -p "$F"
: > "$F/empty"
printf 'In the beginning.\nAnd God said.\nJesus wept.\n' > "$F/three"
printf 'Y dijo Dios.\nJesus lloro.\n' > "$F/two"
printf 'Y dijo Dios.\nJesus lloro.\nEn el principio.\n' > "$F/three_ref"
printf 'Y dijo.\nJesus.\nEn el \x80 principio.\n' > "$F/bad_cont"      # line 3: a lone continuation byte
printf 'Y dijo.\n\xc0\xafJesus.\nEn.\n' > "$F/bad_overlong"             # line 2: overlong "/"
printf '\xed\xa0\x80 Y dijo.\nJesus.\nEn.\n' > "$F/bad_surrogate"       # line 1: U+D800
printf 'Y dijo.\nJesus.\nEn el \xe2\x82\n' > "$F/bad_truncated"         # line 3: cut sequence
printf 'Y dijo.\nJe\0sus.\nEn.\n' > "$F/nul"                            # line 2: NUL byte

# same_refusal LABEL FIRST REF: bleu --hyp FIRST --ref REF and eval --src FIRST --ref REF agree
same_refusal() {
  local label=$1 first=$2 ref=$3 eb ee rcb rce
  eb=$("$TFM" bleu --hyp "$first" --ref "$ref" 2>&1 >/dev/null); rcb=$?
  ee=$("$TFM" eval --model "$M" --src "$first" --ref "$ref" 2>&1 >/dev/null); rce=$?
  [ "$rcb" -eq 1 ] && [ "$rce" -eq 1 ] && ok || bad "$label: exit codes bleu $rcb, eval $rce, want 1 and 1"
  eb=${eb#tfm bleu: error: }
  ee=${ee#tfm eval: error: }
  [ -n "$eb" ] && [ "$eb" = "${ee//source file/hypothesis file}" ] && ok ||
    bad "$label: messages differ: bleu '$eb', eval '$ee'"
  has_text_ "sentences/s" "$ee" && bad "$label: eval decoded before refusing" || ok
  no_crash "$label" "$eb$ee"
  echo "$label: $eb"
}
same_refusal "two empty files" "$F/empty" "$F/empty"
has_text_ "nothing to score" "$("$TFM" eval --model "$M" --src "$F/empty" --ref "$F/empty" 2>&1)" && ok ||
  bad "eval on empty files does not refuse as sacreBLEU does"
same_refusal "empty first file" "$F/empty" "$F/three_ref"
same_refusal "empty reference" "$F/three" "$F/empty"
same_refusal "3 vs 2 lines" "$F/three" "$F/two"
same_refusal "2 vs 3 lines" "$F/two" "$F/three_ref"
for bad in bad_cont bad_overlong bad_surrogate bad_truncated nul; do
  same_refusal "$bad in the reference" "$F/three" "$F/$bad"
  same_refusal "$bad in the first file" "$F/$bad" "$F/three_ref"
done
# the messages name file and line
err=$("$TFM" eval --model "$M" --src "$F/three" --ref "$F/bad_overlong" 2>&1)
has_text_ "$F/bad_overlong:2: invalid UTF-8" "$err" && ok || bad "no file:line in '$err'"
err=$("$TFM" eval --model "$M" --src "$F/bad_surrogate" --ref "$F/three_ref" 2>&1)
has_text_ "$F/bad_surrogate:1: invalid UTF-8 at byte column 1 (byte 0xED) in the source file" "$err" && ok ||
  bad "no file:line in '$err'"
# and good files pass both
expect_ok "bleu on good files" "$TFM" bleu --hyp "$F/three" --ref "$F/three_ref"
expect_ok "eval on good files" "$TFM" eval --model "$M" --src "$F/three" --ref "$F/three_ref"

finish hard_validation
