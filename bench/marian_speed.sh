#!/usr/bin/env bash
# Issue 28's speed table: a Marian of opus-mt's shape (d_model 512, 8 heads, 6+6 layers, FFN 2048,
# vocabulary 58,101; random weights, bench/marian_make.py) translating the same sentences with
#   tfm translate --model DIR                       (the Hugging Face folder itself)
#   CTranslate2 4.8 float32                         (ct2-transformers-converter from the same folder)
#   transformers 4.40.2 MarianMTModel.generate      (torch 1.13)
# greedy and beam 4, batch 1 and 32, the same threads (THREADS) and the same length limit for all
# (random weights rarely end a sentence: every engine decodes LIMIT tokens); one process per case,
# its wall seconds and peak RSS from /usr/bin/time. Run it on a quiet machine:
#
#   bench/marian_speed.sh [SRC]       (from the repository root, after `make`; SRC: one sentence a
#                                      line, default the 302 test verses data/bible-en-es/test.en if present: make corpus)
#
# Environment: PY (default /work/venv-hf/bin/python, with ctranslate2 4.8 installed), TFM
# (build/tfm), THREADS (2), LIMIT (output tokens, default 64), WORK (a folder to keep the models in;
# default a temporary one), SMALL=1 (a tiny model and the first 4 lines: checks the script runs,
# times nothing meaningful). Prints one table row per case: engine, mode, batch, seconds,
# sentences/s, peak RSS MiB. The outputs are kept in WORK/out.ENGINE.MODE.BATCH (same tokens from
# the three on a random model; transformers one fewer at the limit, its forced EOS; CTranslate2's
# lines are joined by target.spm alone, so filler pieces print raw). docs/MARIAN.md, "Speed".
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
PY=${PY:-/work/venv-hf/bin/python}
TFM=${TFM:-build/tfm}
THREADS=${THREADS:-2}
LIMIT=${LIMIT:-64}
SRC=${1:-data/bible-en-es/test.en}
[ -s "$SRC" ] || SRC=tests/fixtures/marian/ref/dec_src.txt
keep=${WORK:-}
WORK=${WORK:-$(mktemp -d)}
[ -n "$keep" ] || trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK"
sed 's/^>>[a-z]*<< //' "$SRC" > "$WORK/src.txt"
size=()
if [ "${SMALL:-0}" = 1 ]; then
  size=(--d-model 32 --heads 4 --layers 2 --ffn 64 --vocab 400)
  head -n 4 "$WORK/src.txt" > "$WORK/s" && mv "$WORK/s" "$WORK/src.txt"
fi
M=$WORK/marian
[ -s "$M/model.safetensors" ] || "$PY" bench/marian_make.py "$M" "${size[@]}"
# CTranslate2's own converter (ct2-transformers-converter) from the same folder; 4.8.5 passes
# from_pretrained(dtype=...), which transformers 4.40.2 names torch_dtype: renamed, nothing else
[ -s "$M.ct2/model.bin" ] || "$PY" - "$M" <<'PY' > /dev/null
import sys
from ctranslate2.converters.transformers import TransformersConverter
class Converter(TransformersConverter):
    def load_model(self, model_class, path, **kwargs):
        kwargs["torch_dtype"] = kwargs.pop("dtype", None)
        return model_class.from_pretrained(path, **kwargs)
Converter(sys.argv[1]).convert(sys.argv[1] + ".ct2", force=True)
PY
n=$(wc -l < "$WORK/src.txt")
export OMP_NUM_THREADS=$THREADS

cat > "$WORK/ct2.py" <<'PY'
import sys, ctranslate2, sentencepiece as spm, json
d, src, beam, batch, limit, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
sp = spm.SentencePieceProcessor(model_file=d + "/source.spm")
tgt = spm.SentencePieceProcessor(model_file=d + "/target.spm")
vocab = json.load(open(d + "/vocab.json", encoding="utf-8"))
lines = [l.rstrip("\n") for l in open(src, encoding="utf-8")]
toks = [[p if p in vocab else "<unk>" for p in sp.encode(l, out_type=str)] + ["</s>"] for l in lines]
tr = ctranslate2.Translator(d + ".ct2", device="cpu", compute_type="float32", inter_threads=1, intra_threads=threads)
res = tr.translate_batch(toks, beam_size=beam, max_batch_size=batch, max_decoding_length=limit, length_penalty=1.0)
out = [tgt.decode_pieces([p for p in r.hypotheses[0] if p not in ("</s>", "<unk>", "<pad>")]) for r in res]
sys.stdout.write("\n".join(out) + "\n")
PY
cat > "$WORK/hf.py" <<'PY'
import sys, torch
from transformers import MarianMTModel, MarianTokenizer
d, src, beam, batch, limit, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
torch.set_num_threads(threads)
tok = MarianTokenizer.from_pretrained(d)
model = MarianMTModel.from_pretrained(d).eval()
lines = [l.rstrip("\n") for l in open(src, encoding="utf-8")]
out = []
with torch.no_grad():
    for i in range(0, len(lines), batch):
        enc = tok(lines[i:i + batch], return_tensors="pt", padding=True)
        g = model.generate(**enc, num_beams=beam, length_penalty=1.0, early_stopping=True, max_length=limit + 1)
        out += tok.batch_decode(g, skip_special_tokens=True)
sys.stdout.write("\n".join(out) + "\n")
PY

# run ENGINE MODE BATCH CMD...: one row of the table
run() {
  local engine=$1 mode=$2 batch=$3
  shift 3
  local t0 t1 rss
  t0=$(date +%s.%N)
  /usr/bin/time -f '%M' -o "$WORK/rss" "$@" > "$WORK/out.$engine.$mode.$batch" 2> "$WORK/err"
  t1=$(date +%s.%N)
  rss=$(tail -n 1 "$WORK/rss")
  awk -v e="$engine" -v m="$mode" -v b="$batch" -v t0="$t0" -v t1="$t1" -v n="$n" -v r="$rss" \
    'BEGIN { s = t1 - t0; printf "%-8s %-7s %5d %9.2f %10.1f %9.1f\n", e, m, b, s, n / s, r / 1024 }'
  [ "$(wc -l < "$WORK/out.$engine.$mode.$batch")" -eq "$n" ] || { echo "marian_speed: $engine $mode $batch: not $n lines" >&2; exit 1; }
}

echo "marian_speed: $n sentences, $THREADS threads, $LIMIT output tokens at most"
printf "%-8s %-7s %5s %9s %10s %9s\n" engine mode batch seconds "sent/s" "RSS MiB"
for beam in 1 4; do
  mode=greedy
  [ "$beam" = 4 ] && mode=beam4
  for batch in 1 32; do
    run tfm "$mode" "$batch" "$TFM" --threads "$THREADS" translate --model "$M" --input "$WORK/src.txt" \
      --beam "$beam" --lenpen 1 --batch-size $((batch * beam)) --max-len-a 0 --max-len-b "$LIMIT"
    run ct2 "$mode" "$batch" "$PY" "$WORK/ct2.py" "$M" "$WORK/src.txt" "$beam" "$batch" "$LIMIT" "$THREADS"
    run hf "$mode" "$batch" "$PY" "$WORK/hf.py" "$M" "$WORK/src.txt" "$beam" "$batch" "$LIMIT" "$THREADS"
  done
done
