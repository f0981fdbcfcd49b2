#!/usr/bin/env bash
# tfm serve with the Hugging Face Marian folder of tests/fixtures/marian (docs/MARIAN.md): a folder
# that is not BERT loads by its format and serves LibreTranslate's /translate, answering what
# tfm translate answers (the greedy reference of transformers' generate).
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
finish marian_serve
