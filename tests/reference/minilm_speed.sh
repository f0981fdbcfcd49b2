#!/usr/bin/env bash
# Sentences per second of `tfm embed` against sentence-transformers on the same cores, whole
# process each (model load included), on the 200 verses of data/minilm-ref200.txt (made by
# tests/reference/minilm_parity.sh), timed by farm-bench (A = tfm, B = sentence-transformers, run
# in turn, the ratio taken pair by pair). Run it on a quiet machine (load < 1.5): docs/BERT.md.
#
#   tests/reference/minilm_speed.sh [RUNS]      (from the repository root, after `make`)
#
# Environment: MODEL, REF, TFM, ST_PYTHON as minilm_parity.sh; CPUS (default 0,1) for --pin.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
MODEL=${MODEL:-data/all-MiniLM-L6-v2}
REF=${REF:-data/minilm-ref200.txt}
TFM=${TFM:-build/tfm}
ST_PYTHON=${ST_PYTHON:-/work/venv-wp-st/bin/python}
CPUS=${CPUS:-0,1}
runs=${1:-5}
[ -s "$REF" ] || { echo "minilm_speed: $REF is missing: run tests/reference/minilm_parity.sh first" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
awk -F'\t' '!/^#/ { print $1 }' "$REF" > "$work/s.txt"
n=$(wc -l < "$work/s.txt")
cat > "$work/st.py" <<PY
import sys
from sentence_transformers import SentenceTransformer
lines = open(sys.argv[2], encoding="utf-8").read().split("\n")[:$n]
SentenceTransformer(sys.argv[1], device="cpu").encode(lines, batch_size=32)
PY
echo "minilm_speed: $n sentences; sentences/s = $n / the median wall seconds below (A: tfm, B: sentence-transformers)"
farm-bench -n "$runs" --pin "$CPUS" --timeout 1800 --vs "$ST_PYTHON $work/st.py $MODEL $work/s.txt" -- \
  "$TFM" embed --model "$MODEL" --input "$work/s.txt" --npy "$work/out.npy"
