#!/bin/sh
# Issue 5's side-by-side measurement: tfm and its PyTorch twin (bench/twin_translate.py) each
# train the same model (README recipe: pre-LN, d_model 256, 4 heads, 3+3 layers, d_ff 1024, joint
# 8k subwords, tied embeddings, ~3000-token batches, peak lr 1e-3 after 400 warm-up steps, label
# smoothing 0.1, dropout 0.1, clip 1.0) on the same corpus and tokenizer for MINUTES wall-clock
# minutes on this machine, one after the other (each gets both cores), then decode the test set
# greedily (tfm also with beam 4) and print BLEU/chrF side by side.
#
#   bench/run_translation_comparison.sh [MINUTES=40] [OUTDIR=/tmp/compare]
#
# Run it on a quiet machine. The tfm binary is copied first so rebuilding meanwhile is harmless.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
minutes=${1:-40}
out=${2:-/tmp/compare}
data=$repo/data/bible-en-es
mkdir -p "$out/tfm" "$out/twin"
cp "$repo/build/tfm" "$out/tfm-bin"
tfm=$out/tfm-bin
[ -s "$data/train.en" ] || "$repo/scripts/get-corpus" "$data"

( . "$here/cpu_tuning.sh" ) # prints the CPU and the PyTorch tuning run_twin.sh will pick
echo "== tfm: $minutes minutes, load:$(uptime | sed 's/.*load average://')"
"$tfm" train --data "$data" --src en --tgt es --save "$out/tfm/model.safetensors" --time-limit "$minutes" \
    --eval-every 250 --log-every 50 --seed 1 2> "$out/tfm/train.log"
tail -n 3 "$out/tfm/train.log"
for beam in 1 4; do
    "$tfm" eval --model "$out/tfm/model.safetensors" --src "$data/test.en" --ref "$data/test.es" --beam "$beam" \
        --output "$out/tfm/test.beam$beam.es" > "$out/tfm/test.beam$beam.bleu" 2> "$out/tfm/test.beam$beam.log"
done

echo "== PyTorch twin: $minutes minutes"
TFM=$tfm "$here/run_twin.sh" "$minutes" "$out/twin" > /dev/null
"$tfm" eval --model "$out/twin/twin.safetensors" --src "$data/test.en" --ref "$data/test.es" \
    > "$out/twin/tfm_decodes_twin.bleu" 2> "$out/twin/tfm_decodes_twin.log"

steps=$(grep -o 'tfm train: [0-9]* steps' "$out/tfm/train.log" | awk '{print $3}')
echo
echo "== $minutes minutes each, greedy test BLEU / chrF2 (302 verses)"
printf 'tfm          %s steps  %s  chrF2 %s\n' "$steps" "$(head -1 "$out/tfm/test.beam1.bleu")" \
    "$(sed -n 3p "$out/tfm/test.beam1.bleu" | awk '{print $3}')"
printf 'tfm beam 4   %s\n' "$(head -1 "$out/tfm/test.beam4.bleu")"
printf 'twin         %s\n' "$(tail -1 "$out/twin/twin.log")"
printf 'twin model decoded by tfm: %s\n' "$(head -1 "$out/twin/tfm_decodes_twin.bleu")"
grep -h 'sentences/s' "$out/tfm/test.beam1.log" "$out/tfm/test.beam4.log" "$out/twin/tfm_decodes_twin.log"
