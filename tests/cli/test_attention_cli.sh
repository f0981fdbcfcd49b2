#!/usr/bin/env bash
# tfm attention (docs/STUDY.md, "Attention maps"): on small models with a tokenizer made by tfm
# tokenize (tfm init --tokenizer): JSON and CSV hold the same weights; every printed row sums to 1
# (within 1e-5); the decoder's future keys are 0; the maps' sizes match the subword labels; --png
# writes one PNG per layer and head whose header holds the size tfm states (and, where matplotlib
# is installed, decodes to it); an encoder-only and a decoder-only model give their own maps; bad
# input fails with a clear message. The values against an independent computation from the
# weights: tests/unit/infer/test_attention_maps.c.
source "$(dirname "$0")/lib.sh"
export OMP_NUM_THREADS=2
# under test-asan: fontconfig (through cairo) keeps caches until exit (tests/fixtures/cairo/lsan.supp)
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/tests/fixtures/cairo/lsan.supp}
command -v jq > /dev/null || skip "jq is missing (scripts/install-deps installs it)"
tiny_corpus "$WORK/c" || { finish attention_cli; exit 1; }
T=$TFM
"$T" tokenize --train --input "$WORK/c/train.en,$WORK/c/train.es" --vocab-size 400 --save-model "$WORK/tok.model" \
  2> /dev/null || bad "tokenize --train"
SHAPE=(--d-model 16 --n-heads 2 --d-ff 32 --max-len 40)
"$T" init --tokenizer "$WORK/tok.model" "${SHAPE[@]}" --n-enc-layers 2 --n-dec-layers 2 --pe rope \
  --save "$WORK/ed.st" 2> /dev/null || bad "init encoder-decoder"
"$T" init --tokenizer "$WORK/tok.model" "${SHAPE[@]}" --arch decoder-only --n-dec-layers 2 --pe alibi \
  --save "$WORK/lm.st" 2> /dev/null || bad "init decoder-only"
"$T" init --tokenizer "$WORK/tok.model" "${SHAPE[@]}" --arch encoder-only --n-enc-layers 1 \
  --save "$WORK/eo.st" 2> /dev/null || bad "init encoder-only"
SRC="In the days when the judges judged"
TGT="En los días que gobernaban"

# rows_ok FILE.json: every row of every map sums to 1 within 1e-5, future keys of decoder_self are 0,
# and each map is |queries| x |keys| of the labels
rows_ok() {
  jq -e '. as $r
    | def lab(n): if n == "source" then $r.src_tokens else $r.tgt_tokens end;
      [.maps[] | . as $m
       | (.weights | length) == (lab($m.queries) | length)
         and all(.weights[]; length == (lab($m.keys) | length))
         and all(.weights[]; (add - 1 | fabs) <= 1e-5)
         and (if .kind == "decoder_self" then
                all(range(0; .weights | length) as $q | .weights[$q][$q + 1:][]; . == 0) else true end)]
    | length > 0 and all' "$1" > /dev/null
}

"$T" attention --model "$WORK/ed.st" --src "$SRC" --tgt "$TGT" --output "$WORK/ed.json" 2> "$WORK/err" ||
  bad "attention json: $(cat "$WORK/err")"
rows_ok "$WORK/ed.json" && ok || bad "encoder-decoder maps: a row does not sum to 1, a future key is not 0, or a size is off"
[ "$(jq '.maps | length' "$WORK/ed.json")" = 12 ] && ok || bad "want 2 heads x (2 encoder + 2 decoder + 2 cross) = 12 maps"
[ "$(jq -r '.tgt_tokens[0]' "$WORK/ed.json")" = "<s>" ] && ok || bad "the decoder input does not start with BOS"
[ "$(jq -r '.tgt_from' "$WORK/ed.json")" = "--tgt" ] && ok || bad "tgt_from"
# CSV: the same numbers, one row per cell; each (kind, layer, head, query) sums to 1
"$T" attention --model "$WORK/ed.st" --src "$SRC" --tgt "$TGT" --format csv > "$WORK/ed.csv" 2> /dev/null || bad "csv"
head -1 "$WORK/ed.csv" | grep -q '^kind,layer,head,query,key,query_token,key_token,weight$' && ok || bad "csv header"
jq -r '.maps[] | . as $m | range(0; .weights | length) as $q | range(0; .weights[$q] | length) as $k
       | "\($m.kind),\($m.layer),\($m.head),\($q),\($k),\(.weights[$q][$k])"' "$WORK/ed.json" > "$WORK/from_json"
# the CSV without its token columns (quoted, may hold commas), compared as numbers
awk -F, 'NR > 1 { print $1 "," $2 "," $3 "," $4 "," $5 "," $NF }' "$WORK/ed.csv" > "$WORK/from_csv"
paste -d, "$WORK/from_json" "$WORK/from_csv" |
  awk -F, '{ for (i = 1; i <= 5; i++) if ($i != $(i + 6)) bad = 1; d = $6 - $12; if (d * d > 1e-16) bad = 1 }
           END { exit bad || NR == 0 }' && ok || bad "JSON and CSV disagree"
# the CSV's token columns: the query's and the key's subwords of the JSON's labels (RFC 4180 quoting)
jq -r 'def q: "\"" + gsub("\""; "\"\"") + "\"";
       . as $r | def lab(n): if n == "source" then $r.src_tokens else $r.tgt_tokens end;
       .maps[] | . as $m | range(0; .weights | length) as $q | range(0; .weights[$q] | length) as $k
       | "\($m.kind),\($m.layer),\($m.head),\($q),\($k),\(lab($m.queries)[$q] | q),\(lab($m.keys)[$k] | q)"' \
  "$WORK/ed.json" > "$WORK/labels_json"
sed '1d; s/,[^,]*$//' "$WORK/ed.csv" | cmp -s - "$WORK/labels_json" && ok ||
  bad "the CSV's query_token/key_token columns are not the JSON's labels of that query and key"
awk -F, 'NR > 1 { k = $1 "," $2 "," $3 "," $4; s[k] += $NF } END { for (k in s) if ((s[k] - 1) ^ 2 > 1e-10) exit 1 }' \
  "$WORK/ed.csv" && ok || bad "a CSV row does not sum to 1"
# without --tgt: the model's own greedy translation
"$T" attention --model "$WORK/ed.st" --src "$SRC" > "$WORK/greedy.json" 2> /dev/null || bad "attention without --tgt"
[ "$(jq -r '.tgt_from' "$WORK/greedy.json")" = "greedy translation" ] && rows_ok "$WORK/greedy.json" && ok ||
  bad "greedy-translation maps"
# a decoder that starts from the pad id (Marian's decoder_start_token_id; metadata decoder_start_id,
# docs/MODELS.md): the decoder input starts with that token, with --tgt and without
if [ -x /usr/bin/python3 ]; then
  /usr/bin/python3 - "$WORK/ed.st" "$WORK/padstart.st" << 'PY' || bad "could not write a decoder_start_id model"
import json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n])
h["__metadata__"]["decoder_start_id"] = h["__metadata__"]["pad_id"]
s = json.dumps(h).encode()
s += b" " * (-len(s) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(s)) + s + b[8 + n:])
PY
  for how in "--tgt" "greedy"; do
    if [ "$how" = --tgt ]; then args=(--tgt "$TGT"); else args=(); fi
    "$T" attention --model "$WORK/padstart.st" --src "$SRC" "${args[@]}" > "$WORK/pad.json" 2> "$WORK/err" ||
      bad "decoder_start_id = pad_id ($how): $(cat "$WORK/err")"
    first=$(jq -r '.tgt_tokens[0]' "$WORK/pad.json")
    [ "$first" = "<pad>" ] && rows_ok "$WORK/pad.json" && ok ||
      bad "decoder_start_id = pad_id ($how): the decoder input starts with '$first', not the start token (pad)"
  done
else
  echo "note: /usr/bin/python3 missing: the decoder_start_id case is not checked"
fi
# decoder-only and encoder-only
"$T" attention --model "$WORK/lm.st" --src "$SRC" > "$WORK/lm.json" 2> /dev/null || bad "decoder-only"
rows_ok "$WORK/lm.json" && [ "$(jq '[.maps[] | .kind] | unique' -c "$WORK/lm.json")" = '["decoder_self"]' ] && ok ||
  bad "decoder-only maps"
"$T" attention --model "$WORK/eo.st" --src "$SRC" > "$WORK/eo.json" 2> /dev/null || bad "encoder-only"
rows_ok "$WORK/eo.json" && [ "$(jq '[.maps[] | .kind] | unique' -c "$WORK/eo.json")" = '["encoder_self"]' ] && ok ||
  bad "encoder-only maps"

# --png: one file per (kind, layer, head), a PNG of the size stated on stderr
if "$T" --version | grep -q "^PNG heatmaps (tfm attention --png): cairo"; then
  mkdir -p "$WORK/png"
  "$T" attention --model "$WORK/ed.st" --src "$SRC" --tgt "$TGT" --png "$WORK/png" > /dev/null 2> "$WORK/png.log" ||
    bad "--png: $(cat "$WORK/png.log")"
  pngs=("$WORK"/png/*.png)
  [ "${#pngs[@]}" = 12 ] && ok || bad "--png wrote ${#pngs[@]} PNG files, want 12"
  while read -r _ _ path size; do
    w=${size#(}; w=${w%% *}; h=${size##* }; h=${h%)}
    [ "$(head -c 8 "$path" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] && ok || bad "$path is not a PNG"
    # IHDR: width and height, big-endian, at bytes 16..23
    dims=$(od -An -tu1 -j16 -N8 "$path" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4, $5 * 16777216 + $6 * 65536 + $7 * 256 + $8 }')
    [ "$dims" = "$w $h" ] && ok || bad "$path: IHDR says $dims, tfm said $w x $h"
  done < <(sed -n 's/^tfm attention: wrote \(.*\) (\([0-9]* x [0-9]*\))$/x x \1 (\2)/p' "$WORK/png.log")
  grep -c "wrote .*png" "$WORK/png.log" | grep -qx 12 && ok || bad "stderr names $(grep -c wrote "$WORK/png.log") PNGs"
  if /usr/bin/python3 -c "import matplotlib" 2> /dev/null; then
    /usr/bin/python3 - "$WORK/png" "$WORK/png.log" << 'PY' && ok || bad "matplotlib cannot decode the PNGs at their stated size"
import re, sys, matplotlib.image as mpimg
for line in open(sys.argv[2]):
    m = re.match(r"tfm attention: wrote (\S+) \((\d+) x (\d+)\)", line)
    if m:
        img = mpimg.imread(m.group(1))
        assert img.shape[1] == int(m.group(2)) and img.shape[0] == int(m.group(3)), (m.groups(), img.shape)
PY
  fi
  expect_fail "--png not a folder" 1 "is not an existing folder" "$T" attention --model "$WORK/ed.st" --src "$SRC" --png "$WORK/nope"
else
  expect_fail "--png without cairo" 2 "built without cairo" "$T" attention --model "$WORK/ed.st" --src "$SRC" --png "$WORK"
fi

# bad input
expect_fail "missing model" 1 "$WORK/none.st" "$T" attention --model "$WORK/none.st" --src "$SRC"
expect_fail "empty sentence" 1 "--src is empty" "$T" attention --model "$WORK/ed.st" --src "   "
expect_fail "empty target" 1 "--tgt is empty" "$T" attention --model "$WORK/ed.st" --src "$SRC" --tgt ""
long=$(printf 'judges %.0s' $(seq 1 40))
expect_fail "past max_len" 1 "more than the model's max_len 40" "$T" attention --model "$WORK/ed.st" --src "$long"
expect_fail "target past max_len" 1 "after BOS, more than the model's max_len 40" \
  "$T" attention --model "$WORK/ed.st" --src "$SRC" --tgt "$long"
expect_fail "encoder-only with --tgt" 2 "encoder-only model: it has no decoder" \
  "$T" attention --model "$WORK/eo.st" --src "$SRC" --tgt "$TGT"
expect_fail "BERT folder with --tgt" 2 "encoder-only model" \
  "$T" attention --model "$ROOT/tests/golden/bert_tiny" --src "$SRC" --tgt "$TGT"
expect_fail "decoder-only with --tgt" 2 "decoder-only model: it reads one text" \
  "$T" attention --model "$WORK/lm.st" --src "$SRC" --tgt "$TGT"
expect_fail "bad format" 2 "--format must be json or csv" "$T" attention --model "$WORK/ed.st" --src "$SRC" --format xml
"$T" init "${SHAPE[@]}" --save "$WORK/notok.st" 2> /dev/null
expect_fail "no tokenizer" 1 "has no tokenizer" "$T" attention --model "$WORK/notok.st" --src "$SRC"
finish attention_cli
