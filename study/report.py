#!/usr/bin/env python3
"""The position-encoding study's report (study/pe_study.sh; docs/STUDY.md): tables and figures
from whatever runs of OUT/runs have finished.

    study/report.py --out OUT --variants "none sinusoidal ..." --seeds "1 2"

Writes OUT/report.md (the tables: one row per encoding, each cell the mean over the seeds that
finished, +- half their range), OUT/report.csv (the same numbers, one row per encoding) and five
PNGs in OUT/fig/, each FIG_W x FIG_H pixels (matplotlib, Agg, figsize 10 x 5.5 in at 100 dpi):
bleu_vs_length.png, lm_ppl_vs_length.png, lm_loss_vs_position.png, sinusoid_table.png and
sinusoid_dot.png. A cell whose runs have not finished is "-"; a language model evaluated past its
position table (learned) is "N/A", never a number.
"""
import argparse
import csv
import math
import os
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

FIG_W, FIG_H, DPI = 1000, 550, 100
KS = (1, 2, 4, 8, 16)


def label_of(v):
    return v.translate(str.maketrans(":,=", "_+-"))


def read_kv(path, sep="="):
    out = {}
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            if sep in line:
                k, v = line.strip().split(sep, 1)
                out[k] = v
    return out


def first_float(path, pattern):
    if not os.path.exists(path):
        return None
    m = re.search(pattern, open(path, encoding="utf-8").read(), re.M)
    return float(m.group(1)) if m else None


def mt_run(d):
    """One translation run's numbers, or None if it has not finished."""
    if not os.path.exists(os.path.join(d, "eval.done")):
        return None
    r = {"bleu": first_float(os.path.join(d, "single.txt"), r"^BLEU = ([0-9.]+)"),
         "chrf": first_float(os.path.join(d, "single.txt"), r"^chrF2 = ([0-9.]+)"),
         "short": first_float(os.path.join(d, "short.txt"), r"^BLEU = ([0-9.]+)"),
         "long": first_float(os.path.join(d, "long.txt"), r"^BLEU = ([0-9.]+)")}
    for k in (2, 4, 8):
        r[f"cat{k}"] = first_float(os.path.join(d, f"cat{k}.txt"), r"^BLEU = ([0-9.]+)")
    r["buckets"] = []
    with open(os.path.join(d, "single.csv"), encoding="utf-8") as f:
        for row in csv.DictReader(f):
            r["buckets"].append(row)
    log = os.path.join(d, "train.log")
    r["steps"] = first_float(log, r"tfm train: ([0-9]+) steps in")
    walls = [float(x) for x in re.findall(r"^wall_s ([0-9.]+)", open(log).read(), re.M)]
    r["wall_s"] = sum(walls)
    return r


def lm_run(d):
    if not os.path.exists(os.path.join(d, "eval.done")):
        return None
    r = {}
    for k in KS:
        p = os.path.join(d, f"ppl_k{k}.txt")
        text = open(p, encoding="utf-8").read() if os.path.exists(p) else ""
        if text.startswith("N/A"):
            r[k] = "N/A"
        else:
            m = re.search(r"^perplexity ([0-9.eE+-]+|inf|nan)", text, re.M)
            r[k] = float(m.group(1)) if m else None
    r["pos"] = None
    for k in reversed(KS):  # the longest evaluation with a per-position loss
        p = os.path.join(d, f"pos_k{k}.csv")
        if os.path.exists(p):
            with open(p, encoding="utf-8") as f:
                r["pos"] = [float(row["mean_nll"]) for row in csv.DictReader(f)]
            break
    log = os.path.join(d, "train.log")
    r["steps"] = first_float(log, r"tfm train: ([0-9]+) steps in")
    r["wall_s"] = sum(float(x) for x in re.findall(r"^wall_s ([0-9.]+)", open(log).read(), re.M))
    return r


def agg(values):
    """(mean, half range, n) of the numbers; 'N/A' if any is N/A; None if there are none."""
    if any(v == "N/A" for v in values):
        return "N/A"
    xs = [v for v in values if isinstance(v, float) and not math.isnan(v)]
    if not xs:
        return None
    return (sum(xs) / len(xs), (max(xs) - min(xs)) / 2, len(xs))


def cell(a, digits=2):
    if a is None:
        return "-"
    if a == "N/A":
        return "N/A"
    mean, half, n = a
    return f"{mean:.{digits}f}" + (f" ± {half:.{digits}f}" if n > 1 else "")


def fig():
    return plt.figure(figsize=(FIG_W / DPI, FIG_H / DPI), dpi=DPI)


RELATIVE = ("shaw", "t5", "rope", "alibi")


def style(variants, v):
    """One colour per encoding across the figures (tab20: the default cycle has 10 colours for 11
    encodings); dashed lines for the relative encodings, solid for the absolute ones and none."""
    return {"color": plt.cm.tab20(variants.index(v) % 20),
            "ls": "--" if v.split(":")[0] in RELATIVE else "-"}


def label_axes(ax, xlabel, ylabel, title, legend=True, loc="best"):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, ncol=2, loc=loc)


def save(f, path):
    f.tight_layout()
    f.savefig(path + ".tmp.png", dpi=DPI)  # no bbox_inches: the stated size
    plt.close(f)
    os.replace(path + ".tmp.png", path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--variants", required=True)
    ap.add_argument("--seeds", required=True)
    a = ap.parse_args()
    out = a.out
    P = read_kv(os.path.join(out, "data", "params.sh"))
    S = read_kv(os.path.join(out, "settings"))
    L, C = int(P.get("L", 0)), int(P.get("CONTEXT", S.get("CONTEXT", 64)))
    variants, seeds = a.variants.split(), a.seeds.split()
    mt = {v: [mt_run(os.path.join(out, "runs", "mt", label_of(v), f"seed{s}")) for s in seeds] for v in variants}
    lm = {v: [lm_run(os.path.join(out, "runs", "lm", label_of(v), f"seed{s}")) for s in seeds] for v in variants}
    os.makedirs(os.path.join(out, "fig"), exist_ok=True)

    # ---- tables --------------------------------------------------------------------------------
    bucket_labels = []
    for v in variants:
        for r in mt[v]:
            if r and not bucket_labels:
                bucket_labels = [b["bucket"] for b in r["buckets"]]
    rows, md = [], []
    md.append(f"# Position-encoding study: results\n\nSettings: {', '.join(f'{k}={v}' for k, v in S.items())}\n")
    md.append(f"Split (study/prepare.py): {P.get('N_CHAPTERS', '?')} chapters, {P.get('N_HELDOUT_CHAPTERS', '?')} held out "
              f"({P.get('N_HELDOUT', '?')} verses, {P.get('N_HELDOUT_LONG', '?')} of them longer than L); "
              f"L = {L} source tokens; {P.get('N_TRAIN_PAIRS', '?')} training pairs; concatenations: "
              f"{P.get('N_CAT2', '?')} x2, {P.get('N_CAT4', '?')} x4, {P.get('N_CAT8', '?')} x8; language model: context "
              f"C = {C}, {P.get('N_LM_TRAIN', '?')} training lines, {P.get('N_LM_EVAL_K1', '?')} evaluation windows at 1C, "
              f"{P.get('N_LM_EVAL_K16', '?')} at 16C.\n")
    md.append("Each cell: the mean over the seeds that finished ± half their range (two seeds: half the difference); "
              "`-` not run yet; `N/A` past the model's position table.\n")
    md.append("## Translation: greedy BLEU on held-out chapters\n")
    head = ["encoding", "seeds", "BLEU all", f"BLEU ≤ {L}", f"BLEU > {L}"] + [f"{b}" for b in bucket_labels] + \
           ["2 verses", "4 verses", "8 verses"]
    md.append("| " + " | ".join(head) + " |")
    md.append("|" + "---|" * len(head))
    for v in variants:
        rs = [r for r in mt[v] if r]
        row = {"encoding": v, "mt_seeds": len(rs)}
        cells = [v, str(len(rs))]
        for key in ("bleu", "short", "long"):
            x = agg([r[key] for r in rs])
            row[f"mt_{key}"] = cell(x)
            cells.append(cell(x))
        for i, b in enumerate(bucket_labels):
            x = agg([float(r["buckets"][i]["bleu"]) for r in rs if r["buckets"][i]["lines"] != "0"])
            n = rs[0]["buckets"][i]["lines"] if rs else "0"
            row[f"bleu_{b}"] = cell(x)
            cells.append(cell(x) + (f" ({n})" if v == variants[0] else ""))
        for k in (2, 4, 8):
            x = agg([r[f"cat{k}"] for r in rs])
            row[f"mt_cat{k}"] = cell(x)
            cells.append(cell(x))
        rows.append(row)
        md.append("| " + " | ".join(cells) + " |")
    md.append(f"\nBucket columns: source length in subword tokens (lines in the bucket in brackets, first row); "
              f"training sources had at most L = {L}.\n")
    md.append("## Language model: perplexity of held-out running text at k × C tokens\n")
    head = ["encoding", "seeds"] + [f"{k}×C = {k * C}" for k in KS]
    md.append("| " + " | ".join(head) + " |")
    md.append("|" + "---|" * len(head))
    for v, row in zip(variants, rows):
        rs = [r for r in lm[v] if r]
        cells = [v, str(len(rs))]
        row["lm_seeds"] = len(rs)
        for k in KS:
            x = agg([r[k] for r in rs])
            row[f"ppl_{k}C"] = cell(x)
            cells.append(cell(x))
        md.append("| " + " | ".join(cells) + " |")
    md.append("\n## Run time\n")
    md.append("| encoding | translation steps | s per run | LM steps | s per run |")
    md.append("|---|---|---|---|---|")
    for v in variants:
        a_mt = agg([r["wall_s"] for r in mt[v] if r])
        a_lm = agg([r["wall_s"] for r in lm[v] if r])
        s_mt = next((r["steps"] for r in mt[v] if r), None)
        s_lm = next((r["steps"] for r in lm[v] if r), None)
        md.append(f"| {v} | {int(s_mt) if s_mt is not None else '-'} | {cell(a_mt, 0)} | {int(s_lm) if s_lm is not None else '-'} "
                  f"| {cell(a_lm, 0)} |")
    figs = ["bleu_vs_length", "lm_ppl_vs_length", "lm_loss_vs_position", "sinusoid_table", "sinusoid_dot"]
    md.append(f"\n## Figures ({FIG_W} x {FIG_H} PNG)\n")
    md += [f"![{f}](fig/{f}.png)" for f in figs]

    keys = list(rows[0].keys()) if rows else ["encoding"]
    with open(os.path.join(out, "report.csv.tmp"), "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    os.replace(os.path.join(out, "report.csv.tmp"), os.path.join(out, "report.csv"))
    with open(os.path.join(out, "report.md.tmp"), "w", encoding="utf-8") as f:
        f.write("\n".join(md) + "\n")
    os.replace(os.path.join(out, "report.md.tmp"), os.path.join(out, "report.md"))

    # ---- figures -------------------------------------------------------------------------------
    f = fig()
    ax1, ax2 = f.add_subplot(1, 2, 1), f.add_subplot(1, 2, 2)
    for v in variants:
        rs = [r for r in mt[v] if r]
        if not rs:
            continue
        xs, ys, es = [], [], []
        for i, b in enumerate(rs[0]["buckets"]):
            vals = [float(r["buckets"][i]["bleu"]) for r in rs if r["buckets"][i]["lines"] != "0"]
            if not vals:
                continue
            lo, hi = int(b["lo"]), (int(b["hi"]) if b["hi"] != "inf" else 2 * int(b["lo"]))
            xs.append((lo + hi) / 2)
            ys.append(sum(vals) / len(vals))
            es.append((max(vals) - min(vals)) / 2)
        ax1.errorbar(xs, ys, yerr=es, marker="o", ms=3, capsize=2, label=v, **style(variants, v))
        ks, cy = [1, 2, 4, 8], []
        for k in ks:
            vals = [r["bleu"] if k == 1 else r[f"cat{k}"] for r in rs]
            vals = [x for x in vals if x is not None]
            cy.append(sum(vals) / len(vals) if vals else float("nan"))
        ax2.plot(ks, cy, marker="o", ms=3, label=v, **style(variants, v))
    ax1.axvline(L, color="k", ls="--", lw=1)
    ax1.text(L, ax1.get_ylim()[1], f" training cap L = {L}", va="top", fontsize=8)
    label_axes(ax1, "source length (subword tokens, bucket midpoint)", "BLEU (held-out verses)",
               "BLEU vs source length", legend=False)  # the right panel's legend serves both
    ax2.set_xscale("log", base=2)
    ax2.set_xticks([1, 2, 4, 8], ["1", "2", "4", "8"])
    label_axes(ax2, "consecutive verses joined", "BLEU", "concatenated held-out verses", loc="upper right")
    save(f, os.path.join(out, "fig", "bleu_vs_length.png"))

    f = fig()
    ax = f.add_subplot(1, 1, 1)
    for v in variants:
        rs = [r for r in lm[v] if r]
        xs, ys = [], []
        for k in KS:
            vals = [r[k] for r in rs if isinstance(r[k], float)]
            if vals:
                xs.append(k * C)
                ys.append(sum(vals) / len(vals))
        if xs:
            ax.plot(xs, ys, marker="o", ms=3, label=v + (" (N/A past its table)" if v.startswith("learned") else ""),
                    **style(variants, v))
    ax.axvline(C, color="k", ls="--", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks([k * C for k in KS], [f"{k}×C\n{k * C}" for k in KS])
    label_axes(ax, f"evaluation length (tokens; training context C = {C})", "perplexity (held-out text)",
               "Language model: perplexity vs evaluation length")
    save(f, os.path.join(out, "fig", "lm_ppl_vs_length.png"))

    f = fig()
    ax = f.add_subplot(1, 1, 1)
    for v in variants:
        curves = [r["pos"] for r in lm[v] if r and r["pos"]]
        if curves:
            n = min(len(c) for c in curves)
            y = np.mean([c[:n] for c in curves], axis=0)
            win = 8 if n > 64 else 1
            ys = np.convolve(y, np.ones(win) / win, mode="valid")
            ax.plot(np.arange(len(ys)) + (win - 1) / 2, ys, lw=1, label=v, **style(variants, v))
    ax.axvline(C, color="k", ls="--", lw=1)
    label_axes(ax, f"position (tokens after BOS; training context C = {C})",
               "mean loss (nats/token, 8-position moving average)",
               "Language model: loss vs position at the longest evaluation length")
    save(f, os.path.join(out, "fig", "lm_loss_vs_position.png"))

    d = int(S.get("D_MODEL", 128))
    n_pos = max(16 * C, 4 * L, 64)
    p = np.arange(n_pos)[:, None]
    i = np.arange(d)[None, :]
    om = 10000.0 ** (-(i // 2 * 2) / d)  # the paper's table, §3.5: sin at even, cos at odd columns
    pe = np.where(i % 2 == 0, np.sin(p * om), np.cos(p * om))
    f = fig()
    ax = f.add_subplot(1, 1, 1)
    im = ax.imshow(pe.T, aspect="auto", cmap="RdBu", vmin=-1, vmax=1, origin="lower", interpolation="nearest")
    f.colorbar(im, ax=ax)
    ax.axvline(L, color="k", ls="--", lw=1)
    ax.axvline(C, color="g", ls=":", lw=1)
    label_axes(ax, f"position p (dashed: translation cap L = {L}; dotted: LM context C = {C})",
               "column (2i: sin, 2i+1: cos)", f"The sinusoid table PE(p) at d_model = {d} (Vaswani et al. 2017, §3.5)")
    save(f, os.path.join(out, "fig", "sinusoid_table.png"))

    f = fig()
    ax = f.add_subplot(1, 1, 1)
    ks = np.arange(n_pos // 2)
    for p0 in (0, n_pos // 4):
        dots = (pe[p0] * pe[p0 + ks]).sum(axis=1)
        ax.plot(ks, dots, lw=1 if p0 == 0 else 2.5, alpha=1 if p0 == 0 else 0.4, label=f"p = {p0}")
    ax.axhline(0, color="k", lw=0.5)
    ax.axvline(L, color="k", ls="--", lw=1)
    label_axes(ax, "offset k", "PE(p) · PE(p + k)",
               f"The dot product depends on the offset only (d_model = {d}; the two curves coincide)")
    save(f, os.path.join(out, "fig", "sinusoid_dot.png"))


if __name__ == "__main__":
    main()
