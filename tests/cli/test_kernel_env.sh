#!/usr/bin/env bash
# The tool's kernel choice from the environment (cli/kernel_env.c, docs/KERNELS.md "Choosing
# kernels"): TFM_KERNELS, TFM_GEMM, TFM_ATTN and TFM_NO_AVX512 reach the trainer's and the
# translator's contexts (tfm train always names its kernels; translate names them when the
# environment chose), and a bad value is refused with exit 2 naming the variable.
source "$(dirname "$0")/lib.sh"
tiny_corpus "$WORK/c"
M=$WORK/m.st
ARGS=(--data "$WORK/c" --steps 2 --d-model 32 --n-heads 2 --d-ff 64 --n-enc-layers 1 --n-dec-layers 1 --vocab-size 500
      --batch-tokens 1000 --warmup 10 --max-len 64 --seed 1)

kernels_of() { sed -n 's/^tfm train: kernels: //p' "$1"; }
"$TFM" train "${ARGS[@]}" --save "$M" > /dev/null 2> "$WORK/default.log" || bad "train: $(tail -2 "$WORK/default.log")"
default=$(kernels_of "$WORK/default.log")
case "$default" in "isa "*", gemm auto, attention fused, layers fused") ok ;; *) bad "default kernels: '$default'" ;; esac

TFM_KERNELS=reference "$TFM" train "${ARGS[@]}" --save "$WORK/r.st" > /dev/null 2> "$WORK/ref.log" ||
  bad "TFM_KERNELS=reference train: $(tail -2 "$WORK/ref.log")"
[ "$(kernels_of "$WORK/ref.log")" = "isa baseline, gemm blis, attention reference, layers reference" ] && ok ||
  bad "TFM_KERNELS=reference: '$(kernels_of "$WORK/ref.log")'"
TFM_GEMM=blis TFM_ATTN=reference "$TFM" train "${ARGS[@]}" --save "$WORK/g.st" > /dev/null 2> "$WORK/g.log"
case "$(kernels_of "$WORK/g.log")" in *"gemm blis, attention reference, layers fused") ok ;;
  *) bad "TFM_GEMM=blis TFM_ATTN=reference: '$(kernels_of "$WORK/g.log")'" ;; esac
if grep -q avx512f /proc/cpuinfo; then
  TFM_NO_AVX512=1 "$TFM" train "${ARGS[@]}" --save "$WORK/n.st" > /dev/null 2> "$WORK/n.log"
  case "$(kernels_of "$WORK/n.log")" in "isa avx2, "*) ok ;; *) bad "TFM_NO_AVX512=1: '$(kernels_of "$WORK/n.log")'" ;; esac
fi

# translate: silent about its kernels by default, names them when the environment chose; the tokens
# are the same on either table for this model
echo "In the beginning God created the heaven and the earth." > "$WORK/in.en"
"$TFM" translate --model "$M" --input "$WORK/in.en" > "$WORK/tuned.es" 2> "$WORK/t.log" || bad "translate"
! grep -q "kernels:" "$WORK/t.log" && ok || bad "translate names its kernels by default"
TFM_KERNELS=reference "$TFM" translate --model "$M" --input "$WORK/in.en" > "$WORK/ref.es" 2> "$WORK/tr.log"
grep -q "tfm translate: kernels: isa baseline, gemm blis" "$WORK/tr.log" && ok || bad "translate: $(cat "$WORK/tr.log")"
cmp -s "$WORK/tuned.es" "$WORK/ref.es" && ok || bad "reference and tuned kernels translate differently"

# bad values: exit 2 naming the variable, before any work
for v in "TFM_GEMM=bogus" "TFM_ATTN=maybe" "TFM_KERNELS=fast"; do
  expect_fail "$v" 2 "${v%%=*}='${v#*=}'" env "$v" "$TFM" translate --model "$M" --input "$WORK/in.en"
done
# unset, empty or "auto" keep the default
TFM_GEMM= TFM_ATTN=auto TFM_KERNELS=tuned "$TFM" train "${ARGS[@]}" --save "$WORK/a.st" > /dev/null 2> "$WORK/a.log"
[ "$(kernels_of "$WORK/a.log")" = "$default" ] && ok || bad "empty/auto values: '$(kernels_of "$WORK/a.log")'"
finish kernel_env
