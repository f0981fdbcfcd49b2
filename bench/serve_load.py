#!/usr/bin/env python3
"""tfm serve under load (docs/SERVE.md "Benchmark"): throughput and latency of /translate and
/v1/completions at 1, 8, 32 and 64 concurrent clients, against the offline command line.

Translation: every line of --input is one POST /translate (one sentence per request); C client
threads take the next line as soon as their last answer is in. Reported per level: sentences/s,
output tokens/s (the server's tfm_serve_tokens_out_total over the level), and the latency
p50/p95/p99 of one request (send to full reply). The offline reference is `tfm translate` of the
whole file (sorted, batched: the best the model can do), timed without its model load (a 1-line
run's time is subtracted), and `tfm translate` of one sentence (the first line), its time minus
the load, which the 1-client median latency is compared with (the issue's bars: >= 80 % of the
offline throughput at 32 clients; <= 1.2x the CLI's one-sentence time at 1 client).

Completions (with --lm): every line's first --prompt-words words are a prompt, --max-tokens tokens
each, temperature 0 (greedy), seed 1; the offline reference is `tfm generate` per prompt (its
load subtracted the same way) run one after another.

Only the standard library; the server is started here (--port 0) and stopped with SIGTERM.

    bench/serve_load.py --tfm build/tfm --model out/demo/model.best.safetensors@en:es \\
        --input data/bible-en-es/test.en --lm lm.safetensors --threads 2 --out /tmp/serve_load.md

Run it on a quiet machine: the numbers are wall-clock times. --levels 1,8 --limit 5 checks that it
runs (tests/cli/test_serve_batch.sh does, on a tiny model)."""

import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time


def percentile(xs, p):
    """The p-th percentile (nearest rank) of xs, in the units of xs."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    k = max(0, min(len(s) - 1, int(round(p / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


class Server:
    """tfm serve on a free port, waited for until /health says 200."""

    def __init__(self, tfm, args):
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([tfm, "serve", "--port", "0"] + args, stderr=self.log)
        self.port = None
        deadline = time.time() + 60
        while time.time() < deadline and self.port is None:
            self.log.seek(0)
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", self.log.read())
            if m:
                self.port = int(m.group(1))
            elif self.proc.poll() is not None:
                break
            else:
                time.sleep(0.05)
        while self.port and time.time() < deadline:
            try:
                if self.request("GET", "/health")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        self.log.seek(0)
        sys.exit("tfm serve did not start: " + self.log.read()[-2000:])

    def request(self, method, path, body=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        headers = {"Content-Type": "application/json"} if body is not None else {}
        conn.request(method, path, json.dumps(body) if body is not None else None, headers)
        r = conn.getresponse()
        data = r.read()
        conn.close()
        return r.status, data

    def metric(self, name):
        status, data = self.request("GET", "/metrics")
        m = re.search(r"^%s (\S+)$" % re.escape(name), data.decode(), re.M)
        return float(m.group(1)) if status == 200 and m else float("nan")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def load(server, path, bodies, clients):
    """POSTs every body with `clients` threads; returns (wall seconds, latencies, failures)."""
    lat, failed, lock, nxt = [], [0], threading.Lock(), [0]

    def worker():
        while True:
            with lock:
                i = nxt[0]
                nxt[0] += 1
            if i >= len(bodies):
                return
            t0 = time.perf_counter()
            try:
                status, _ = server.request("POST", path, bodies[i])
            except OSError:
                status = 0
            dt = time.perf_counter() - t0
            with lock:
                if status == 200:
                    lat.append(dt)
                else:
                    failed[0] += 1

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - t0, lat, failed[0]


def levels_rows(server, route, path, bodies, levels):
    """A table row per level of concurrent clients: requests/s, tokens/s, latency percentiles."""
    rows = []
    for c in levels:
        out0 = server.metric("tfm_serve_tokens_out_total")
        wall, lat, failed = load(server, path, bodies, c)
        toks = server.metric("tfm_serve_tokens_out_total") - out0
        rows.append((route, "%d clients" % c, len(lat) / wall, toks / wall, percentile(lat, 50), percentile(lat, 95),
                     percentile(lat, 99), failed))
    return rows


def timed(cmd):
    """Seconds a command takes (it must succeed)."""
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tfm", default="build/tfm")
    ap.add_argument("--model", required=True, help="translation model as PATH@SRC:TGT")
    ap.add_argument("--input", required=True, help="source sentences, one per line")
    ap.add_argument("--lm", help="a decoder-only model: also benchmark /v1/completions")
    ap.add_argument("--levels", default="1,8,32,64", help="concurrent clients, comma-separated")
    ap.add_argument("--limit", type=int, default=0, help="only the first N lines (0: all)")
    ap.add_argument("--threads", type=int, default=2, help="tfm serve --threads")
    ap.add_argument("--serve-args", default="", help="more tfm serve flags (e.g. '--beam 4 --batch-size 32')")
    ap.add_argument("--translate-args", default="", help="the same decoding flags for tfm translate")
    ap.add_argument("--max-tokens", type=int, default=32, help="completion tokens per prompt")
    ap.add_argument("--prompt-words", type=int, default=4)
    ap.add_argument("--out", help="also write the table here (markdown)")
    a = ap.parse_args()
    path, _, pair = a.model.rpartition("@")
    src, _, tgt = pair.partition(":")
    if not path or not src or not tgt:
        sys.exit("--model must be PATH@SRC:TGT")
    with open(a.input, encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f if l.strip()]
    if a.limit:
        lines = lines[: a.limit]
    levels = [int(x) for x in a.levels.split(",")]
    rows = []

    with tempfile.TemporaryDirectory() as tmp:
        # offline: the whole file, minus a one-line run (the model load and start-up)
        whole, one, empty = (os.path.join(tmp, n) for n in ("in.txt", "one.txt", "empty.txt"))
        open(empty, "w").close()
        with open(whole, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        with open(one, "w", encoding="utf-8") as f:
            f.write(lines[0] + "\n")
        tr = [a.tfm, "translate", "--model", path] + a.translate_args.split()
        t_empty = min(timed(tr + ["--input", empty, "--output", os.path.join(tmp, "o0")]) for _ in range(3))
        t_one = min(timed(tr + ["--input", one, "--output", os.path.join(tmp, "o1")]) for _ in range(3)) - t_empty
        t_all = timed(tr + ["--input", whole, "--output", os.path.join(tmp, "o2")]) - t_empty
        rows.append(("translate", "offline tfm translate", len(lines) / t_all, float("nan"), t_one, t_one, t_one, 0))

        server = Server(a.tfm, ["--model", a.model, "--threads", str(a.threads), "--max-queue", "1000"]
                        + (["--model", a.lm] if a.lm else []) + a.serve_args.split())
        try:
            bodies = [{"q": l, "source": src, "target": tgt} for l in lines]
            rows += levels_rows(server, "translate", "/translate", bodies, levels)
            if a.lm:
                prompts = [" ".join(l.split()[: a.prompt_words]) for l in lines]
                gen = [a.tfm, "generate", "--model", a.lm, "--max-tokens", str(a.max_tokens), "--temperature", "0"]
                t_load = min(timed(gen[:4] + ["--max-tokens", "0"]) for _ in range(3))
                per = [timed(gen + ["--prompt", p]) - t_load for p in prompts]
                rows.append(("completions", "offline tfm generate (one by one)", len(per) / sum(per), float("nan"),
                             percentile(per, 50), percentile(per, 95), percentile(per, 99), 0))
                bodies = [{"prompt": p, "max_tokens": a.max_tokens, "temperature": 0, "seed": 1} for p in prompts]
                rows += levels_rows(server, "completions", "/v1/completions", bodies, levels)
        finally:
            server.stop()

    table = ["| route | run | requests/s | tokens out/s | p50 ms | p95 ms | p99 ms | failed |", "|---|---|---|---|---|---|---|---|"]
    for route, run, rps, tps, p50, p95, p99, failed in rows:
        table.append("| %s | %s | %.2f | %s | %.1f | %.1f | %.1f | %d |" % (
            route, run, rps, "-" if tps != tps else "%.1f" % tps, 1e3 * p50, 1e3 * p95, 1e3 * p99, failed))
    table.append("")
    table.append("%d sentences of %s; tfm serve --threads %d %s; offline: the file's time minus an empty run's "
                 "(model load); the offline p50 is one sentence's time." % (len(lines), a.input, a.threads, a.serve_args))
    print("\n".join(table))
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write("\n".join(table) + "\n")
    return 1 if any(r[7] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
