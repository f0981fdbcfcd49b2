#!/usr/bin/env bash
# The library as a C programmer installs and links it (docs/API.md): `cmake --install` into a fresh
# prefix, then each of examples/ compiled three ways against the installed copy — pkg-config with
# libtfm.so, pkg-config --static with libtfm.a, and CMake's find_package(tfm) — and run on tiny
# models made here: a translation model and a language model trained for 40 steps on
# tests/fixtures/tok_train.txt, and the BERT folder tests/golden/bert_tiny. Each example's output
# must equal the tfm tool's for the same model and settings. Also the symbols: libtfm.so exports
# exactly the TFM_API functions of the installed headers, and libtfm.a defines no global symbol
# outside the tfm_ prefix (the C++ runtime's weak inline copies aside).
#
#   check_install.sh BUILD_DIR CC "EXTRA_CFLAGS"   (EXTRA_CFLAGS: the sanitizer flags of the build)
source "$(dirname "$0")/../cli/lib.sh"
BUILD=$1 CC=$2 XFLAGS=${3:-}
P=$WORK/prefix
cmake --install "$BUILD" --prefix "$P" > "$WORK/install.log" 2>&1 || { bad "cmake --install: $(tail -3 "$WORK/install.log")"; finish install; exit 1; }
for f in lib/libtfm.so lib/libtfm.a lib/pkgconfig/tfm.pc lib/cmake/tfm/tfmConfig.cmake include/tfm/tfm.h bin/tfm; do
  [ -e "$P/$f" ] && ok || bad "not installed: $f"
done
soname=$(readelf -d "$P/lib/libtfm.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
# 0.x: the SONAME carries MAJOR.MINOR (every minor version may break the ABI); from 1.0, MAJOR
major=$(sed -n 's/^#define TFM_VERSION_MAJOR \([0-9]*\)$/\1/p' "$P/include/tfm/version.h")
minor=$(sed -n 's/^#define TFM_VERSION_MINOR \([0-9]*\)$/\1/p' "$P/include/tfm/version.h")
want_soname=libtfm.so.$major
[ "$major" = 0 ] && want_soname=libtfm.so.$major.$minor
[ -n "$major" ] && [ "$soname" = "$want_soname" ] && [ -e "$P/lib/$soname" ] && ok ||
  bad "SONAME '$soname', want '$want_soname' (version.h $major.$minor)"

# the shared library does not load Open MPI (it trains in one process: docs/API.md)
! readelf -d "$P/lib/libtfm.so" | grep -q 'NEEDED.*libmpi' && ok || bad "libtfm.so needs libmpi"

# every public header is in tfm.h, and compiles alone
for h in "$P"/include/tfm/*.h; do
  name=tfm/$(basename "$h")
  [ "$name" = tfm/tfm.h ] && continue
  grep -q "#include \"$name\"" "$P/include/tfm/tfm.h" && ok || bad "tfm.h does not include $name"
  printf '#include "%s"\nint main(void) { return 0; }\n' "$name" | "$CC" -std=c11 -Wall -Werror -I "$P/include" -x c - -o /dev/null &&
    ok || bad "$name does not compile alone"
done

# symbols: the shared library's exports == the TFM_API declarations; the static one's globals
sed -n 's/^TFM_API [^(]*[ *]\(tfm_[A-Za-z0-9_]*\)(.*/\1/p' "$P"/include/tfm/*.h | sort -u > "$WORK/api.txt"
nm -D --defined-only "$P/lib/libtfm.so" | awk '{ print $3 }' | sort -u > "$WORK/exported.txt"
[ "$(wc -l < "$WORK/api.txt")" -gt 100 ] && ok || bad "found only $(wc -l < "$WORK/api.txt") TFM_API functions"
# a function declared in a public header without TFM_API would be missing from both lists above
unmarked=$(grep -hE '^[a-z][a-z0-9_ ]*[ *]tfm_[a-z0-9_]+\(' "$P"/include/tfm/*.h | grep -Ev '^(typedef|static)' | head -5 | tr '\n' ' ')
[ -z "$unmarked" ] && ok || bad "public functions declared without TFM_API: $unmarked"
extra=$(comm -13 "$WORK/api.txt" "$WORK/exported.txt" | head -20 | tr '\n' ' ')
missing=$(comm -23 "$WORK/api.txt" "$WORK/exported.txt" | head -20 | tr '\n' ' ')
[ -z "$extra" ] && ok || bad "libtfm.so exports symbols outside the API: $extra"
[ -z "$missing" ] && ok || bad "libtfm.so does not export these API functions: $missing"
# T/D/B/R: functions and data; W/V/u (weak, unique) are the C++ runtime's inline copies from the
# SentencePiece shim, C the OpenMP critical section's lock, named after tfm_
stray=$(nm -g --defined-only "$P/lib/libtfm.a" | awk 'NF == 3 && $2 ~ /^[TDBRGS]$/ && $3 !~ /^tfm_/ { print $3 }
  NF == 3 && $2 == "C" && $3 !~ /^\.gomp_critical_user_tfm_/ { print $3 }' | head -20 | tr '\n' ' ')
[ -z "$stray" ] && ok || bad "libtfm.a defines global symbols outside the tfm_ prefix: $stray"

# the examples, three ways
export PKG_CONFIG_PATH=$P/lib/pkgconfig
pkg-config --exists tfm && ok || bad "pkg-config does not find tfm"
read -r -a CFLAGS_PC <<< "$(pkg-config --cflags tfm)"
read -r -a LIBS_PC <<< "$(pkg-config --libs tfm)"
read -r -a LIBS_ST <<< "$(pkg-config --static --libs tfm | sed "s|-ltfm\b|$P/lib/libtfm.a|")"
read -r -a XF <<< "$XFLAGS"
for ex in translate generate embed; do
  src=$ROOT/examples/$ex.c
  [ "$(wc -l < "$src")" -le 80 ] && ok || bad "examples/$ex.c is over 80 lines"
  expect_ok "$ex: cc with pkg-config" "$CC" -std=c11 -Wall -Wextra -Werror "${XF[@]}" "$src" "${CFLAGS_PC[@]}" \
    "${LIBS_PC[@]}" -lm -Wl,-rpath,"$P/lib" -o "$WORK/$ex"
  expect_ok "$ex: cc with pkg-config --static" "$CC" -std=c11 "${XF[@]}" "$src" "${CFLAGS_PC[@]}" "${LIBS_ST[@]}" -lm \
    -o "$WORK/$ex-static"
done
ldd "$WORK/translate" | grep -q "$P/lib/libtfm.so" && ok || bad "translate does not load the installed libtfm.so"
# a program with its own linear_forward, beam_search and arena_init (names the library uses inside)
# that pulls in the translation code: links with both libraries and keeps its own functions (the
# build tree's libtfm_internal.a, whose internal names are global, fails this with "multiple
# definition")
cat > "$WORK/clash.c" <<'CLASH'
#include <tfm/tfm.h>
#include <stdio.h>
#include <string.h>
int linear_forward(int x) { return x + 1; }
int beam_search(void) { return 7; }
int arena_init(void) { return 3; }
int main(void) {
    tfm_status (*volatile fn)(tfm_context *, const tfm_tokenizer *, const tfm_decode_config *, const char *const *,
                              size_t, int, char **, tfm_translate_stats *) = tfm_translate_text;
    printf("%d %d %d %s %d %d\n", linear_forward(1), beam_search(), arena_init(), tfm_status_name(TFM_ERR_IO), fn != 0,
           strcmp(tfm_version(), TFM_VERSION_STRING) == 0);
    return 0;
}
CLASH
for kind in shared static; do
  if [ $kind = shared ]; then libs=("${LIBS_PC[@]}" -Wl,-rpath,"$P/lib"); else libs=("${LIBS_ST[@]}"); fi
  if "$CC" -std=c11 "${XF[@]}" "$WORK/clash.c" "${CFLAGS_PC[@]}" "${libs[@]}" -lm -o "$WORK/clash-$kind" 2> "$WORK/clash.log" &&
     [ "$("$WORK/clash-$kind")" = "2 7 3 io error 1 1" ]; then ok; else bad "$kind: a program's own linear_forward/beam_search/arena_init clash with the library: $(head -c 400 "$WORK/clash.log")"; fi
done
! ldd "$WORK/translate-static" | grep -q libtfm && ok || bad "translate-static loads libtfm.so"
cmake -S "$ROOT/examples" -B "$WORK/ex-cmake" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_FLAGS="$XFLAGS" \
  > "$WORK/cmake.log" 2>&1 && cmake --build "$WORK/ex-cmake" >> "$WORK/cmake.log" 2>&1 && ok ||
  bad "examples with find_package(tfm): $(tail -5 "$WORK/cmake.log")"

# tiny models
tiny_corpus "$WORK/small"
MT=$WORK/mt.st LM=$WORK/lm.st
"$TFM" train --data "$WORK/small" --save "$MT" --steps 40 --d-model 32 --n-heads 2 --d-ff 64 --n-enc-layers 1 \
  --n-dec-layers 1 --vocab-size 500 --batch-tokens 1000 --warmup 10 --max-len 64 --seed 1 > /dev/null 2>&1 ||
  bad "training the tiny translation model"
"$TFM" train --arch decoder-only --text "$WORK/small/train.en" --save "$LM" --steps 40 --vocab-size 400 --d-model 32 \
  --n-heads 2 --n-dec-layers 2 --d-ff 64 --batch-tokens 1000 --warmup 10 --seed 3 > /dev/null 2>&1 ||
  bad "training the tiny language model"

S1="In the beginning God created the heaven and the earth." S2="And God said, Let there be light."
printf '%s\n%s\n' "$S1" "$S2" | "$TFM" translate --model "$MT" --beam 4 > "$WORK/want.translate" 2> /dev/null
"$TFM" generate --model "$LM" --prompt "And God said" --temperature 0.8 --top-k 40 --seed 42 --max-tokens 30 \
  > "$WORK/want.generate" 2> /dev/null
# the first sentence against itself: cosine 1
printf '1.0000\t%s\n' "$S1" > "$WORK/want.embed"
for bin in "$WORK/%s" "$WORK/%s-static" "$WORK/ex-cmake/%s"; do
  # shellcheck disable=SC2059
  t=$(printf "$bin" translate) g=$(printf "$bin" generate) e=$(printf "$bin" embed)
  "$t" "$MT" "$S1" "$S2" > "$WORK/got" 2> "$WORK/err" && cmp -s "$WORK/got" "$WORK/want.translate" && ok ||
    bad "$t: $(head -c 300 "$WORK/got") $(head -c 300 "$WORK/err") (want $(head -c 300 "$WORK/want.translate"))"
  "$g" "$LM" "And God said" 30 > "$WORK/got" 2> "$WORK/err" && cmp -s "$WORK/got" "$WORK/want.generate" && ok ||
    bad "$g: $(head -c 300 "$WORK/got") $(head -c 300 "$WORK/err") (want $(head -c 300 "$WORK/want.generate"))"
  "$e" "$ROOT/tests/golden/bert_tiny" "$S1" "$S2" > "$WORK/got" 2> "$WORK/err" && head -1 "$WORK/got" | cmp -s - "$WORK/want.embed" &&
    [ "$(wc -l < "$WORK/got")" -eq 2 ] && ok || bad "$e: $(head -c 300 "$WORK/got") $(head -c 300 "$WORK/err")"
  "$t" "$WORK/missing.st" "x" > /dev/null 2> "$WORK/err"
  [ $? -eq 1 ] && grep -q "missing.st" "$WORK/err" && ok || bad "$t on a missing model: $(cat "$WORK/err")"
done
[ -s "$WORK/want.translate" ] && [ -s "$WORK/want.generate" ] && ok || bad "the tfm tool gave no output to compare"
finish install
