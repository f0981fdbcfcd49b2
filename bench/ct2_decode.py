#!/usr/bin/env python3
"""CTranslate2 anchor of `make bench` (docs/BENCH.md): checks that CTranslate2 decodes a converted
tfm model (bench/ct2_convert.py) exactly as tfm does, then times it like `bench_tfm decode`.

    ct2_decode.py check CT2_DIR IDS_FILE [--sentences N] [--tol X]
    ct2_decode.py check-beam CT2_DIR BEAM_IDS_FILE --beam K
    ct2_decode.py time  CT2_DIR IDS_FILE --beam K --batch B [--reps R] [--threads T]
                        [--compute-type float32|int8]

IDS_FILE is written by `bench_tfm decode --ids-out` with the tfm model: per sentence "source ids
<TAB> tfm's greedy output ids <TAB> ln p(output + EOS | source)" (tfm_model_score).
check: greedy CTranslate2 (beam 1, tfm's length limit floor(1.5·S + 10), one sentence at a time)
must give the same ids for every sentence, and CTranslate2's own log-probability of tfm's output
(score_batch, EOS included) must be within --tol (default 1e-3 nats) of tfm's; prints
"RESULT ct2check ..." and exits 1 on any difference.
check-beam: BEAM_IDS_FILE is `bench_tfm decode --beam K --batch 1 --ids-out` (tfm's beam-K outputs,
stop rule "finished"); CTranslate2 decodes each sentence alone at beam K with the same length penalty
(1: score / length, the length counting EOS as tfm and fairseq count it: return_end_token) and the
same stop rule (CTranslate2's with a length penalty: K finished hypotheses, patience 1); prints how
many outputs are identical ("RESULT ct2beamcheck ..."; informational: near-ties of two hypotheses'
scores may go either way in float).
time: decodes every sentence, sorted by source length and cut into batches of B (as bench_tfm),
R times; prints "RESULT decode impl=ct2 ..." with the median and minimum seconds.
"""
import argparse
import os
import statistics
import sys
import time


def read_ids(path, limit=None):
    rows = []
    with open(path) as f:
        for line in f:
            src, out, lp = line.rstrip("\n").split("\t")
            rows.append(([int(x) for x in src.split()], [int(x) for x in out.split()], float(lp)))
            if limit and len(rows) >= limit:
                break
    return rows


def tokens(ids, names):
    return [names[i] for i in ids]


def vocab_names(ct2_dir):
    import json
    for name in ("shared_vocabulary.json", "target_vocabulary.json"):
        p = os.path.join(ct2_dir, name)
        if os.path.exists(p):
            with open(p) as f:
                names = json.load(f)
            return names, {t: i for i, t in enumerate(names)}
    raise SystemExit(f"ct2_decode: {ct2_dir}: no vocabulary file")


def limit(src_len, max_len):
    """tfm's default length limit (tfm_decode_config_default): floor(1.5·S + 10), < max_len."""
    return min(int(1.5 * src_len + 10), max_len - 1)


def peak_rss_mib():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["check", "check-beam", "time"])
    ap.add_argument("ct2_dir")
    ap.add_argument("ids")
    ap.add_argument("--sentences", type=int, default=0)
    ap.add_argument("--tol", type=float, default=1e-3)
    ap.add_argument("--beam", type=int, default=1)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--compute-type", default="float32")
    args = ap.parse_args()
    import ctranslate2

    if args.mode == "time":  # the log then names the ISA and GEMM backends CTranslate2 picked for this CPU
        import logging
        ctranslate2.set_log_level(logging.INFO)
    names, index = vocab_names(args.ct2_dir)
    tr = ctranslate2.Translator(args.ct2_dir, device="cpu", compute_type=args.compute_type,
                                intra_threads=args.threads, inter_threads=1)
    rows = read_ids(args.ids, args.sentences or None)
    import json
    with open(os.path.join(args.ct2_dir, "tfm.json")) as f:
        max_len = json.load(f)["max_len"]
    if args.mode == "check":
        same, worst = 0, 0.0
        first_diff = None
        for k, (src, out, lp) in enumerate(rows):
            r = tr.translate_batch([tokens(src, names)], beam_size=1, max_decoding_length=limit(len(src), max_len))
            got = [index[t] for t in r[0].hypotheses[0]]
            if got == out:
                same += 1
            elif first_diff is None:
                first_diff = (k + 1, out, got)
            sc = tr.score_batch([tokens(src, names)], [tokens(out, names)])
            ct2_lp = sum(sc[0].log_probs)  # the output tokens and EOS
            worst = max(worst, abs(ct2_lp - lp))
        ok = same == len(rows) and worst <= args.tol
        print(f"CTranslate2 {ctranslate2.__version__} check: greedy output identical to tfm on {same}/{len(rows)} "
              f"sentences; per-sentence log p of tfm's output: max |CT2 - tfm| = {worst:.2e} nats (tol {args.tol:g})")
        if first_diff:
            print(f"  first difference: sentence {first_diff[0]}: tfm {first_diff[1][:20]} ct2 {first_diff[2][:20]}")
        print(f"RESULT ct2check ok={int(ok)} same={same} sentences={len(rows)} max_dlogp={worst:.3e} "
              f"version={ctranslate2.__version__}")
        return 0 if ok else 1
    if args.mode == "check-beam":
        same = 0
        first_diff = None
        for k, (src, out, _) in enumerate(rows):
            r = tr.translate_batch([tokens(src, names)], beam_size=args.beam, max_decoding_length=limit(len(src), max_len),
                                   return_end_token=True, length_penalty=1.0, patience=1)
            got = [index[t] for t in r[0].hypotheses[0] if t != "</s>"]
            if got == out:
                same += 1
            elif first_diff is None:
                first_diff = (k + 1, out, got)
        print(f"CTranslate2 {ctranslate2.__version__} beam {args.beam}: output identical to tfm's on {same}/{len(rows)} "
              f"sentences (same length penalty and stop rule)")
        if first_diff:
            print(f"  first difference: sentence {first_diff[0]}: tfm {first_diff[1][:20]} ct2 {first_diff[2][:20]}")
        print(f"RESULT ct2beamcheck same={same} sentences={len(rows)} beam={args.beam}")
        return 0
    order = sorted(range(len(rows)), key=lambda i: (len(rows[i][0]), i))
    batches = [order[i:i + args.batch] for i in range(0, len(order), args.batch)]
    srcs = [[tokens(rows[i][0], names) for i in b] for b in batches]
    lims = [max(limit(len(rows[i][0]), max_len) for i in b) for b in batches]
    times, n_out = [], 0
    for r in range(args.reps):
        t0 = time.perf_counter()
        n_out = 0
        for src, lim in zip(srcs, lims):
            # return_end_token: the length penalty counts EOS, as tfm's (fairseq's); it changes no step count
            res = tr.translate_batch(src, beam_size=args.beam, max_batch_size=args.batch, max_decoding_length=lim,
                                     return_end_token=True, length_penalty=1.0, patience=1)
            n_out += sum(len([t for t in x.hypotheses[0] if t != "</s>"]) for x in res)
        times.append(time.perf_counter() - t0)
        print(f"  rep {r + 1}: {times[-1]:.4f} s, {n_out} output tokens")
    print(f"RESULT decode impl=ct2-{args.compute_type} beam={args.beam} batch={args.batch} sentences={len(rows)} "
          f"out_tokens={n_out} med_s={statistics.median(times):.6f} min_s={min(times):.6f} reps={args.reps} "
          f"threads={args.threads} rss_mib={peak_rss_mib():.1f} version={ctranslate2.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
