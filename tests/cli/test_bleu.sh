#!/usr/bin/env bash
# tfm bleu end to end: every fixture pair of tests/fixtures/bleu/ prints exactly the BLEU and chrF2
# lines sacreBLEU 2.6.0 printed (pinned in expected.tsv by tests/reference/bleu_expected.py) and
# its signatures; CRLF input and stdin give the same result; every bad input gives a message that
# names the problem, plus the right exit code.
set -u
source "$(dirname "$0")/lib.sh"
FIX="$ROOT/tests/fixtures/bleu"
D=$WORK

bleu_sig="$(sed -n 's/^# \(BLEU|.*\)$/\1/p' "$FIX/expected.tsv")"
chrf_sig="$(sed -n 's/^# \(chrF2|.*\)$/\1/p' "$FIX/expected.tsv")"
[ -n "$bleu_sig" ] && [ -n "$chrf_sig" ] && ok || bad "signatures missing from expected.tsv"

# 1. Every pinned fixture: the four printed lines, exactly.
rows=0
while IFS=$'\t' read -r name lines bleu bleu_line chrf chrf_line; do
    case "$name" in '#'*|'') continue ;; esac
    rows=$((rows + 1))
    if ! "$TFM" bleu --hyp "$FIX/$name.hyp" --ref "$FIX/$name.ref" >"$D/out" 2>"$D/err"; then
        bad "$name: exit $?: $(head -c 400 "$D/err")"; continue
    fi
    printf '%s\n%s\n%s\n%s\n' "$bleu_line" "$bleu_sig" "$chrf_line" "$chrf_sig" >"$D/want"
    if cmp -s "$D/out" "$D/want"; then ok; else bad "$name: got"$'\n'"$(cat "$D/out")"$'\n'"want"$'\n'"$(cat "$D/want")"; fi
done <"$FIX/expected.tsv"
[ "$rows" -ge 14 ] && ok || bad "expected.tsv has only $rows rows"

# 2. CRLF line endings and stdin: the same lines as the LF files.
"$TFM" bleu --hyp "$FIX/realistic.hyp" --ref "$FIX/realistic.ref" >"$D/lf" 2>&1 || bad "realistic LF run"
sed 's/$/\r/' "$FIX/realistic.hyp" >"$D/crlf.hyp"
sed 's/$/\r/' "$FIX/realistic.ref" >"$D/crlf.ref"
"$TFM" bleu --hyp "$D/crlf.hyp" --ref "$D/crlf.ref" >"$D/crlf" 2>&1 || bad "realistic CRLF run"
cmp -s "$D/lf" "$D/crlf" && ok || bad "CRLF changes the scores: $(cat "$D/crlf")"
"$TFM" bleu --hyp /dev/stdin --ref "$FIX/realistic.ref" <"$FIX/realistic.hyp" >"$D/stdin" 2>&1 || bad "stdin run"
cmp -s "$D/lf" "$D/stdin" && ok || bad "stdin changes the scores: $(cat "$D/stdin")"
# A last line without "\n" still counts.
head -c -1 "$FIX/realistic.hyp" >"$D/noeol.hyp"
"$TFM" bleu --hyp "$D/noeol.hyp" --ref "$FIX/realistic.ref" >"$D/noeol" 2>&1 || bad "no-EOL run: $(cat "$D/noeol")"
cmp -s "$D/lf" "$D/noeol" && ok || bad "a missing final newline changes the scores"

# 3. Bad input: a message naming the problem and exit 1; bad usage exits 2.
E="$FIX/errors"
expect_fail_re "line counts differ" 1 "three_lines.txt' has 3 lines.*two_lines_no_eol.txt' has 2 lines" \
    "$TFM" bleu --hyp "$E/three_lines.txt" --ref "$E/two_lines_no_eol.txt"
expect_fail_re "missing file" 1 "cannot open hypothesis file '[^']*no_such.hyp'" \
    "$TFM" bleu --hyp "$FIX/no_such.hyp" --ref "$FIX/realistic.ref"
expect_fail_re "missing ref file" 1 "cannot open reference file '[^']*no_such.ref'" \
    "$TFM" bleu --hyp "$FIX/realistic.hyp" --ref "$FIX/no_such.ref"
expect_fail_re "invalid UTF-8" 1 "bad_utf8.txt:3: invalid UTF-8 at byte column 5.*reference" \
    "$TFM" bleu --hyp "$E/three_lines.txt" --ref "$E/bad_utf8.txt"
expect_fail_re "surrogate" 1 "surrogate.txt:1: invalid UTF-8" \
    "$TFM" bleu --hyp "$E/surrogate.txt" --ref "$E/surrogate.txt"
expect_fail_re "NUL byte" 1 "nul.txt:2: NUL byte" "$TFM" bleu --hyp "$E/nul.txt" --ref "$E/nul.txt"
expect_fail_re "empty files" 1 "no lines: nothing to score" "$TFM" bleu --hyp "$E/empty.txt" --ref "$E/empty.txt"
expect_fail_re "empty hyp, non-empty ref" 1 "has 0 lines.*has 3 lines" \
    "$TFM" bleu --hyp "$E/empty.txt" --ref "$E/three_lines.txt"
expect_fail_re "unknown flag" 2 "unknown option '--smooth'" \
    "$TFM" bleu --hyp "$FIX/realistic.hyp" --ref "$FIX/realistic.ref" --smooth none
expect_fail_re "missing --ref" 2 "missing required option --ref" "$TFM" bleu --hyp "$FIX/realistic.hyp"
if "$TFM" bleu --help >"$D/help" 2>&1 && grep -q -- '--hyp' "$D/help" && grep -q -- '--ref' "$D/help"; then ok; else
    bad "--help: $(cat "$D/help")"; fi

finish test_bleu.sh
