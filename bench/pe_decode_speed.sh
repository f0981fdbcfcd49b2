#!/bin/sh
# The decoding-speed column of the position-encoding comparison (issues 10 and 11): for each
# variant folder that bench/pe_compare.sh left in OUTDIR (its final checkpoint model.safetensors),
# the wall time of `tfm translate` over the test set, greedy and beam 4, best and median of REPS
# whole-process runs (model loading and tokenising included, as a user sees it), one after the
# other on the whole machine. Run it on a quiet machine.
#
#   bench/pe_decode_speed.sh OUTDIR... [-r REPS] [-s SRC]   (default 3, data/bible-en-es/test.en)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
tfm=$repo/build/tfm reps=3 src=$repo/data/bible-en-es/test.en dirs=
while [ $# -gt 0 ]; do
    case $1 in
    -r) reps=$2; shift ;;
    -s) src=$2; shift ;;
    -*) sed -n '2,8p' "$0" >&2; exit 2 ;;
    *) dirs="$dirs $1" ;;
    esac
    shift
done
[ -n "$dirs" ] || { sed -n '2,8p' "$0" >&2; exit 2; }
[ -x "$tfm" ] || { echo "pe_decode_speed: no $tfm (make first)" >&2; exit 1; }
[ -s "$src" ] || { echo "pe_decode_speed: $src is missing (scripts/get-corpus)" >&2; exit 1; }
lines=$(wc -l < "$src")
echo "== $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores, load:$(uptime | sed 's/.*load average://')"
echo "== $("$tfm" --version | grep '^BLAS:')"
echo "== $lines sentences of $src, $reps runs each; seconds (best / median), sentences per second from the best"
printf '%-34s %18s %10s %18s %10s\n' variant "greedy s" "sent/s" "beam 4 s" "sent/s"
# secs BEAM MODEL: the wall times of REPS runs, sorted, one per line
secs() {
    i=0
    while [ "$i" -lt "$reps" ]; do
        t0=$(date +%s.%N)
        "$tfm" translate --model "$2" --beam "$1" --input "$src" --output /dev/null 2>/dev/null || { echo fail; return; }
        t1=$(date +%s.%N)
        awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
        i=$((i + 1))
    done | sort -g
}
for out in $dirs; do
    for d in "$out"/*/; do
        m=$d/model.safetensors
        [ -s "$m" ] || continue
        g=$(secs 1 "$m") b=$(secs 4 "$m")
        gb=$(echo "$g" | head -n 1) gm=$(echo "$g" | sed -n "$(( (reps + 1) / 2 ))p")
        bb=$(echo "$b" | head -n 1) bm=$(echo "$b" | sed -n "$(( (reps + 1) / 2 ))p")
        printf '%-34s %8.2f / %7.2f %10.1f %8.2f / %7.2f %10.1f\n' "$(basename "$d")" "$gb" "$gm" \
            "$(awk -v n="$lines" -v t="$gb" 'BEGIN { print n / t }')" "$bb" "$bm" "$(awk -v n="$lines" -v t="$bb" 'BEGIN { print n / t }')"
    done
done
