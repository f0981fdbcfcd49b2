#!/usr/bin/env bash
# tfm serve with the Hugging Face Marian folder of tests/fixtures/marian (docs/MARIAN.md): a folder
# that is not BERT loads by its format and serves LibreTranslate's /translate, answering what
# tfm translate answers (the greedy reference of transformers' generate); and the NLLB folder of
# tests/fixtures/nllb with its pair in NLLB's codes (below).
set -u
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/serve_lib.sh"
M=$ROOT/tests/fixtures/marian
src=$(sed -n 1p "$M/ref/dec_src.txt")
want_text=$(sed -n 1p "$M/ref/greedy.txt")
if start marian --model "$M@en:es"; then
  check "the folder is a translation model" grep -q "translation en->es" "$WORK/marian.log"
  post /translate "$(jq -n --arg q "$src" '{q: $q, source: "en", target: "es"}')"
  want "/translate = the greedy reference" 200 ".translatedText == \"$want_text\""
  stop_server marian "$SPID"
fi

# the NLLB folder of tests/fixtures/nllb (docs/NLLB.md): its pair in NLLB's codes, DIR@eng_Latn:spa_Latn;
# /languages lists those codes; /translate with them answers tfm translate's greedy text (the
# golden transformers' text); the same folder twice (a link: another name) with another target
# code starts its outputs with that code (fra_Latn); an unknown code or --tgt-lang stop it at startup
N=$ROOT/tests/fixtures/nllb G=$ROOT/tests/golden/nllb
ln -s "$N" "$WORK/nllb_fra"
nsrc=$(sed -n 1p "$G/sentences.txt")
if start nllb --model "$N@eng_Latn:spa_Latn" --model "$WORK/nllb_fra@eng_Latn:fra_Latn" --beam 1 --max-len-a 0 --max-len-b 60; then
  req GET /languages
  want "NLLB: /languages in NLLB's codes" 200 '. == [{"code": "eng_Latn", "name": "eng_Latn", "targets": ["spa_Latn", "fra_Latn"]}]'
  post /translate "$(jq -n --arg q "$nsrc" '{q: $q, source: "eng_Latn", target: "spa_Latn"}')"
  want "NLLB: /translate eng_Latn->spa_Latn = transformers' greedy text" 200 ".translatedText == $(sed -n 1p "$G/greedy.txt" | jq -R .)"
  post /translate "$(jq -n --arg q "$nsrc" '{q: $q, source: "eng_Latn", target: "fra_Latn"}')"
  want "NLLB: /translate eng_Latn->fra_Latn = transformers' greedy text" 200 ".translatedText == $(sed -n 1p "$G/greedy_fra.txt" | jq -R .)"
  stop_server nllb "$SPID"
fi
expect_fail "NLLB: an unknown code" 1 "deu_Latn" "$TFM" serve --port 0 --model "$N@eng_Latn:deu_Latn"
expect_fail "serve --tgt-lang" 2 "M@SRC:TGT" "$TFM" serve --port 0 --model "$N@eng_Latn:spa_Latn" --tgt-lang spa_Latn
finish marian_serve
