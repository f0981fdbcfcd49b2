#!/bin/sh
# Every OpenMP region a command opens, per region body: how many ran on one thread and on
# several, the time inside them, the helper's mean arrival and the caller's wait at the join
# (docs/THREADS.md, "At the fast kernels' speed"). The library's own loops are now jobs of its
# thread pool (src/ops/pool.h), which this does not see: it shows BLIS's nested regions only
# (ops_pool_counts counts the pool's jobs; docs/THREADS.md, "The thread pool"). Builds bench/region_trace.c into a temporary
# folder with cc and runs the command with it preloaded; --busy runs one single-threaded busy loop
# beside it; --per N divides the counts by N (e.g. the steps a bench_train_step run took, warm-up
# included).
#
#   bench/region_trace.sh [--busy] [--per N] COMMAND [ARGS...]
#   bench/region_trace.sh --per 7 build/bench_train_step --steps 5 --warmup 2
#
# Columns: body, regions on one thread, regions of several, ms inside, helper arrival µs (mean),
# caller's wait at the join µs (mean, max), joins that waited > 200 µs. Names come from nm on the
# program (static functions included, unless it is stripped). A last line sums the regions
# outside BLIS and the caller's waits at their joins (ms, per N).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
busy=0 per=1
while [ $# -gt 0 ]; do
    case $1 in
        --busy) busy=1; shift ;;
        --per) per=$2; shift 2 ;;
        --help | -h) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || { echo "usage: bench/region_trace.sh [--busy] [--per N] COMMAND [ARGS...]" >&2; exit 2; }
work=$(mktemp -d)
busy_pid=""
trap '[ -n "$busy_pid" ] && kill "$busy_pid" 2> /dev/null; rm -rf "$work"' EXIT
${CC:-cc} -O2 -shared -fPIC -o "$work/region_trace.so" "$here/region_trace.c" -ldl -lpthread
if [ "$busy" = 1 ]; then
    awk 'BEGIN { while (1) x++ }' &
    busy_pid=$!
fi
REGION_TRACE_OUT=$work/out.txt LD_PRELOAD=$work/region_trace.so "$@" > "$work/stdout.txt"
grep '^RESULT' "$work/stdout.txt" || true
# resolve each OFFSET OBJECT to the symbol at or below it (nm of that object)
cut -d' ' -f2 "$work/out.txt" | sort -u | while read -r obj; do
    nm -n -t d "$obj" 2> /dev/null | awk -v obj="$obj" '$2 ~ /^[tTwW]$/ { print obj, $1, $3 }'
done > "$work/syms.txt"
awk -v per="$per" '
    FNR == NR { n[$1]++; a[$1, n[$1]] = $2 + 0; s[$1, n[$1]] = $3; next }
    {
        off = $1 + 0; name = "?"
        for (i = 1; i <= n[$2]; i++) { if (a[$2, i] > off) break; name = s[$2, i] }
        printf "%-46s %9.1f %9.1f %9.2f %9.1f %9.1f %9.1f %6.1f\n", name, $3 / per, $4 / per, $5 / per, $6, $7, $8, $9 / per
        if (name !~ /^bli_/) { one += $3; several += $4; waited += $4 * $7 / 1000 }
    }
    END { printf "TOTAL (without BLIS) one-thread %.1f several %.1f join waits %.2f ms\n", one / per, several / per, waited / per > "/dev/stderr" }
    ' "$work/syms.txt" "$work/out.txt" 2> "$work/total.txt" | sort -k4,4 -g -r |
    { printf "%-46s %9s %9s %9s %9s %9s %9s %6s\n" body one-thread several ms arrive_us wait_us wait_max slow; cat; }
cat "$work/total.txt"
