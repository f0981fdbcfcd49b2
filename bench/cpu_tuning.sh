# The PyTorch twins' tuning (docs/BENCH.md), picked from the CPU this runs on. Sourced (`. FILE`)
# by bench/run_train_step.sh, bench/run_twin.sh and bench/run_translation_comparison.sh; the
# Python twins read the same choice through cpu_tuning_env (one place decides, no copies).
#
# From the flags of /proc/cpuinfo:
#   avx512f -> OPENBLAS_CORETYPE=SkylakeX, ATEN_CPU_CAPABILITY=avx512
#   avx2    -> OPENBLAS_CORETYPE=Zen (AMD) or Haswell (others), ATEN_CPU_CAPABILITY=avx2
#   neither -> no OPENBLAS_CORETYPE (OpenBLAS detects), ATEN_CPU_CAPABILITY=default
# and always OPENBLAS_NUM_THREADS=1 (OpenBLAS runs inside ATen's threads). These replace values
# already in the environment (a stale OPENBLAS_CORETYPE is common), and the line printed says what
# was replaced; CPU_TUNING_KEEP=1 keeps the variables already set instead (to force a choice).
# Forcing AVX-512 kernels on a CPU without them kills PyTorch with "Illegal instruction".
#
# Sourcing it exports the variables and prints one line to stderr naming the CPU and the choice.
# Functions left defined: cpu_tuning_env (prints KEY=VALUE lines of the choice, for scripts in
# other languages:  sh -c '. bench/cpu_tuning.sh 2>/dev/null; cpu_tuning_env').

cpu_tuning_model=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo 2> /dev/null | head -n 1)
[ -n "$cpu_tuning_model" ] || cpu_tuning_model=$(uname -m)
cpu_tuning_flags=" $(sed -n 's/^flags[^:]*: //p' /proc/cpuinfo 2> /dev/null | head -n 1) "
cpu_tuning_vendor=$(sed -n 's/^vendor_id[^:]*: //p' /proc/cpuinfo 2> /dev/null | head -n 1)
case $cpu_tuning_flags in
    *" avx512f "*) cpu_tuning_isa=avx512f cpu_tuning_coretype=SkylakeX cpu_tuning_aten=avx512 ;;
    *" avx2 "*)
        cpu_tuning_isa=avx2 cpu_tuning_aten=avx2
        case $cpu_tuning_vendor in
            AuthenticAMD | HygonGenuine) cpu_tuning_coretype=Zen ;;
            *) cpu_tuning_coretype=Haswell ;;
        esac
        ;;
    *) cpu_tuning_isa=none cpu_tuning_coretype="" cpu_tuning_aten=default ;;
esac

cpu_tuning_note=""
cpu_tuning_set() { # NAME VALUE ("" = unset): the CPU's choice, unless CPU_TUNING_KEEP=1 and NAME is set
    eval "cpu_tuning_old=\${$1-}" "cpu_tuning_isset=\${$1+x}"
    if [ "${CPU_TUNING_KEEP:-0}" = 1 ] && [ -n "$cpu_tuning_isset" ]; then
        cpu_tuning_note="$cpu_tuning_note $1 kept"
        return
    fi
    if [ -n "$cpu_tuning_isset" ] && [ "$cpu_tuning_old" != "$2" ]; then
        cpu_tuning_note="$cpu_tuning_note $1 was ${cpu_tuning_old:-empty}"
    fi
    if [ -n "$2" ]; then
        eval "$1=\$2"
        export "$1"
    else
        unset "$1"
    fi
}
cpu_tuning_set OPENBLAS_CORETYPE "$cpu_tuning_coretype"
cpu_tuning_set ATEN_CPU_CAPABILITY "$cpu_tuning_aten"
cpu_tuning_set OPENBLAS_NUM_THREADS 1

cpu_tuning_env() {
    [ -n "${OPENBLAS_CORETYPE:-}" ] && echo "OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE"
    [ -n "${OPENBLAS_NUM_THREADS:-}" ] && echo "OPENBLAS_NUM_THREADS=$OPENBLAS_NUM_THREADS"
    [ -n "${ATEN_CPU_CAPABILITY:-}" ] && echo "ATEN_CPU_CAPABILITY=$ATEN_CPU_CAPABILITY"
    return 0
}

echo "cpu_tuning: CPU $cpu_tuning_model ($cpu_tuning_isa): OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(auto)}" \
    "OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-(auto)} ATEN_CPU_CAPABILITY=${ATEN_CPU_CAPABILITY:-(auto)}" \
    "${cpu_tuning_note:+(environment:$cpu_tuning_note)}" >&2
