# Merges the rounds of one bench/bench.sh case (docs/BENCH.md, "Alternated rounds"): each engine
# ran once per round, so the input holds one RESULT line per engine and round (label=ENGINE at
# the end). Prints one RESULT line per engine, in the order of -v order_given="tfm anchor ..." (the case's
# engines as named; any other label after them, in the order it first appears), so that the first
# engine's row, the one the table's ratios use, comes first even if it failed in round 1: every
# *_med key (and med_s) the median over the rounds of that round's median, every *_min key (and
# min_s) the minimum over the rounds, rss_mib the largest, reps the sum (timed repetitions in
# all), rounds the number of rounds merged; any other key keeps its first round's value. A line
# that is not RESULT (a FAILED case) is printed after the rows, each distinct text once.
function median(list,    n, v, i, j, t) {
    n = split(list, v, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n % 2 ? v[(n + 1) / 2] : sprintf("%.6f", (v[n / 2] + v[n / 2 + 1]) / 2)
}
function label_of(line,    n, a, i) {
    n = split(line, a, " ")
    for (i = n; i >= 1; i--) if (index(a[i], "label=") == 1) return substr(a[i], 7)
    return ""
}
$1 != "RESULT" {
    if (!($0 in said)) { said[$0] = 1; other[++nother] = $0 }
    next
}
{
    lab = label_of($0)
    if (!(lab in seen)) { seen[lab] = 1; order[++nlab] = lab; nkeys[lab] = 0; head[lab] = $1 " " $2 }
    rounds[lab]++
    for (i = 3; i <= NF; i++) {
        p = index($i, "=")
        if (!p) continue
        k = substr($i, 1, p - 1); v = substr($i, p + 1)
        if (k == "label") continue
        id = lab SUBSEP k
        if (!(id in val)) { key[lab, ++nkeys[lab]] = k; val[id] = v; all[id] = v; continue }
        all[id] = all[id] " " v
        if (k ~ /_min$/ || k == "min_s") { if (v + 0 < val[id] + 0) val[id] = v }
        else if (k == "rss_mib") { if (v + 0 > val[id] + 0) val[id] = v }
        else if (k == "reps") val[id] += v
    }
}
END {
    n = split(order_given, named, " ")
    for (i = 1; i <= n; i++) if (named[i] in seen) { out[++nout] = named[i]; listed[named[i]] = 1 }
    for (o = 1; o <= nlab; o++) if (!(order[o] in listed)) out[++nout] = order[o]
    for (o = 1; o <= nout; o++) {
        lab = out[o]; line = head[lab]
        for (i = 1; i <= nkeys[lab]; i++) {
            k = key[lab, i]; id = lab SUBSEP k
            v = (k ~ /_med$/ || k == "med_s") ? median(all[id]) : val[id]
            line = line " " k "=" v
        }
        print line " rounds=" rounds[lab] " label=" lab
    }
    for (i = 1; i <= nother; i++) print other[i]
}
