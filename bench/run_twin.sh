#!/bin/sh
# The PyTorch twin of issue 5: nn.Transformer trained for MINUTES wall-clock minutes on the
# English→Spanish corpus with tfm's tokenizer, then greedy test BLEU/chrF (see
# bench/twin_translate.py and docs/BENCH.md).
#
#   bench/run_twin.sh [MINUTES] [OUTDIR] [extra twin_translate.py flags...]
#
# Defaults: 40 minutes, /tmp/twin. Needs build/tfm (or TFM=path), the corpus in data/bible-en-es
# (scripts/get-corpus) and Debian's python3-torch. Run it on a quiet machine: it times itself.
# The full log is also written to OUTDIR/twin.log; the last line is the summary.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
minutes=${1:-40}
out=${2:-/tmp/twin}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] && shift
tfm=${TFM:-$repo/build/tfm}
py=${PYTHON:-/usr/bin/python3}

if [ ! -x "$tfm" ]; then
    echo "run_twin: no tfm at $tfm: build it (make) or set TFM=path" >&2
    exit 1
fi
if ! "$py" -c 'import torch, numpy' 2>/dev/null; then
    echo "run_twin: $py cannot import torch and numpy: apt-get install python3-torch python3-numpy" >&2
    exit 1
fi
mkdir -p "$out"
# Read when OpenBLAS and ATen load, so set before Python starts (docs/BENCH.md), picked from this
# CPU (AVX-512, AVX2 or neither) by bench/cpu_tuning.sh, which prints its choice.
. "$here/cpu_tuning.sh"
load() { uptime | sed 's/.*load average://'; }
echo "run_twin: $(date -u '+%Y-%m-%dT%H:%M:%SZ'), load:$(load)" | tee "$out/twin.log"
echo "run_twin: CPU $cpu_tuning_model: $(cpu_tuning_env | tr '\n' ' ')" | tee -a "$out/twin.log"
# The pipe would hide python's exit status from `set -e`: carry it through a file.
rc_file="$out/.rc"
{
    st=0
    "$py" "$here/twin_translate.py" --minutes "$minutes" --out "$out" --tfm "$tfm" "$@" 2>&1 || st=$?
    echo "$st" > "$rc_file"
} | tee -a "$out/twin.log"
rc=$(cat "$rc_file"); rm -f "$rc_file"
echo "run_twin: done, load:$(load)" | tee -a "$out/twin.log"
exit "$rc"
