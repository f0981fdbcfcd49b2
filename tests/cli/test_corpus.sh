#!/usr/bin/env bash
# Builds the Bible corpus with scripts/get-corpus into a fresh temporary directory and checks it:
# the split counts of the standard extraction (docs/TRAINING.md), alignment, known verses in
# both languages, clean text (no markup, Strong's numbers, headings or broken spacing), the split
# rule on every line, and that a second run (from the cache) gives the same files.
# tfm-test: slow (about 20 s: diatheke reads both Bibles)
set -uo pipefail
source "$(dirname "$0")/lib.sh"
src=$ROOT
python=/usr/bin/python3
[ -x "$python" ] || python=python3
# get-corpus would install these itself (apt-get, as root); a test does not: `make corpus` does.
for p in diatheke sword-text-web sword-text-sparv python3; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    skip "package $p is not installed; run 'make corpus' (make test does)"
done
tmp=$WORK
out="$tmp/bible-en-es"
fail() { bad "$@"; }
stop() { finish corpus; exit; }

# --- build -------------------------------------------------------------------------------------
if "$src/scripts/get-corpus" "$out" > "$tmp/run1.log" 2>&1; then
  ok
else
  cat "$tmp/run1.log"
  fail "build: scripts/get-corpus $out exited non-zero"
  stop
fi

# --- counts and alignment ------------------------------------------------------------------------
declare -A expect=([test]=302 [valid]=321 [train]=30454)
for s in test valid train; do
  for ext in ref en es; do
    if [ ! -f "$out/$s.$ext" ]; then fail "files: $s.$ext missing"; continue; fi
    n=$(wc -l < "$out/$s.$ext")
    if [ "$n" -eq "${expect[$s]}" ]; then ok; else fail "count: $s.$ext has $n lines, expected ${expect[$s]}"; fi
  done
done
grep -q "pairs: 31077  test: 302  valid: 321  train: 30454" "$tmp/run1.log" && ok ||
  fail "summary: get-corpus did not print the counts 31077/302/321/30454"

# --- known verses --------------------------------------------------------------------------------
# verse REF MODE EN ES: MODE exact (whole line), prefix, or contains.
verse() {
  local ref=$1 mode=$2 want_en=$3 want_es=$4 s n en es found=0
  for s in test valid train; do
    n=$(grep -nxF -- "$ref" "$out/$s.ref" | cut -d: -f1)
    [ -n "$n" ] || continue
    found=1
    en=$(sed -n "${n}p" "$out/$s.en")
    es=$(sed -n "${n}p" "$out/$s.es")
    for lang in en es; do
      local got want
      if [ "$lang" = en ]; then got=$en; want=$want_en; else got=$es; want=$want_es; fi
      case "$mode" in
        exact) [ "$got" = "$want" ] ;;
        prefix) [ "${got#"$want"}" != "$got" ] ;;
        contains) [[ "$got" == *"$want"* ]] ;;
      esac && ok || fail "verse: $ref ($lang, $mode) expected '$want', got '$got'"
    done
  done
  [ "$found" -eq 1 ] || fail "verse: $ref not found in any .ref file"
}
verse "Genesis 1:1" exact \
  "In the beginning, God created the heavens and the earth." \
  "En el principio crió Dios los cielos y la tierra."
verse "I Samuel 3:4" exact \
  "Yahweh called Samuel. He said, “Here I am.”" \
  "Jehová llamó á Samuel; y él respondió: Heme aquí."
# roman numerals: I Samuel and II Samuel must not overwrite each other
verse "I Samuel 1:1" prefix "Now there was a certain man of Ramathaim Zophim" "Hubo un varón de Ramathaim de Sophim"
verse "II Samuel 3:4" prefix "and the fourth, Adonijah the son of Haggith" "El cuarto, Adonías hijo de Haggith"
verse "II Kings 2:11" contains "Elijah went up by a whirlwind into heaven" "Elías subió al cielo en un torbellino"
verse "III John 1:14" contains "Then we will speak face to face." "y hablaremos boca á boca."
# speaker labels ("Beloved") of the Song of Solomon are headings, not text
verse "Song of Solomon 8:5" prefix \
  "Who is this who comes up from the wilderness, leaning on her beloved? Under the apple tree" \
  "¿Quién es ésta que sube del desierto, recostada sobre su amado? Debajo de un manzano"
# psalm title: a heading in WEB, inside verse 1 in RV1909; dropped on both sides
verse "Psalms 3:1" exact \
  "Yahweh, how my adversaries have increased! Many are those who rise up against me." \
  "¡Oh Jehová, cuánto se han multiplicado mis enemigos! muchos se levantan contra mí."
verse "Psalms 119:1" prefix "Blessed are those whose ways are blameless" "Bienaventurados los perfectos de camino"
verse "Psalms 119:9" prefix "How can a young man keep his way pure?" "¿Con qué limpiará el joven su camino?"
verse "Psalms 111:1" prefix "Praise Yah! I will give thanks" "Aleluya. Alabaré á Jehová"
# WEB appends a glossary to the last verse
verse "Revelation of John 22:21" exact \
  "The grace of the Lord Jesus Christ be with all the saints. Amen." \
  "La gracia de nuestro Señor Jesucristo sea con todos vosotros. Amén."
# RV1909's subscription after the last verse of an epistle
verse "Galatians 6:18" exact \
  "The grace of our Lord Jesus Christ be with your spirit, brothers. Amen." \
  "Hermanos, la gracia de nuestro Señor Jesucristo sea con vuestro espíritu. Amén."
# words that the markup glues together, and an enclitic pronoun that it splits off
verse "Ezekiel 1:1" prefix "Now in the thirtieth year, in the fourth month" "Y fué que á los treinta años, en el mes cuarto"
verse "Mark 6:16" prefix "But Herod, when he heard this, said" "Y oyéndolo Herodes, dijo"
verse "Luke 1:5" prefix "There was in the days of Herod" "Hubo en los días de Herodes"

# --- clean text, split rule, references ------------------------------------------------------------
"$python" - "$out" > "$tmp/scan.log" 2>&1 <<'EOF'
import hashlib, re, sys
out = sys.argv[1]
bad = []
BOOKS = (
    "Genesis", "Exodus", "Leviticus", "Numbers", "Deuteronomy", "Joshua", "Judges", "Ruth",
    "I Samuel", "II Samuel", "I Kings", "II Kings", "I Chronicles", "II Chronicles", "Ezra",
    "Nehemiah", "Esther", "Job", "Psalms", "Proverbs", "Ecclesiastes", "Song of Solomon",
    "Isaiah", "Jeremiah", "Lamentations", "Ezekiel", "Daniel", "Hosea", "Joel", "Amos",
    "Obadiah", "Jonah", "Micah", "Nahum", "Habakkuk", "Zephaniah", "Haggai", "Zechariah",
    "Malachi", "Matthew", "Mark", "Luke", "John", "Acts", "Romans", "I Corinthians",
    "II Corinthians", "Galatians", "Ephesians", "Philippians", "Colossians", "I Thessalonians",
    "II Thessalonians", "I Timothy", "II Timothy", "Titus", "Philemon", "Hebrews", "James",
    "I Peter", "II Peter", "I John", "II John", "III John", "Jude", "Revelation of John")
ref_re = re.compile(r"^(" + "|".join(map(re.escape, BOOKS)) + r") [1-9]\d*:[1-9]\d*$")
checks = {
    "markup": re.compile(r"[<>&{}\[\]\\|*#@]"),
    "Strong's number": re.compile(r"\b[HG]\d{1,5}\b"),
    "doubled space": re.compile(r"  "),
    "tab or control character": re.compile(r"[\x00-\x1f\x7f]"),
    "space before punctuation": re.compile(r" [,.;:?!)”’]"),
    "space after opening punctuation": re.compile(r"[(“‘¿¡] "),
    "missing space after punctuation": re.compile(r"[,;:!?][^\W\d_]"),
    "leading or trailing space": re.compile(r"^\s|\s$"),
    "Hebrew letter heading": re.compile(r"\b(?:ALEPH|BETH|GIMEL|DALETH)\b"),
    "heading text": re.compile(r"For the Chief Musician|Al Músico principal|Salmo de David\. |"
                               r"The following words used in|fué escrita de|Escrita de Roma"),
}
seen = set()
for split, want_bucket in (("test", {0}), ("valid", {1}), ("train", set(range(2, 100)))):
    refs = open(f"{out}/{split}.ref", encoding="utf-8", newline="").read().split("\n")
    refs.pop()  # the last newline
    for ref in refs:
        b = int.from_bytes(hashlib.sha1(ref.encode("utf-8")).digest(), "big") % 100
        if b not in want_bucket:
            bad.append(f"split: {ref!r} is in {split} but its SHA-1 bucket is {b}")
        if not ref_re.match(ref):
            bad.append(f"ref: {split}.ref has a malformed reference {ref!r}")
        if ref in seen:
            bad.append(f"ref: {ref!r} appears twice")
        seen.add(ref)
    for ext in ("en", "es"):
        lines = open(f"{out}/{split}.{ext}", encoding="utf-8", newline="").read().split("\n")
        if lines[-1] != "":
            bad.append(f"format: {split}.{ext} does not end with a newline")
        lines.pop()
        for i, line in enumerate(lines):
            where = f"{split}.{ext} line {i + 1} ({refs[i] if i < len(refs) else '?'})"
            if not line:
                bad.append(f"empty line: {where}")
            for name, rx in checks.items():
                m = rx.search(line)
                if m:
                    bad.append(f"{name}: {where}: ...{line[max(0, m.start() - 20):m.end() + 20]}...")
for b in bad[:40]:
    print("FAIL:", b)
if len(bad) > 40:
    print(f"FAIL: ... and {len(bad) - 40} more")
print(f"scanned {len(seen)} references")
sys.exit(1 if bad else 0)
EOF
scan_rc=$?
if [ "$scan_rc" -eq 0 ]; then ok; else cat "$tmp/scan.log"; fail "scan: clean text / split rule (see above)"; fi
grep -q "scanned 31077 references" "$tmp/scan.log" && ok || fail "scan: did not see 31077 distinct references"

# --- idempotent: a second run reuses the raw output and writes the same files ----------------------
sums1=$(cd "$out" && sha1sum ./*.en ./*.es ./*.ref)
if "$src/scripts/get-corpus" "$out" > "$tmp/run2.log" 2>&1; then ok; else
  cat "$tmp/run2.log"; fail "rerun: scripts/get-corpus exited non-zero the second time"; fi
grep -q "reusing" "$tmp/run2.log" && ok || fail "rerun: the cached diatheke output was not reused"
sums2=$(cd "$out" && sha1sum ./*.en ./*.es ./*.ref)
[ "$sums1" = "$sums2" ] && ok || fail "rerun: the second run wrote different files"
leftover=$(find "$out" -name '*.tmp.*' | head -n 1)
[ -z "$leftover" ] && ok || fail "rerun: temporary file left behind: $leftover"

stop
