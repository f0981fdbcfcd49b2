#!/usr/bin/python3
"""Build the verse-aligned English-Spanish Bible corpus from raw diatheke OSIS output.

Called by scripts/get-corpus, which runs diatheke; this file only reads its output:

    bible_corpus.py --en WEB.osis --es RV1909.osis --out DIR

writes DIR/{train,valid,test}.{en,es,ref} (one verse a line, aligned) and prints the counts.
The rules (docs/TRAINING.md, "The English–Spanish corpus and its standard split"):

- Each verse line is "<Book> <chapter>:<verse>: <body>". Text before the reference on the same
  line is a section heading that diatheke carries along (psalm titles, the letters of Psalm 119);
  it is dropped. A line without a reference continues the previous verse.
- The body carries <w lemma="H1234"> word markup (Strong's numbers live in its attributes),
  <milestone/>, <l/>, <lg/>, <title>, <note> elements; all markup goes, and the words stay
  correctly spaced across the places where the module glues them together.
- Module-specific clean-up, each a named function below: WEB's speaker labels inside the Song of
  Solomon and the glossary appended to Revelation 22:21; RV1909's psalm titles inside verse 1,
  Hebrew letters inside Psalm 119, all-caps first words of chapters, subscriptions after the last
  verse of the epistles, and enclitic pronouns split from their verb by the word markup.
- Pairs are joined on (book, chapter, verse); a verse missing or empty on either side is dropped.
- Split: SHA-1 of the English reference string's UTF-8 bytes as a big-endian integer, mod 100:
  0 -> test, 1 -> valid, else train.

Only the Python standard library is used.
"""

import argparse
import collections
import hashlib
import html
import os
import re
import sys

# The 66 books as diatheke prints them with the English locale (both modules; `-l en`).
BOOKS = (
    "Genesis", "Exodus", "Leviticus", "Numbers", "Deuteronomy", "Joshua", "Judges", "Ruth",
    "I Samuel", "II Samuel", "I Kings", "II Kings", "I Chronicles", "II Chronicles", "Ezra",
    "Nehemiah", "Esther", "Job", "Psalms", "Proverbs", "Ecclesiastes", "Song of Solomon",
    "Isaiah", "Jeremiah", "Lamentations", "Ezekiel", "Daniel", "Hosea", "Joel", "Amos",
    "Obadiah", "Jonah", "Micah", "Nahum", "Habakkuk", "Zephaniah", "Haggai", "Zechariah",
    "Malachi", "Matthew", "Mark", "Luke", "John", "Acts", "Romans", "I Corinthians",
    "II Corinthians", "Galatians", "Ephesians", "Philippians", "Colossians", "I Thessalonians",
    "II Thessalonians", "I Timothy", "II Timothy", "Titus", "Philemon", "Hebrews", "James",
    "I Peter", "II Peter", "I John", "II John", "III John", "Jude", "Revelation of John",
)
BOOK_INDEX = {name: i for i, name in enumerate(BOOKS)}

# A reference of one of the 66 books. Longest names first, so "I John" is not read as "John";
# the look-behind keeps "II Kings" from matching as "I Kings" one character in.
_BOOK_ALT = "|".join(re.escape(b) for b in sorted(BOOKS, key=len, reverse=True))
REF_RE = re.compile(r"(?<![\w])(" + _BOOK_ALT + r") (\d+):(\d+): ")
# Any other book (the WEB module also carries the deuterocanon): names of words, roman
# numerals and a parenthesised word, e.g. "IV Maccabees 1:1: ", "Esther (Greek) 1:1: ".
OTHER_REF_RE = re.compile(
    r"(?<![\w])((?:(?:I|II|III|IV) )?[A-Z][a-z]+(?: (?:of|and|the|\([A-Z][a-z]+\)|[A-Z][a-z]+))*)"
    r" (\d+):(\d+): ")
TRAILER_RE = re.compile(r"^\(\w+\)$")  # diatheke's last line, "(engWEB2015eb)"

TAG_RE = re.compile(r"<[^>]*>")
W_TAG_RE = re.compile(r"</?w(?:\s[^>]*)?/?>")
# Elements whose content is not verse text.
DROP_ELEMENT_RE = re.compile(r"<(title|note)\b[^>]*>.*?</\1>", re.S)

LETTER_RE = re.compile(r"[^\W\d_]")
ACCENTED = set("áéíóúÁÉÍÓÚ")
OPENING = set("“‘¿¡([«")
WORD_END = set(",.;:!?”’)]»")
SENTENCE_END = set(".:;!?¿¡")

# Spanish enclitic pronouns (and their pairs) that RV1909's markup splits off a verb:
# "<w>sáca</w>lo" is "sácalo", "<w>díjo</w>le" is "díjole".
ENCLITICS = {"me", "te", "se", "nos", "os", "lo", "la", "le", "los", "las", "les",
             "melo", "mela", "melos", "melas", "telo", "tela", "selo", "sela", "selos", "selas"}
ARTICLE_LIKE = {"la", "las", "los", "lo"}  # also articles: need a clearly verbal host
SHORT_IMPERATIVES = {"di", "dí", "da", "haz", "pon", "ten", "sal", "ven", "ve"}
NOT_VERBS = {"éste", "ésta", "ésto", "éstos", "éstas", "ése", "ésa", "ésos", "ésas", "aquél",
             "aquélla", "cuánto", "cuánta", "cuántos", "cuántas", "ejército", "él", "allá",
             "acá", "aquí", "ahí", "así", "también", "además", "después", "según", "está",
             "están", "sólo", "más", "aún", "jamás", "cómo", "qué", "cuál", "cuáles", "dónde",
             "quién", "quiénes", "cuándo", "mí", "tú", "sí", "jesús", "jehová"}

# WEB marks the speakers in the Song of Solomon with one-word labels set off by line breaks.
SONG_SPEAKERS_RE = re.compile(r"(?<=\s\s)(?:Beloved|Lover|Friends|Brothers)(?=\s\s)")
# An appendix after the last verse (WEB's glossary), set off by a long run of spaces.
APPENDIX_RE = re.compile(r"\s{8,}\S.*$", re.S)
# Subscriptions printed after the last verse of an epistle: "Amén. Escrita de Roma ...".
SUBSCRIPTION_RE = re.compile(r"(Amén\.)\s+[^.]*\b(?:[Ee]scrita|[Ee]nviada)\b.*$")
HEBREW_LETTER_RE = re.compile(r"^[A-Z]{2,}\.?\s+")

Verse = collections.namedtuple("Verse", "ref key body")


def die(msg):
    print("bible_corpus: error: " + msg, file=sys.stderr)
    sys.exit(1)


def parse_osis(path):
    """Reads diatheke output; returns (verses in file order, number of non-canonical verses)."""
    verses = []
    other = 0
    current = None  # the verse that a line without a reference continues
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            m = REF_RE.search(line)
            if m is None:
                om = OTHER_REF_RE.search(line)
                if om is not None:  # a book outside the 66: skip it and its continuations
                    other += 1
                    current = None
                    continue
                if TRAILER_RE.match(line.strip()) or not line.strip():
                    continue
                if current is None:
                    if other:
                        continue
                    die(f"{path}:{lineno}: text before the first reference: {line[:60]!r}")
                current.body.append(line)
                continue
            book, chapter, verse = m.group(1), int(m.group(2)), int(m.group(3))
            ref = f"{book} {chapter}:{verse}"
            current = Verse(ref, (BOOK_INDEX[book], chapter, verse), [line[m.end():]])
            verses.append(current)
    return [Verse(v.ref, v.key, "  ".join(v.body)) for v in verses], other


def _last_word(s):
    m = re.search(r"[^\W\d_]+$", s)
    return m.group(0) if m else ""


def _sentence_initial(before):
    """True when the text before a word ends a sentence (or is empty)."""
    t = before.rstrip()
    return not t or t[-1] in SENTENCE_END or t[-1] in OPENING


def _enclitic_join(out, right, after):
    """Whether RV1909's "<verb></w><pronoun>" is one word (no space to insert).

    out: text produced so far (ends with the host word); right: the letters that follow;
    after: the character after them, looking through word markup ("" at the end).
    The host must look like a verb: an accent that only an enclitic explains ("díjo", "sáca",
    "oyéndo"), a final accent ("pondré", "dió"), an infinitive or plural imperative ("matar",
    "guardad"), a gerund, or a short imperative ("di", "haz")."""
    r = right.lower()
    if r not in ENCLITICS:
        return False
    left = _last_word(out)
    low = left.lower()
    if not left or low in NOT_VERBS:
        return False
    before = out[: len(out) - len(left)]
    if left[0].isupper() and not _sentence_initial(before):
        return False  # a name in mid-sentence: "Josué los circuncidó"
    accent_inside = any(c in ACCENTED for c in left[:-1])
    accent_final = left[-1] in ACCENTED and len(left) >= 3
    verbal_ending = low.endswith(("r", "d", "ndo"))
    if low in SHORT_IMPERATIVES or accent_inside or accent_final or verbal_ending:
        return True
    # "vílo, y tomé" but "vi las almas": la/las/los/lo before a word may be an article
    article_possible = r in ARTICLE_LIKE and (after == " " or bool(LETTER_RE.match(after)))
    return low == "vi" and not article_possible


def _char_after(parts, i, pos):
    """The character after position pos of text part i, looking through word markup
    (other markup reads as a space); "" at the end."""
    if pos < len(parts[i]):
        return parts[i][pos]
    if i + 1 >= len(parts):
        return ""
    if not all(W_TAG_RE.fullmatch(t) for t in TAG_RE.findall(parts[i + 1])):
        return " "
    return parts[i + 2][:1] if i + 2 < len(parts) else ""


def strip_markup(body, lang):
    """Removes all markup from a verse body, keeping words spaced.

    Word elements (<w>) are zero-width: where the module glues two words across them
    ("<w>God</w><w>created</w>", "<w>Y FUÉ</w>que<w>á</w>") a space is put back, except for a
    Spanish enclitic pronoun. Every other element counts as a space."""
    body = DROP_ELEMENT_RE.sub(" ", body)
    parts = re.split(r"((?:<[^>]*>)+)", body)
    out = ""
    joined_at = -1
    for i, part in enumerate(parts):
        if i % 2 == 0:
            out += part
            continue
        tags = TAG_RE.findall(part)
        if not all(W_TAG_RE.fullmatch(t) for t in tags):
            out += " "
            continue
        nxt = parts[i + 1] if i + 1 < len(parts) else ""
        if not out or not nxt:
            continue
        left, right = out[-1], nxt[0]
        if left.isspace() or right.isspace():
            continue
        if LETTER_RE.match(left) or left.isdigit():
            if LETTER_RE.match(right) or right.isdigit():
                m = re.match(r"[^\W\d_]+", nxt)
                if lang == "es" and m is not None and LETTER_RE.match(left):
                    if len(out) != joined_at and _enclitic_join(
                            out, m.group(0), _char_after(parts, i + 1, m.end())):
                        joined_at = len(out) + m.end()  # one enclitic join per word
                        continue
                out += " "
            elif right in OPENING:
                out += " "
        elif left in WORD_END and (LETTER_RE.match(right) or right in OPENING):
            out += " "
    return html.unescape(out)


def normalize_spacing(text):
    """Single spaces, none before closing punctuation or after opening punctuation, trimmed."""
    text = " ".join(text.split())
    text = re.sub(r"(?<=[,;:!?])(?=[^\W\d_]|[“‘¿¡(])", " ", text)  # "desolation,spoken"
    text = re.sub(r" +(?=[,.;:!?)\]»”’])", "", text)
    text = re.sub(r"(?<=[(\[«“‘¿¡]) +", "", text)
    return text.strip()


# ---- module-specific clean-up ------------------------------------------------------------------

def clean_web(verse, is_last):
    """Clean text of one World English Bible verse (is_last: the module's last verse)."""
    body = verse.body
    if is_last:
        body = APPENDIX_RE.sub("", body)
    text = strip_markup(body, "en")
    if verse.ref.startswith("Song of Solomon "):
        text = SONG_SPEAKERS_RE.sub(" ", text)
    return normalize_spacing(text)


def build_case_table(texts):
    """Most frequent spelling of each word (by its lower-case form) in mid-sentence position,
    used to undo the all-caps first words of chapters ("Y JEHOVÁ dijo" -> "Y Jehová dijo")."""
    counts = collections.defaultdict(collections.Counter)
    for t in texts:
        prev = ""
        for m in re.finditer(r"\S+", t):
            tok = m.group(0)
            word = re.sub(r"^[^\w]+|[^\w]+$", "", tok)
            if word and not _is_caps(word) and prev and prev[-1] not in SENTENCE_END:
                counts[word.lower()][word] += 1
            prev = tok
    return {k: max(c.items(), key=lambda kv: (kv[1], kv[0].islower()))[0]
            for k, c in counts.items()}


def _first_letter_upper(s):
    m = LETTER_RE.search(s)
    return s if m is None else s[:m.start()] + s[m.start()].upper() + s[m.start() + 1:]


def _core(tok):
    """A token without its leading and trailing punctuation."""
    return re.sub(r"^\W+|\W+$", "", tok)


def _is_caps(word):
    return bool(LETTER_RE.search(word)) and word == word.upper() and word != word.lower()


def find_caps_run(toks, anywhere):
    """The first run of all-caps tokens that holds a word of two letters or more, with a
    one-letter word just before it ("A TI", "Y Á SUS"): (start, end) token indices, or None.
    With anywhere=False the run must start the text."""
    for i, tok in enumerate(toks):
        word = _core(tok)
        if len(word) >= 2 and _is_caps(word):
            start = i
            if i > 0 and len(_core(toks[i - 1])) == 1 and _is_caps(_core(toks[i - 1])):
                start = i - 1
            end = i + 1
            while end < len(toks) and _core(toks[end]) and _is_caps(_core(toks[end])):
                end += 1
            if start > 0 and not anywhere:
                return None
            return start, end
        if not anywhere:
            return None
    return None


def fix_initial_caps(text, case_table, chapter_start):
    """RV1909 prints the first word(s) of a chapter in capitals ("EN el principio", "YO DIJE:",
    "¿POR qué", "Las sentencias de Salomón. EL hijo"). Rewrites that run in normal case, using
    the spelling the word has elsewhere. Outside a chapter's first verse only a run that starts
    the verse and whose words are all known in normal case is touched ("HUBO en los días" is,
    "JAH, si mirares" and "TEKEL:" are not)."""
    toks = text.split(" ")
    run = find_caps_run(toks, anywhere=chapter_start)
    if run is None:
        return text
    start, end = run
    words = [_core(t) for t in toks[start:end]]
    if not chapter_start and not all(w.lower() in case_table for w in words if len(w) >= 2):
        return text
    for i, w in zip(range(start, end), words):
        toks[i] = toks[i].replace(w, case_table.get(w.lower(), w.lower()), 1)
    if start == 0 or toks[start - 1][-1] in SENTENCE_END:
        toks[start] = _first_letter_upper(toks[start])
    return " ".join(toks)


def strip_psalm_title(text):
    """RV1909 puts the psalm title inside verse 1, before the chapter's all-caps first words:
    "Salmo de David. A TI, oh Jehová" -> "A TI, oh Jehová". "Aleluya." stays: WEB has it
    ("Praise Yah!") in the verse too."""
    toks = text.split(" ")
    run = find_caps_run(toks, anywhere=True)
    if run is None or run[0] == 0:
        return text
    title = " ".join(toks[:run[0]])
    if title == "Aleluya.":
        return text
    return " ".join(toks[run[0]:])


def clean_rv1909(verses):
    """Cleans all Spanish verses (needs the whole text for the case table)."""
    texts = {}
    last_nonempty = {}
    for v in verses:
        t = normalize_spacing(strip_markup(v.body, "es"))
        book, chapter, num = v.key
        if book == BOOK_INDEX["Psalms"] and num == 1:
            t = strip_psalm_title(t)
        if book == BOOK_INDEX["Psalms"] and chapter == 119 and num % 8 == 1:
            t = HEBREW_LETTER_RE.sub("", t)
        texts[v.ref] = t
        if t:
            last_nonempty[book] = v.ref
    for ref in last_nonempty.values():
        texts[ref] = SUBSCRIPTION_RE.sub(r"\1", texts[ref])
    case_table = build_case_table(texts.values())
    for v in verses:
        texts[v.ref] = normalize_spacing(
            fix_initial_caps(texts[v.ref], case_table, chapter_start=v.key[2] == 1))
    return texts


# ---- join, split, write ------------------------------------------------------------------------

def split_of(ref):
    bucket = int.from_bytes(hashlib.sha1(ref.encode("utf-8")).digest(), "big") % 100
    return "test" if bucket == 0 else "valid" if bucket == 1 else "train"


def check_clean(ref, text):
    """Refuses text that still carries markup or broken spacing."""
    problems = []
    if "<" in text or ">" in text or "&" in text:
        problems.append("markup")
    if re.search(r"\b[HG]\d{3,5}\b", text):
        problems.append("Strong's number")
    if "  " in text or text != text.strip():
        problems.append("spacing")
    if re.search(r" [,.;:!?]", text):
        problems.append("space before punctuation")
    if problems:
        die(f"{ref}: {', '.join(problems)} left in {text[:80]!r}")


def write_atomic(path, lines):
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(line + "\n")
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--en", required=True, help="diatheke -f OSIS output of engWEB2015eb")
    ap.add_argument("--es", required=True, help="diatheke -f OSIS output of spaRV1909eb")
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--min-pairs", type=int, default=30000,
                    help="fail when fewer aligned pairs come out (a parsing problem)")
    ap.add_argument("--max-pairs", type=int, default=31500)
    args = ap.parse_args()

    en_verses, en_other = parse_osis(args.en)
    es_verses, es_other = parse_osis(args.es)
    for name, vs in (("English", en_verses), ("Spanish", es_verses)):
        seen = collections.Counter(v.key for v in vs)
        dup = [k for k, n in seen.items() if n > 1]
        if dup:
            b, c, n = dup[0]
            die(f"{name}: {len(dup)} references appear twice, e.g. {BOOKS[b]} {c}:{n}")
        books = {v.key[0] for v in vs}
        if len(books) != len(BOOKS):
            die(f"{name}: found {len(books)} of the {len(BOOKS)} books")

    last_en = en_verses[-1].ref if en_verses else None
    en_text = {v.key: (v.ref, clean_web(v, v.ref == last_en)) for v in en_verses}
    es_clean = clean_rv1909(es_verses)
    es_text = {v.key: es_clean[v.ref] for v in es_verses}

    rows = {"train": [], "valid": [], "test": []}
    dropped = collections.Counter()
    for v in en_verses:
        ref, en = en_text[v.key]
        es = es_text.get(v.key)
        if es is None:
            dropped["not in the Spanish module"] += 1
            continue
        if not en or not es:
            dropped["empty in " + ("both" if not en and not es else
                                   "English" if not en else "Spanish")] += 1
            continue
        check_clean(ref, en)
        check_clean(ref, es)
        rows[split_of(ref)].append((ref, en, es))
    en_keys = set(en_text)
    dropped["not in the English module"] = sum(1 for v in es_verses if v.key not in en_keys)

    os.makedirs(args.out, exist_ok=True)
    for split, items in rows.items():
        write_atomic(os.path.join(args.out, split + ".ref"), [r for r, _, _ in items])
        write_atomic(os.path.join(args.out, split + ".en"), [e for _, e, _ in items])
        write_atomic(os.path.join(args.out, split + ".es"), [s for _, _, s in items])

    total = sum(len(v) for v in rows.values())
    print(f"English verses: {len(en_verses)} (plus {en_other} outside the 66 books, skipped); "
          f"Spanish verses: {len(es_verses)}")
    for why, n in sorted(dropped.items()):
        if n:
            print(f"dropped {n}: {why}")
    print(f"pairs: {total}  test: {len(rows['test'])}  valid: {len(rows['valid'])}  "
          f"train: {len(rows['train'])}  -> {args.out}")
    if not args.min_pairs <= total <= args.max_pairs:
        die(f"{total} aligned pairs, expected about 31,077 "
            f"(between {args.min_pairs} and {args.max_pairs}): a parsing problem?")


if __name__ == "__main__":
    main()
