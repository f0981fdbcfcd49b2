# Shared helpers for the CLI tests (sourced). Each check prints FAIL with its label; finish prints
# "N passed, N failed" and exits non-zero if anything failed.
: "${TFM:?TFM must point to the tfm binary}"
PASS=0
FAILS=0
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

ok() { PASS=$((PASS + 1)); }
bad() { FAILS=$((FAILS + 1)); echo "FAIL: $*" >&2; }

# expect_fail LABEL EXIT_CODE NEEDLE CMD...: CMD must exit with EXIT_CODE and print NEEDLE on stderr.
expect_fail() {
  local label=$1 want=$2 needle=$3
  shift 3
  local err rc
  err=$("$@" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" -ne "$want" ]; then bad "$label: exit $rc, want $want (stderr: $err)"; return; fi
  case "$err" in
    *"$needle"*) ok ;;
    *) bad "$label: stderr lacks '$needle': $err" ;;
  esac
  # never a sanitizer report or a crash signature
  case "$err" in *AddressSanitizer*|*"runtime error"*|*Segmentation*) bad "$label: crashed: $err" ;; esac
}

# expect_ok LABEL CMD...: CMD must exit 0.
expect_ok() {
  local label=$1
  shift
  local err
  if err=$("$@" 2>&1 >/dev/null); then ok; else bad "$label: exit $? ($err)"; fi
}

finish() {
  echo "$1: $PASS passed, $FAILS failed"
  [ "$FAILS" -eq 0 ]
}
