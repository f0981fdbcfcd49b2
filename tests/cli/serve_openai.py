"""OpenAI's own Python client (PyPI's `openai`, in a venv: tests/cli/test_serve_openai.sh makes it)
talking to tfm serve: /v1/models, /v1/completions (plain and streamed), /v1/embeddings (the client's
default base64 and "float", with usage), errors as the client's exceptions (their message, type
and param read from OpenAI's error shape). Each reply is also validated
against the client's pydantic types (model_validate: every required field, every type), which the
client itself does not do when it parses.

usage: serve_openai.py BASE_URL KEY PROMPT GENERATED EMBED.npy SENTENCES.txt
GENERATED is what `tfm generate` printed for the prompt with max_tokens 12, temperature 0.8,
top_k 20, top_p 0.9, seed 7; EMBED.npy what `tfm embed --npy` wrote for the sentences.
Prints "ok: ..." or "FAIL: ..." per check.
"""
import struct
import sys

import openai
from openai.types import Completion, CreateEmbeddingResponse, Embedding, Model

base_url, key, prompt, generated, npy, sentences_file = sys.argv[1:7]
sentences = open(sentences_file, encoding="utf-8").read().splitlines()
raw = open(npy, "rb").read()
start = 10 + struct.unpack("<H", raw[8:10])[0]
cli = struct.unpack("<%df" % ((len(raw) - start) // 4), raw[start:])
f32 = lambda x: struct.unpack("f", struct.pack("f", x))[0]


def check(label, cond, detail=""):
    print(("ok: " if cond else "FAIL: ") + label + ("" if cond else " (%s)" % detail))


def guarded(label, fn):
    try:
        fn()
    except Exception as e:  # a client exception is a failed check, not a crash
        check(label, False, ("%s: %s" % (type(e).__name__, e)).replace("\n", " | "))


client = openai.OpenAI(base_url=base_url, api_key=key, max_retries=0, timeout=30)
settings = dict(model="lm", prompt=prompt, max_tokens=12, temperature=0.8, top_p=0.9, seed=7, extra_body={"top_k": 20})


def models():
    page = client.models.list()
    ids = [m.id for m in page.data]
    check("models.list: the ids", ids == ["mt", "lm", "bert_tiny"], ids)
    check("models.list: each a valid Model", all(Model.model_validate(m.to_dict()) for m in page.data))


def completion():
    c = client.completions.create(**settings)
    check("completions.create: a valid Completion", Completion.model_validate(c.to_dict()) is not None)
    check("completions.create: prompt + text == tfm generate", prompt + c.choices[0].text == generated,
          repr(prompt + c.choices[0].text))
    check("completions.create: finish_reason, usage",
          c.choices[0].finish_reason in ("stop", "length") and c.usage is not None and
          c.usage.total_tokens == c.usage.prompt_tokens + c.usage.completion_tokens, c.to_dict())


def streamed():
    chunks = list(client.completions.create(stream=True, **settings))
    # a chunk's finish_reason is null but in the last one, as OpenAI's own stream (the type says
    # otherwise): the rest of each chunk is validated
    def valid(k):
        d = k.to_dict()
        for c in d["choices"]:
            c["finish_reason"] = c["finish_reason"] or "length"
        return Completion.model_validate(d) is not None
    check("completions.create(stream=True): each chunk a valid Completion (but finish_reason null)",
          len(chunks) >= 2 and all(valid(k) for k in chunks), len(chunks))
    text = "".join(k.choices[0].text for k in chunks)
    check("completions.create(stream=True): the chunks add up to tfm generate's text", prompt + text == generated,
          repr(prompt + text))
    check("completions.create(stream=True): only the last chunk has a finish_reason",
          all(k.choices[0].finish_reason is None for k in chunks[:-1]) and
          chunks[-1].choices[0].finish_reason in ("stop", "length"))


def embeddings(fmt):
    kw = {} if fmt is None else {"encoding_format": fmt}
    e = client.embeddings.create(model="bert_tiny", input=sentences, **kw)
    label = "embeddings.create(%s)" % ("the client's default, base64" if fmt is None else fmt)
    got = [x for d in e.data for x in d.embedding]
    check(label + ": tfm embed's floats, bit for bit",
          len(got) == len(cli) and all(f32(x) == y for x, y in zip(got, cli)), "%d floats" % len(got))
    check(label + ": each item a valid Embedding", all(Embedding.model_validate(d.to_dict()) for d in e.data))
    check(label + ": a valid CreateEmbeddingResponse, usage included",
          CreateEmbeddingResponse.model_validate(e.to_dict()) is not None and e.usage.prompt_tokens > 0 and
          e.usage.total_tokens == e.usage.prompt_tokens, e.to_dict().get("usage"))


def errors():
    try:
        client.completions.create(model="nope", prompt="x")
        check("an unknown model: BadRequestError", False, "no exception")
    except openai.BadRequestError as e:
        # OpenAI's {"error": {"message", "type", "param", "code"}}: the client puts the inner object
        # in e.body and its fields in e.type, e.param, e.code
        check("an unknown model: BadRequestError (400), its message naming the field, type and param",
              e.status_code == 400 and isinstance(e.body, dict) and e.body.get("message", "").startswith("model: ") and
              "nope" in e.body["message"] and e.type == "invalid_request_error" and e.param == "model" and
              e.code is None, e.body)
    try:
        client.completions.create(model="lm", prompt="x", max_tokens=-1)
        check("max_tokens -1: BadRequestError", False, "no exception")
    except openai.BadRequestError as e:
        check("max_tokens -1: BadRequestError, param max_tokens",
              e.param == "max_tokens" and "max_tokens: must be an integer" in e.body["message"], e.body)
    bad = openai.OpenAI(base_url=base_url, api_key=key + "x", max_retries=0, timeout=30)
    try:
        bad.models.list()
        check("a wrong key: PermissionDeniedError", False, "no exception")
    except openai.PermissionDeniedError as e:
        check("a wrong key: PermissionDeniedError (403), its message",
              e.status_code == 403 and e.type == "authentication_error" and
              e.body.get("message") == "api_key: wrong API key", e.body)


guarded("models", models)
guarded("completion", completion)
guarded("streamed completion", streamed)
guarded("embeddings, base64", lambda: embeddings(None))
guarded("embeddings, float", lambda: embeddings("float"))
guarded("errors", errors)
