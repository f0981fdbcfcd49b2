"""A load client for tfm serve's load and fault tests (tests/cli/test_serve_load.sh,
test_serve_faults.sh): many clients at once over loopback, a mix of routes and of bad requests,
each reply checked. Python's standard library only (threads, http.client, sockets): no build step,
no package to install, and a thread per client keeps each client's requests in order and its
checks exact (a curl per request would spend the shared machine's CPU on forks instead).

usage: serve_load.py MODE PORT PID CLIENTS SECONDS REFS.json
  MODE load:    CLIENTS clients for SECONDS, good and bad requests mixed; samples the server's
                resident memory (VmRSS of /proc/PID/status) twice a second.
  MODE sigterm: CLIENTS clients sending good requests (some long); after SECONDS the server (PID)
                gets SIGTERM; the clients go on until their connections are refused.
REFS.json: {"sentences": [...], "translations": [...] (tfm translate's), "prompt": "..."}; the
completions' and embeddings' reference texts are the server's own first answers (made before the
clients start, one at a time), test_serve.sh checks those against the command line.
Prints one JSON object: counts by request kind and outcome, the failures (up to 20), the RSS samples.
"""
import http.client
import json
import os
import random
import signal
import socket
import sys
import threading
import time

mode, port, pid, n_clients, seconds, refs_path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(
    sys.argv[4]), float(sys.argv[5]), sys.argv[6]
refs = json.load(open(refs_path, encoding="utf-8"))
SENT, TRANS, PROMPT = refs["sentences"], refs["translations"], refs["prompt"]
HOST = "127.0.0.1"
IDLE_S = 5  # half the server's --timeout in the tests (10 s)
lock = threading.Lock()
counts = {}  # "kind outcome" -> n
failures = []


def count(kind, outcome, detail=None):
    with lock:
        counts[kind + " " + outcome] = counts.get(kind + " " + outcome, 0) + 1
        if detail is not None and len(failures) < 20:
            failures.append("%s: %s" % (kind, detail))


def request(conn, method, path, body=None, ctype="application/json", headers=None):
    """One request on conn; returns (status, body bytes, headers)."""
    h = dict(headers or {})
    if body is not None:
        h["Content-Type"] = ctype
    conn.request(method, path, body=body, headers=h)
    r = conn.getresponse()
    data = r.read()
    return r.status, data, r


def completion_body(seed, stream):
    return json.dumps({"model": "lm", "prompt": PROMPT, "max_tokens": 8, "seed": seed, "stream": stream})


def sse_text(data):
    """The text of a Server-Sent Events reply, or None if it does not end with [DONE]."""
    events = [l[6:] for l in data.decode("utf-8").split("\n") if l.startswith("data: ")]
    if not events or events[-1] != "[DONE]":
        return None
    return "".join(json.loads(e)["choices"][0]["text"] for e in events[:-1])


# Reference answers of the server itself, one request at a time, before the load.
ref_conn = http.client.HTTPConnection(HOST, port, timeout=60)
REF_COMPLETION = {}
for seed in (1, 2, 3, 4):
    st, data, _ = request(ref_conn, "POST", "/v1/completions", completion_body(seed, False))
    REF_COMPLETION[seed] = json.loads(data)["choices"][0]["text"]
st, data, _ = request(ref_conn, "POST", "/v1/embeddings", json.dumps({"model": "bert_tiny", "input": SENT[:2]}))
REF_EMBED = data
ref_conn.close()


# The good requests: (kind, method, path, body, content type, check(status, body) -> None or a complaint).
def good_requests(rng):
    i = rng.randrange(len(SENT))
    j = rng.randrange(len(SENT) - 3)
    seed = rng.choice((1, 2, 3, 4))

    def want_json(pred):
        def check(st, data):
            if st != 200:
                return "status %d: %s" % (st, data[:200])
            try:
                return None if pred(json.loads(data)) else "body %s" % data[:200]
            except ValueError:
                return "not JSON: %s" % data[:200]
        return check

    def want_sse(st, data):
        if st != 200:
            return "status %d: %s" % (st, data[:200])
        t = sse_text(data)
        return None if t == REF_COMPLETION[seed] else "streamed %r, want %r" % (t, REF_COMPLETION[seed])

    def want_embed(st, data):
        return None if st == 200 and data == REF_EMBED else "status %d, not the reference embeddings" % st

    def want_200(st, data):
        return None if st == 200 and data else "status %d" % st

    from urllib.parse import urlencode
    return [
        (4, ("translate", "POST", "/translate",
             json.dumps({"q": SENT[i], "source": "en", "target": "es"}), "application/json",
             want_json(lambda j_: j_["translatedText"] == TRANS[i]))),
        (2, ("translate-array", "POST", "/translate",
             json.dumps({"q": SENT[j:j + 3], "source": "en", "target": "es"}), "application/json",
             want_json(lambda j_: j_["translatedText"] == TRANS[j:j + 3]))),
        (1, ("translate-form", "POST", "/translate", urlencode({"q": SENT[i], "source": "en", "target": "es"}),
             "application/x-www-form-urlencoded", want_json(lambda j_: j_["translatedText"] == TRANS[i]))),
        (3, ("complete", "POST", "/v1/completions", completion_body(seed, False), "application/json",
             want_json(lambda j_: j_["choices"][0]["text"] == REF_COMPLETION[seed]))),
        (2, ("complete-stream", "POST", "/v1/completions", completion_body(seed, True), "application/json", want_sse)),
        (2, ("embed", "POST", "/v1/embeddings", json.dumps({"model": "bert_tiny", "input": SENT[:2]}),
             "application/json", want_embed)),
        (1, ("health", "GET", "/health", None, None, want_json(lambda j_: j_ == {"status": "ok"}))),
        (1, ("languages", "GET", "/languages", None, None, want_json(lambda j_: j_[0]["code"] == "en"))),
        (1, ("models", "GET", "/v1/models", None, None, want_json(lambda j_: len(j_["data"]) == 3))),
        (1, ("metrics", "GET", "/metrics", None, None, want_200)),
        (1, ("page", "GET", "/", None, None, want_200)),
    ]


# The bad requests, each on its own connection: (kind, raw bytes to send, the statuses accepted;
# None among them: the server may close without an answer).
def bad_request(rng):
    def http_req(method, path, body, ctype="application/json", extra=""):
        return ("%s %s HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n%s\r\n" % (
            method, path, ctype, len(body), extra)).encode() + body

    cases = [
        ("bad-json", http_req("POST", "/translate", b'{"q": "x", "source": '), (400,)),
        ("bad-utf8", http_req("POST", "/translate", b'{"q": "caf\xe9", "source": "en", "target": "es"}'), (400,)),
        ("empty-q", http_req("POST", "/translate", b'{"q": "", "source": "en", "target": "es"}'), (400,)),
        ("unknown-model", http_req("POST", "/v1/completions", b'{"model": "nope", "prompt": "x"}'), (400,)),
        ("wrong-type", http_req("POST", "/v1/completions", b'{"prompt": 3}'), (400,)),
        ("not-found", http_req("GET", "/nope", b""), (404,)),
        ("wrong-method", http_req("DELETE", "/translate", b""), (405,)),
        ("too-big", http_req("POST", "/translate", b"a" * 70000), (413, None)),
        ("garbage", b"\x00\xff\xfe GARBAGE \x01\r\n\r\n", (400, None)),
        ("cut-short", http_req("POST", "/translate", b'{"q": "x"}')[:-5], (None,)),  # closes mid-body
    ]
    return cases[rng.randrange(len(cases))]


def raw_exchange(data, half_close):
    """Sends data on a new connection; returns the status of the reply, or None without one."""
    s = socket.create_connection((HOST, port), timeout=30)
    try:
        try:
            s.sendall(data)
            if half_close:
                s.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the server answered and closed before the whole body was sent (413)
        buf = b""
        while b"\r\n" not in buf:
            try:
                chunk = s.recv(4096)
            except OSError:
                return None
            if not chunk:
                break
            buf += chunk
        if not buf.startswith(b"HTTP/1."):
            return None
        return int(buf.split(b" ", 2)[1])
    finally:
        s.close()


stop_at = time.monotonic() + seconds
terminated = threading.Event()


def load_client(k):
    rng = random.Random(k)
    conn = http.client.HTTPConnection(HOST, port, timeout=60)
    last_used = time.monotonic()
    while time.monotonic() < stop_at:
        if time.monotonic() - last_used > IDLE_S:
            # the server closes a connection idle for its --timeout (a request cut short holds this
            # client that long): a fresh one, as any HTTP client does with a stale keep-alive one
            conn.close()
            conn = http.client.HTTPConnection(HOST, port, timeout=60)
        if rng.random() < 0.15:
            kind, data, accepted = bad_request(rng)
            try:
                st = raw_exchange(data, kind == "cut-short")
            except OSError as e:
                count(kind, "error", "%s" % e)
                continue
            if st in accepted:
                count(kind, "ok")
            else:
                count(kind, "wrong", "status %s, want one of %s" % (st, accepted))
            continue
        reqs = good_requests(rng)
        kind, method, path, body, ctype, check = rng.choices([r for _, r in reqs], [w for w, _ in reqs])[0]
        try:
            st, data, _ = request(conn, method, path, body, ctype)
        except (OSError, http.client.HTTPException) as e:
            count(kind, "error", "%s: %s" % (type(e).__name__, e))
            conn.close()
            conn = http.client.HTTPConnection(HOST, port, timeout=60)
            continue
        last_used = time.monotonic()
        complaint = check(st, data)
        count(kind, "ok" if complaint is None else "wrong", complaint)
    conn.close()


def sigterm_client(k):
    """Good requests until the server refuses connections; half the clients keep their connection
    alive, half open one per request; one in eight requests is long (40 sentences)."""
    rng = random.Random(k)
    keep = k % 2 == 0
    conn = None
    deadline = time.monotonic() + seconds + 30
    while time.monotonic() < deadline:
        long_one = rng.random() < 0.125
        if long_one:
            j = rng.randrange(len(SENT) - 40) if len(SENT) > 40 else 0
            kind, body = "translate-long", json.dumps({"q": SENT[j:j + 40], "source": "en", "target": "es"})
            want = TRANS[j:j + 40]
        else:
            i = rng.randrange(len(SENT))
            kind, body, want = "translate", json.dumps({"q": SENT[i], "source": "en", "target": "es"}), TRANS[i]
        after = terminated.is_set()
        fresh = conn is None
        if conn is None:
            conn = http.client.HTTPConnection(HOST, port, timeout=60)
            try:
                conn.connect()
            except ConnectionRefusedError:
                count(kind, "refused" + (" after SIGTERM" if after else " before SIGTERM"))
                conn = None
                if after:
                    return
                continue
            except OSError as e:
                count(kind, "error", "connect: %s" % e)
                conn = None
                continue
        sent = False
        try:
            conn.request("POST", "/translate", body=body, headers={"Content-Type": "application/json"})
            sent = True
            r = conn.getresponse()
            data = r.read()
            ok = r.status == 200 and json.loads(data)["translatedText"] == want
            count(kind, "answered" if ok else "wrong", None if ok else "status %d: %s" % (r.status, data[:200]))
            if r.getheader("Connection", "").lower() == "close" or not keep:
                conn.close()
                conn = None
        except (OSError, http.client.HTTPException) as e:
            # no reply: a request the server had read and dropped, unless it never got it. A new
            # connection reset after SIGTERM was one the kernel had queued but the server never
            # accepted (docs/SERVE.md: reset when the listening socket closes); the server's own
            # log (no request "cut by the shutdown") is the referee for the ones it accepted.
            if fresh and isinstance(e, ConnectionResetError) and terminated.is_set():
                count(kind, "reset unaccepted after SIGTERM")
                conn.close()
                return
            count(kind, "dropped" + (" after SIGTERM" if terminated.is_set() else ""),
                  "%s: %s (request %s)" % (type(e).__name__, e, "sent" if sent else "not sent"))
            conn.close()
            conn = None


def rss_kb():
    try:
        for line in open("/proc/%d/status" % pid):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None


rss = []
threads = [threading.Thread(target=load_client if mode == "load" else sigterm_client, args=(k,), daemon=True)
           for k in range(n_clients)]
t0 = time.monotonic()
for t in threads:
    t.start()
if mode == "load":
    while any(t.is_alive() for t in threads):
        rss.append([round(time.monotonic() - t0, 1), rss_kb()])
        time.sleep(0.5)
else:
    time.sleep(seconds)
    terminated.set()
    os.kill(pid, signal.SIGTERM)
for t in threads:
    t.join(timeout=120)
print(json.dumps({"counts": counts, "failures": failures, "rss_kb": rss, "seconds": round(time.monotonic() - t0, 1),
                  "stuck_clients": sum(t.is_alive() for t in threads)}))
