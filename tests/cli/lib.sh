# Shared helpers for the CLI tests (sourced; docs/TESTING.md). Each check prints FAIL with its
# label; finish prints "NAME: N passed, N failed" and exits non-zero if anything failed; skip exits
# 77, which ctest reports as skipped (never as passed). $WORK is a fresh private folder (mktemp -d
# under $TMPDIR, which ctest sets per test inside the build tree), removed on exit.
: "${TFM:?TFM must point to the tfm binary}"
ROOT=${TFM_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
PASS=0
FAILS=0
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tfm-cli.XXXXXX") || { echo "FAIL: mktemp -d" >&2; exit 1; }
trap 'rm -rf "$WORK"' EXIT

ok() { PASS=$((PASS + 1)); }
bad() { FAILS=$((FAILS + 1)); echo "FAIL: $*" >&2; }

# skip REASON: this test cannot run here; say why and exit 77 (ctest: skipped).
skip() { echo "SKIP: $*"; echo "SKIP: $*" >&2; exit 77; }

# need_corpus: sets CORPUS to the English-Spanish corpus (data/bible-en-es, made by `make corpus`
# or scripts/get-corpus; TFM_CORPUS overrides), or skips the test when it is missing.
need_corpus() {
  CORPUS=${TFM_CORPUS:-$ROOT/data/bible-en-es}
  local f
  for f in train.en train.es valid.en valid.es test.en test.es; do
    [ -s "$CORPUS/$f" ] || skip "the corpus is missing ($CORPUS/$f); run 'make corpus' (make test does)"
  done
}

# tiny_corpus DIR: a small parallel corpus from the committed fixture tests/fixtures/tok_train.txt
# (English verses, then Spanish ones from the line starting "Y ACONTECI"), no corpus needed:
# DIR/all.en and DIR/all.es are the two halves (the English one a line longer), and the first n
# lines of each, n the Spanish count, pair up: DIR/train.{en,es} all pairs but the last 20,
# DIR/valid.{en,es} the last 20. Counts a failed check (and returns 1) below 100 pairs.
tiny_corpus() {
  local dir=$1 fix=$ROOT/tests/fixtures/tok_train.txt split n
  mkdir -p "$dir"
  split=$(grep -n '^Y ACONTECI' "$fix" | head -1 | cut -d: -f1)
  head -n $((split - 1)) "$fix" > "$dir/all.en"
  tail -n +"$split" "$fix" > "$dir/all.es"
  n=$(wc -l < "$dir/all.es")
  head -n $((n - 20)) "$dir/all.en" > "$dir/train.en"; head -n $((n - 20)) "$dir/all.es" > "$dir/train.es"
  sed -n "$((n - 19)),${n}p" "$dir/all.en" > "$dir/valid.en"; sed -n "$((n - 19)),${n}p" "$dir/all.es" > "$dir/valid.es"
  if [ "$n" -gt 100 ]; then ok; else bad "tiny corpus from $fix: $n pairs"; return 1; fi
}

# under_vm_limit KB CMD...: runs CMD under `ulimit -v KB` (a guard against huge allocations), except
# in a sanitizer build, whose shadow memory needs terabytes of address space: there the limit is not
# applied (the optimized build of `make test` checks it).
under_vm_limit() {
  local kb=$1
  shift
  if sanitizer_build; then "$@"; else (ulimit -v "$kb" && "$@"); fi
}

# sanitizer_build: true when $TFM is built with a sanitizer (its memory use is not the program's).
sanitizer_build() { ldd "$TFM" 2> /dev/null | grep -q 'lib[atl]san\|libubsan'; }

# no_crash LABEL TEXT: TEXT holds no sanitizer report or crash signature.
no_crash() {
  case "$2" in *AddressSanitizer*|*"runtime error"*|*Segmentation*) bad "$1: crashed: $2" ;; esac
}

# expect_fail LABEL EXIT_CODE NEEDLE CMD...: CMD must exit with EXIT_CODE and print NEEDLE on stderr.
expect_fail() { expect_fail_with_ has_text_ "$@"; }
# expect_fail_re LABEL EXIT_CODE REGEX CMD...: the same with an extended regular expression (grep -E).
expect_fail_re() { expect_fail_with_ matches_re_ "$@"; }

has_text_() { case "$2" in *"$1"*) return 0 ;; esac; return 1; }
matches_re_() { grep -Eq -- "$1" <<< "$2"; }
expect_fail_with_() {
  local match=$1 label=$2 want=$3 pattern=$4
  shift 4
  local err rc
  err=$("$@" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" -ne "$want" ]; then bad "$label: exit $rc, want $want (stderr: ${err:0:400})"; return; fi
  if "$match" "$pattern" "$err"; then ok; else bad "$label: stderr lacks '$pattern': ${err:0:400}"; fi
  no_crash "$label" "$err"
}

# expect_ok LABEL CMD...: CMD must exit 0.
expect_ok() {
  local label=$1
  shift
  local err
  if err=$("$@" 2>&1 >/dev/null); then ok; else bad "$label: exit $? ($err)"; fi
}

# check LABEL CMD...: CMD (a test, cmp, grep...) must succeed; its output is not captured.
check() {
  local label=$1
  shift
  if "$@"; then ok; else bad "$label"; fi
}

finish() {
  echo "$1: $PASS passed, $FAILS failed"
  [ "$FAILS" -eq 0 ]
}
