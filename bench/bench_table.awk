# Formats bench/bench.sh's results.txt (RESULT / SKIP / FAILED / CHECK lines) as the table of
# make bench (docs/BENCH.md). ratio = that row's median time / tfm's median time in the same
# block (> 1: tfm is faster). GFLOP/s = the analytic count (bench_flops.c, tfm's count also for
# the anchors: the same work) / median time; % peak = that / the FMA peak measured in the same run
# on as many threads as the row used.
function kv(line, key,    n, i, a, p) {
    n = split(line, a, " ")
    for (i = 1; i <= n; i++) { p = index(a[i], "="); if (p && substr(a[i], 1, p - 1) == key) return substr(a[i], p + 1) }
    return ""
}
function peak_for(th) { return th > 1 && peak_all > 0 ? peak_all : peak_1 }
function pct(g, th,    p) { p = peak_for(th); return p > 0 ? sprintf("%5.1f", 100 * g / p) : "    -" }
{
    if ($1 == "RESULT" && $2 == "peak") { isa = kv($0, "isa"); peak_1 = kv($0, "gflops_1"); peak_all = kv($0, "gflops_all"); peak_th = kv($0, "threads") }
    else if ($1 == "RESULT" && $2 == "train") tr[++ntr] = $0
    else if ($1 == "RESULT" && $2 == "decode") de[++nde] = $0
    else notes[++nno] = $0
}
END {
    if (isa != "") printf "\nFMA peak (fp32, %s, found at run time): %.1f GFLOP/s on 1 thread, %.1f on %d threads\n", isa, peak_1, peak_all, peak_th
    else print "\nFMA peak: not measured"
    if (ntr) {
        printf "\nTraining step, seconds: median of the rounds' medians (minimum); %s timed steps in %s rounds, engines alternated\n", kv(tr[1], "reps"), kv(tr[1], "rounds")
        printf "%-5s %-19s %3s %-17s %-17s %-17s %-17s %8s %6s %8s %6s\n", "conf", "impl", "thr", "step", "forward", "backward", "update", "GFLOP/s", "%peak", "RSS MiB", "ratio"
        for (i = 1; i <= ntr; i++) {
            l = tr[i]; c = kv(l, "config"); im = kv(l, "impl"); th = kv(l, "threads"); t = kv(l, "step_med")
            if (im == "tfm") { gf[c] = kv(l, "gflop"); base[c] = t }
            g = gf[c] != "" && t > 0 ? gf[c] / t : 0
            printf "%-5s %-19s %3d %8.4f (%6.4f) %8.4f (%6.4f) %8.4f (%6.4f) %8.4f (%6.4f) %8.1f %6s %8.0f %6s\n", c, im, th,
                t, kv(l, "step_min"), kv(l, "fwd_med"), kv(l, "fwd_min"), kv(l, "bwd_med"), kv(l, "bwd_min"),
                kv(l, "upd_med"), kv(l, "upd_min"), g, (g > 0 ? pct(g, th) : "-"), kv(l, "rss_mib"),
                im == "tfm" || base[c] == "" ? "-" : sprintf("%.2f", t / base[c])
        }
    }
    if (nde) {
        printf "\nDecoding %s sentences, seconds: median of the rounds' medians (minimum); %s repetitions in %s rounds, engines alternated\n", kv(de[1], "sentences"), kv(de[1], "reps"), kv(de[1], "rounds")
        printf "%-16s %4s %5s %-19s %7s %9s %8s %6s %8s %6s\n", "impl", "beam", "batch", "seconds", "out tok", "out tok/s", "GFLOP/s", "%peak", "RSS MiB", "ratio"
        for (i = 1; i <= nde; i++) {
            l = de[i]; im = kv(l, "impl"); k = kv(l, "beam") "/" kv(l, "batch"); th = kv(l, "threads"); t = kv(l, "med_s")
            if (im == "tfm") { dg[k] = kv(l, "gflop"); dbase[k] = t; dtok[k] = kv(l, "out_tokens") }
            g = dg[k] != "" && t > 0 ? dg[k] / t : 0
            # an anchor that wrote another number of tokens (over 1 %) did other work: flag its ratio
            other = im != "tfm" && dtok[k] > 0 && (kv(l, "out_tokens") - dtok[k]) ^ 2 > (0.01 * dtok[k]) ^ 2
            if (other) nother++
            printf "%-16s %4d %5d %9.4f (%7.4f) %7d %9.0f %8.1f %6s %8.0f %6s\n", im, kv(l, "beam"), kv(l, "batch"), t, kv(l, "min_s"),
                kv(l, "out_tokens"), (t > 0 ? kv(l, "out_tokens") / t : 0), g, (g > 0 ? pct(g, th) : "-"), kv(l, "rss_mib"),
                im == "tfm" || dbase[k] == "" ? "-" : sprintf("%.2f%s", t / dbase[k], other ? "*" : "")
        }
    }
    if (nother) print "* this row wrote over 1 % more or fewer tokens than tfm's (another length limit, other beam hypotheses): its ratio compares different work"
    if (nno) { print ""; for (i = 1; i <= nno; i++) print notes[i] }
    print "\nratio = time / tfm's time in the same block (> 1: tfm is faster); GFLOP/s from the analytic count of docs/BENCH.md"
}
