#!/usr/bin/env python3
"""gemini_mock.py - a mock of the Gemini REST API (Developer API, v1beta).

Tests must never touch the network; this server speaks the real wire format
on a loopback address instead.  Python 3 standard library only.

It is also the offline demo model: without a Gemini API key, `make demo`
runs it with --demo in Gemini's place (scripts/demo.sh), so the demo works
offline.  See "The offline demo model" in tests/mock/README.md.

    python3 tests/mock/gemini_mock.py --port 0 --port-file FILE [--host 127.0.0.1]

Routes (the Gemini part):
    POST /v1beta/models/{model}:generateContent
    POST /v1beta/models/{model}:streamGenerateContent?alt=sse
Control routes (not part of Gemini):
    GET  /__mock/requests[?since=SEQ]   every recorded API request (JSON array)
    POST /__mock/reset                  clear records, counters, signature registry
    POST /__mock/scenario               {"name": "...", k: v...} sets the default scenario
    GET  /__mock/scenario               the default scenario
    GET  /__mock/health                 200 {"ok": true, ...}

The scenario of a request comes from a marker "[[mock:NAME k=v ...]]" in the
first user text of `contents`, else the header "x-mock-scenario: NAME k=v ...",
else the default set through /__mock/scenario, else "text".

tests/mock/README.md documents every scenario, every validation rule and
which answers are real recorded payloads and which are synthesized.
"""

import argparse
import base64
import copy
import gzip
import hashlib
import hmac
import http.server
import ipaddress
import json
import os
import re
import select
import shlex
import signal
import socket
import socketserver
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_FIXTURES = os.path.join(HERE, "..", "data", "gemini-fixtures")

# Model ids the mock serves (docs/internals/gemini-wire.md §9: current models).  Anything
# else, e.g. the retired gemini-2.0-flash, gets the real 404 body.
KNOWN_MODELS = [
    "gemini-3.8-flash", "gemini-3.7-flash", "gemini-3.6-flash",
    "gemini-3.5-flash", "gemini-3.5-flash-lite", "gemini-3.1-flash-lite",
    "gemini-3.1-pro-preview", "gemini-3-flash-preview",
    "gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite",
]

# Real payloads served verbatim (or with the one substitution noted in the
# README).  Names are those of the shared gemini-fixtures, copied to tests/data.
FIXTURE_FILES = [
    "e400-api-key-invalid.array-wrapped.json",
    "e400-function-response-count-mismatch.array-wrapped.json",
    "e400-invalid-json-payload-unknown-field.json",
    "e400-thought-signature-missing.json",
    "e403-permission-denied.json",
    "e404-model-not-found.json",
    "e429-resource-exhausted-retryinfo.json",
    "e429-resource-exhausted-vertex-style.array-wrapped.json",
    "e500-internal.json",
    "e500-internal.midstream-chunk.json",
    "e503-unavailable-high-demand.json",
    "e503-unavailable-overloaded.json",
    "08-thought-part-max-tokens.response.json",
    "13-prompt-blocked-safety.response.json",
    "14-candidate-finish-safety.response.json",
]

TYPE_PREFIX = "type.googleapis.com/google.ai.generativelanguage.v1beta."
BAD_REQUEST_TYPE = "type.googleapis.com/google.rpc.BadRequest"

# The one part field the mock emits that no client knows.  It stands for the
# fields Google adds without notice; the mock accepts it back on replay, as
# the real API accepts its own fields.
MOCK_PART_FIELD = "mockFutureField"
MOCK_PART_FIELD_VALUE = "unknown part field: keep it when replaying"

FUNCTION_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$")
FUNCTION_NAME_MSG = ("Invalid function name. Must start with a letter or an underscore. "
                     "Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.) or "
                     "dashes (-), with a maximum length of 64.")

STATUS_NAMES = {
    400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
    404: "NOT_FOUND", 408: "DEADLINE_EXCEEDED", 409: "ABORTED",
    429: "RESOURCE_EXHAUSTED", 499: "CANCELLED", 500: "INTERNAL",
    501: "UNIMPLEMENTED", 502: "UNAVAILABLE", 503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
REASONS = {
    200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
    404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout",
    409: "Conflict", 413: "Payload Too Large", 429: "Too Many Requests",
    499: "Client Closed Request", 500: "Internal Server Error",
    501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
    504: "Gateway Timeout",
}

MAX_BODY = 32 * 1024 * 1024


class PeerGone(Exception):
    """The client closed its connection while the mock was waiting to answer."""


class MockError(Exception):
    """A problem with the test's own use of the mock (bad marker, param...)."""


# ---------------------------------------------------------------------------
# Small helpers

def monotonic_ms():
    """time.monotonic() in ms (3 decimals): CLOCK_MONOTONIC, the clock a
    test reading /__mock/connections can compare its own times with."""
    return round(time.monotonic() * 1000.0, 3)


def camel_to_snake(name):
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def snake_to_camel(name):
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), name)


def normalize_numbers(value):
    """Integral floats become ints, so 2 and 2.0 fingerprint alike (args is a
    protobuf Struct: every number is a double)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 53:
        return int(value)
    if isinstance(value, dict):
        return {k: normalize_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalize_numbers(v) for v in value]
    return value


def canon(value):
    return json.dumps(normalize_numbers(value), sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def tokens(text):
    """A deterministic stand-in for a token count."""
    if not text:
        return 0
    return max(1, (len(text) + 3) // 4)


def compact(value, limit=200):
    s = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if len(s) > limit:
        s = s[:limit] + "..."
    return s


def split_text(text, n):
    """Split text into at most n non-empty pieces at word boundaries; the
    pieces concatenate back to text exactly."""
    if n <= 1 or len(text) < 2:
        return [text]
    spaces = [i for i, ch in enumerate(text) if ch == " " and i > 0]
    if not spaces:
        step = max(1, len(text) // n)
        cuts = list(range(step, len(text), step))[: n - 1]
    else:
        cuts = []
        for k in range(1, n):
            target = len(text) * k // n
            best = min(spaces, key=lambda i: abs(i - target))
            if best not in cuts:
                cuts.append(best)
        cuts.sort()
    pieces, prev = [], 0
    for c in cuts:
        if c > prev:
            pieces.append(text[prev:c])
            prev = c
    pieces.append(text[prev:])
    return [p for p in pieces if p] or [text]


def sse_dumps(obj):
    # Same separators as the raw captures (fixtures 09a/10a): "key": value,"next"
    return json.dumps(obj, separators=(",", ": "), ensure_ascii=False)


def pretty(obj):
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def replace_strings(value, old, new):
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [replace_strings(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: replace_strings(v, old, new) for k, v in value.items()}
    return value


def first_error(obj):
    """The error object inside {error} or [{error}]."""
    if isinstance(obj, list) and obj:
        obj = obj[0]
    return obj["error"]


def parse_scenario_spec(spec):
    """'NAME k=v k2="v 2"' -> (name, {k: v}).  shlex quoting rules."""
    try:
        words = shlex.split(spec)
    except ValueError as exc:
        raise MockError("cannot parse scenario %r: %s" % (spec, exc))
    if not words:
        raise MockError("empty scenario")
    name, params = words[0], {}
    for w in words[1:]:
        if "=" not in w:
            raise MockError("scenario parameter %r is not key=value" % w)
        k, v = w.split("=", 1)
        params[k] = v
    return name, params


MARKER_RE = re.compile(r"\[\[mock:(.*?)\]\]", re.S)


# ---------------------------------------------------------------------------
# Request schema (proto3 JSON mapping).  Types:
#   "string" "bool" "int" "float" "bytes" "struct" "value" "any"
#   ("msg", Name)  ("list", T)  ("map", T)  ("enum", Name, values)

def enum(name, *values):
    return ("enum", name, values)


TYPE_ENUM = enum("Type", "TYPE_UNSPECIFIED", "STRING", "NUMBER", "INTEGER", "BOOLEAN",
                 "ARRAY", "OBJECT", "NULL")

MESSAGES = {
    "GenerateContentRequest": {
        "model": "string",
        "contents": ("list", ("msg", "Content")),
        "systemInstruction": ("msg", "Content"),
        "tools": ("list", ("msg", "Tool")),
        "toolConfig": ("msg", "ToolConfig"),
        "safetySettings": ("list", ("msg", "SafetySetting")),
        "generationConfig": ("msg", "GenerationConfig"),
        "cachedContent": "string",
        "serviceTier": "any",
    },
    "Content": {
        "role": "string",
        "parts": ("list", ("msg", "Part")),
    },
    "Part": {
        "text": "string",
        "inlineData": ("msg", "Blob"),
        "functionCall": ("msg", "FunctionCall"),
        "functionResponse": ("msg", "FunctionResponse"),
        "fileData": ("msg", "FileData"),
        "executableCode": "any",
        "codeExecutionResult": "any",
        "thought": "bool",
        "thoughtSignature": "bytes",
        "videoMetadata": "any",
        "partMetadata": "struct",
        "mediaResolution": "any",
        MOCK_PART_FIELD: "any",
    },
    "Blob": {"mimeType": "string", "data": "bytes", "displayName": "string"},
    "FileData": {"mimeType": "string", "fileUri": "string", "displayName": "string"},
    "FunctionCall": {"id": "string", "name": "string", "args": "struct"},
    "FunctionResponse": {
        "id": "string", "name": "string", "response": "struct",
        "parts": ("list", ("msg", "FunctionResponsePart")),
        "willContinue": "bool", "scheduling": "any",
    },
    "FunctionResponsePart": {"inlineData": ("msg", "Blob")},
    "Tool": {
        "functionDeclarations": ("list", ("msg", "FunctionDeclaration")),
        "googleSearchRetrieval": "any", "codeExecution": "any", "googleSearch": "any",
        "urlContext": "any", "fileSearch": "any", "computerUse": "any", "googleMaps": "any",
    },
    "FunctionDeclaration": {
        "name": "string", "description": "string",
        "behavior": enum("Behavior", "UNSPECIFIED", "BLOCKING", "NON_BLOCKING"),
        "parameters": ("msg", "Schema"), "parametersJsonSchema": "value",
        "response": ("msg", "Schema"), "responseJsonSchema": "value",
    },
    "Schema": {
        "type": TYPE_ENUM, "format": "string", "title": "string", "description": "string",
        "nullable": "bool", "enum": ("list", "string"),
        "items": ("msg", "Schema"), "minItems": "int", "maxItems": "int",
        "properties": ("map", ("msg", "Schema")), "required": ("list", "string"),
        "minProperties": "int", "maxProperties": "int",
        "propertyOrdering": ("list", "string"),
        "minLength": "int", "maxLength": "int", "pattern": "string",
        "minimum": "float", "maximum": "float",
        "example": "value", "default": "value",
        "anyOf": ("list", ("msg", "Schema")),
    },
    "ToolConfig": {
        "functionCallingConfig": ("msg", "FunctionCallingConfig"),
        "retrievalConfig": "any",
        "includeServerSideToolInvocations": "bool",
    },
    "FunctionCallingConfig": {
        "mode": enum("FunctionCallingConfig.Mode", "MODE_UNSPECIFIED", "AUTO", "ANY",
                     "NONE", "VALIDATED"),
        "allowedFunctionNames": ("list", "string"),
    },
    "SafetySetting": {
        "category": enum("HarmCategory", "HARM_CATEGORY_UNSPECIFIED",
                         "HARM_CATEGORY_DEROGATORY", "HARM_CATEGORY_TOXICITY",
                         "HARM_CATEGORY_VIOLENCE", "HARM_CATEGORY_SEXUAL",
                         "HARM_CATEGORY_MEDICAL", "HARM_CATEGORY_DANGEROUS",
                         "HARM_CATEGORY_HARASSMENT", "HARM_CATEGORY_HATE_SPEECH",
                         "HARM_CATEGORY_SEXUALLY_EXPLICIT",
                         "HARM_CATEGORY_DANGEROUS_CONTENT",
                         "HARM_CATEGORY_CIVIC_INTEGRITY"),
        "threshold": enum("SafetySetting.HarmBlockThreshold",
                          "HARM_BLOCK_THRESHOLD_UNSPECIFIED", "BLOCK_LOW_AND_ABOVE",
                          "BLOCK_MEDIUM_AND_ABOVE", "BLOCK_ONLY_HIGH", "BLOCK_NONE",
                          "OFF"),
    },
    "GenerationConfig": {
        "stopSequences": ("list", "string"), "responseMimeType": "string",
        "responseSchema": ("msg", "Schema"), "responseJsonSchema": "value",
        "responseModalities": ("list", "any"), "candidateCount": "int",
        "maxOutputTokens": "int", "temperature": "float", "topP": "float",
        "topK": "int", "seed": "int", "presencePenalty": "float",
        "frequencyPenalty": "float", "responseLogprobs": "bool", "logprobs": "int",
        "enableEnhancedCivicAnswers": "bool", "speechConfig": "any",
        "thinkingConfig": ("msg", "ThinkingConfig"), "imageConfig": "any",
        "mediaResolution": "any",
    },
    "ThinkingConfig": {
        "includeThoughts": "bool", "thinkingBudget": "int",
        "thinkingLevel": enum("ThinkingConfig.ThinkingLevel", "THINKING_LEVEL_UNSPECIFIED",
                              "MINIMAL", "LOW", "MEDIUM", "HIGH"),
    },
}

PART_DATA_FIELDS = ["text", "inlineData", "functionCall", "functionResponse",
                    "fileData", "executableCode", "codeExecutionResult"]

SCALAR_TYPE_NAMES = {"string": "TYPE_STRING", "bool": "TYPE_BOOL", "int": "TYPE_INT32",
                     "float": "TYPE_FLOAT", "bytes": "TYPE_BYTES"}


def type_label(typ):
    if isinstance(typ, tuple):
        if typ[0] == "msg":
            return TYPE_PREFIX + typ[1]
        if typ[0] == "enum":
            return TYPE_PREFIX + typ[1]
        if typ[0] in ("list", "map"):
            return type_label(typ[1])
    if typ == "struct":
        return "type.googleapis.com/google.protobuf.Struct"
    return SCALAR_TYPE_NAMES.get(typ, "TYPE_MESSAGE")


class ProtoWalker:
    """Checks a request against MESSAGES like the proto3 JSON parser does,
    and returns a copy with camelCase field names (snake_case is accepted on
    input).  Problems go to self.violations as (field, description)."""

    def __init__(self):
        self.violations = []

    def bad_value(self, path, typ, value):
        if isinstance(value, list) and not (isinstance(typ, tuple) and typ[0] == "list"):
            desc = "Invalid JSON payload received. Proto field is not repeating, cannot start list."
        else:
            desc = "Invalid value at '%s' (%s), %s" % (
                path, type_label(typ), json.dumps(value, ensure_ascii=False)[:200])
        self.violations.append((path, desc))

    def walk(self, value, typ, path):
        if value is None and typ not in ("value", "any"):
            return None
        if typ in ("value", "any"):
            return value
        if typ == "struct":
            if not isinstance(value, dict):
                self.bad_value(path, typ, value)
            return value
        if typ in ("string", "bytes"):
            if not isinstance(value, str):
                self.bad_value(path, typ, value)
            return value
        if typ == "bool":
            if not isinstance(value, bool):
                self.bad_value(path, typ, value)
            return value
        if typ == "int":
            ok = (isinstance(value, int) and not isinstance(value, bool)) or \
                 (isinstance(value, float) and value.is_integer()) or \
                 (isinstance(value, str) and re.fullmatch(r"-?\d+", value) is not None)
            if not ok:
                self.bad_value(path, typ, value)
            return value
        if typ == "float":
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not ok:
                self.bad_value(path, typ, value)
            return value
        kind = typ[0]
        if kind == "enum":
            values = typ[2]
            if isinstance(value, str) and value.upper() in values:
                return value
            if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(values):
                return value
            self.bad_value(path, typ, value)
            return value
        if kind == "list":
            if not isinstance(value, list):
                self.bad_value(path, typ, value)
                return value
            return [self.walk(v, typ[1], "%s[%d]" % (path, i)) for i, v in enumerate(value)]
        if kind == "map":
            if not isinstance(value, dict):
                self.bad_value(path, typ, value)
                return value
            return {k: self.walk(v, typ[1], "%s[%d].value" % (path, i))
                    for i, (k, v) in enumerate(value.items())}
        if kind == "msg":
            if not isinstance(value, dict):
                self.bad_value(path, typ, value)
                return value
            fields = MESSAGES[typ[1]]
            out = {}
            for key, v in value.items():
                camel = key if key in fields else snake_to_camel(key)
                if camel not in fields or (camel != key and camel_to_snake(camel) != key):
                    where = " at '%s'" % path if path else ""
                    self.violations.append((path, 'Invalid JSON payload received. Unknown name "%s"%s: '
                                                  'Cannot find field.' % (key, where)))
                    continue
                sub = camel_to_snake(camel)
                r = self.walk(v, fields[camel], "%s.%s" % (path, sub) if path else sub)
                if r is not None:
                    out[camel] = r
            return out
        raise AssertionError(typ)


# ---------------------------------------------------------------------------
# Shared state

class State:
    def __init__(self, seed, fixtures_dir, models):
        self.lock = threading.Lock()
        self.seed = str(seed)
        self.secret = hashlib.sha256(("gemini-mock:" + self.seed).encode()).digest()
        self.models = set(models)
        self.fixtures = {}
        for name in FIXTURE_FILES:
            with open(os.path.join(fixtures_dir, name), encoding="utf-8") as fh:
                self.fixtures[name] = json.load(fh)
        self.stop = threading.Event()
        self.conn_counter = 0
        self.conns = {}              # conn id -> {conn, opened_ms, closed_ms, requests}
        self.default_scenario = None  # (name, params) or None
        self.quiet = False
        self.any_model = False        # --demo: serve whatever model is asked for
        self.reset()

    def reset(self):
        with self.lock:
            # connections: the closed ones go, the open ones stay (their ids keep counting)
            self.conns = {k: c for k, c in self.conns.items() if c["closed_ms"] is None}
            self.records = []
            self.seq = 0
            self.counters = {}
            self.sig_registry = {}   # (conv, fingerprint) -> set of signatures
            self.sig_issued = {}     # signature -> fingerprint
            self.n_resp = 0
            self.n_id = 0
            self.n_sig = 0

    def fixture(self, name):
        return copy.deepcopy(self.fixtures[name])

    def next_conn(self):
        with self.lock:
            self.conn_counter += 1
            n = self.conn_counter
            self.conns[n] = {"conn": n, "opened_ms": monotonic_ms(), "closed_ms": None,
                             "requests": 0}
            return n

    def conn_request(self, n):
        with self.lock:
            if n in self.conns:
                self.conns[n]["requests"] += 1

    def conn_closed(self, n):
        with self.lock:
            if n in self.conns and self.conns[n]["closed_ms"] is None:
                self.conns[n]["closed_ms"] = monotonic_ms()

    def conns_json(self):
        with self.lock:
            return json.dumps([dict(c) for _, c in sorted(self.conns.items())])

    def token(self, kind, n, length, alphabet):
        h = hashlib.sha256(("%s:%s:%d" % (self.seed, kind, n)).encode()).digest()
        while len(h) < length:
            h += hashlib.sha256(h).digest()
        return "".join(alphabet[b % len(alphabet)] for b in h[:length])

    def response_id(self):
        with self.lock:
            self.n_resp += 1
            n = self.n_resp
        return self.token("resp", n, 23, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

    def call_id(self):
        with self.lock:
            self.n_id += 1
            n = self.n_id
        return self.token("id", n, 8, "abcdefghijklmnopqrstuvwxyz0123456789")

    def bump(self, key):
        """Count one request for (scenario, conversation); return the count
        before this one."""
        with self.lock:
            n = self.counters.get(key, 0)
            self.counters[key] = n + 1
            return n

    # -- thought signatures ------------------------------------------------
    # A mock signature is base64(MAGIC + nonce + mac + filler), where mac binds
    # it to the exact part it was issued on.  So a signature that was altered
    # or moved to another part is detected without state, and the registry
    # (conversation, part fingerprint) -> signature finds parts that come back
    # without the signature they were issued with.

    MAGIC = b"MOCKSIG\x01"
    MAGIC_B64 = base64.b64encode(MAGIC)[:10].decode()   # "TU9DS1NJRw"

    def _mac(self, nonce, fp):
        return hmac.new(self.secret, nonce + fp, hashlib.sha256).digest()[:16]

    def _filler(self, nonce):
        out, h = b"", self.secret + nonce
        while len(out) < 72:
            h = hashlib.sha256(h).digest()
            out += h
        return out[:72]

    def issue_signature(self, conv, fp):
        with self.lock:
            self.n_sig += 1
            n = self.n_sig
        nonce = hashlib.sha256(("%s:sig:%d" % (self.seed, n)).encode()).digest()[:12]
        raw = self.MAGIC + nonce + self._mac(nonce, fp) + self._filler(nonce)
        sig = base64.b64encode(raw).decode()
        with self.lock:
            self.sig_registry.setdefault((conv, fp), set()).add(sig)
            self.sig_issued[sig] = fp
        return sig

    def is_mock_signature(self, sig):
        return isinstance(sig, str) and sig.startswith(self.MAGIC_B64)

    def signature_matches(self, sig, fp):
        try:
            raw = base64.b64decode(sig, validate=True)
        except (ValueError, TypeError):
            return False
        if len(raw) != 8 + 12 + 16 + 72 or not raw.startswith(self.MAGIC) or fp is None:
            return False
        nonce, mac, filler = raw[8:20], raw[20:36], raw[36:]
        return hmac.compare_digest(mac, self._mac(nonce, fp)) and filler == self._filler(nonce)

    def signed_fingerprint(self, conv, fp):
        with self.lock:
            return bool(self.sig_registry.get((conv, fp)))

    # -- records -------------------------------------------------------------
    def add_record(self, rec):
        with self.lock:
            self.seq += 1
            rec["seq"] = self.seq
            self.records.append(rec)
            return rec

    def records_json(self, since=0):
        with self.lock:
            return json.dumps([r for r in self.records if r["seq"] > since], ensure_ascii=False)


def part_fingerprint(part):
    if not isinstance(part, dict):
        return None
    if "functionCall" in part and isinstance(part["functionCall"], dict):
        fc = part["functionCall"]
        return b"call\0" + canon([fc.get("name"), fc.get("args") or {}, fc.get("id") or ""])
    if "text" in part and isinstance(part["text"], str):
        return b"text\0" + canon([part["text"], bool(part.get("thought"))])
    return None


# ---------------------------------------------------------------------------
# Plans: what a scenario wants to answer.  The sender renders them.

class Plan:
    def __init__(self, kind, **kw):
        self.kind = kind
        self.__dict__.update(kw)


def content_plan(parts, finish="STOP", finish_message=None):
    """parts: proto-parts, dicts with 'text' or 'functionCall' and an optional
    '_sign' flag (issue a thoughtSignature for this part)."""
    return Plan("content", parts=parts, finish=finish, finish_message=finish_message)


# ---------------------------------------------------------------------------
# Error bodies

HTML_ERROR = """<!DOCTYPE html>
<html lang=en>
  <meta charset=utf-8>
  <meta name=viewport content="initial-scale=1, minimum-scale=1, width=device-width">
  <title>Error {code} ({reason})!!1</title>
  <p><b>{code}.</b> <ins>That\u2019s an error.</ins>
  <p>The server encountered a temporary error and could not complete your request.<p>Please try again in 30 seconds.  <ins>That\u2019s all we know.</ins>
"""


def error_obj(code, message, status=None, details=None):
    err = {"code": code, "message": message, "status": status or STATUS_NAMES.get(code, "UNKNOWN")}
    if details:
        err["details"] = details
    return {"error": err}


def bad_request(violations):
    """400 in the proto-parse shape (fixture e400-invalid-json-payload...)."""
    msg = "\n".join(d for _, d in violations)
    fv = []
    for field, desc in violations:
        v = {"field": field, "description": desc} if field else {"description": desc}
        fv.append(v)
    return error_obj(400, msg, "INVALID_ARGUMENT",
                     [{"@type": BAD_REQUEST_TYPE, "fieldViolations": fv}])


def field_errors(items):
    """400 in the '* GenerateContentRequest.<path>: <msg>' shape."""
    msg = "".join("* GenerateContentRequest.%s: %s\n" % (p, m) for p, m in items)
    return error_obj(400, msg, "INVALID_ARGUMENT")


def pairing_error(state, message=None):
    """The function-response count body (fixture, array-wrapped, legacy
    errors[]); other pairing problems reuse it with another message."""
    body = state.fixture("e400-function-response-count-mismatch.array-wrapped.json")
    if message:
        err = first_error(body)
        err["message"] = message
        for e in err.get("errors", []):
            e["message"] = message
    return body


def retry_seconds(value):
    v = str(value).strip()
    if v.endswith("s"):
        v = v[:-1]
    try:
        secs = float(v)
    except ValueError:
        raise MockError("retry=%r is not a duration like 1s or 0.5s" % value)
    text = ("%d" % secs) if secs.is_integer() else ("%g" % secs)
    return secs, text + "s"


def error_plan(state, ctx, status, params):
    """The body a given HTTP status gets (tests/mock/README.md: 'Error bodies by status')."""
    headers = []
    fixture = params.get("fixture")
    if fixture:
        matches = [f for f in FIXTURE_FILES if f.startswith("e") and
                   (f == fixture or f.startswith(fixture + ".") or f == fixture + ".json")]
        if not matches:
            raise MockError("fixture=%s: no such error fixture (have: %s)" % (
                fixture, ", ".join(f for f in FIXTURE_FILES if f.startswith("e"))))
        body = state.fixture(matches[0])
        status = first_error(body).get("code", status)
    elif status == 502 or params.get("html") == "1":
        return Plan("html", status=status)
    elif status == 400:
        body = state.fixture("e400-invalid-json-payload-unknown-field.json")
    elif status == 401:
        body = error_obj(401, "Request had invalid authentication credentials. Expected OAuth 2 "
                              "access token, login cookie or other valid authentication "
                              "credential. See https://developers.google.com/identity/sign-in/"
                              "web/devconsole-project.", "UNAUTHENTICATED")
    elif status == 403:
        body = state.fixture("e403-permission-denied.json")
    elif status == 404:
        body = model_not_found(state, ctx.model if ctx else "unknown")
    elif status == 429:
        body = state.fixture("e429-resource-exhausted-retryinfo.json")
    elif status == 500:
        body = state.fixture("e500-internal.json")
    elif status == 503:
        body = state.fixture("e503-unavailable-high-demand.json")
    elif status == 504:
        body = error_obj(504, "Deadline expired before operation could complete.",
                         "DEADLINE_EXCEEDED")
    else:
        body = error_obj(status, REASONS.get(status, "Error"))
    err = first_error(body)
    if err.get("code") == 429:
        secs, text = retry_seconds(params.get("retry", "1s"))
        for d in err.get("details", []):
            if d.get("@type", "").endswith("RetryInfo"):
                d["retryDelay"] = text
        if ctx:
            for d in err.get("details", []):
                for v in d.get("violations", []):
                    dims = v.get("quotaDimensions")
                    if isinstance(dims, dict) and "model" in dims:
                        dims["model"] = ctx.model
        if params.get("header") == "1":
            headers.append(("Retry-After", "%d" % max(1, int(-(-secs // 1)))))
    wrap = params.get("wrap")
    if wrap == "array" and not isinstance(body, list):
        body = [body]
    elif wrap == "object" and isinstance(body, list):
        body = body[0]
    return Plan("error", status=status, obj=body, headers=headers)


def model_not_found(state, model):
    body = state.fixture("e404-model-not-found.json")
    return replace_strings(body, "models/custom-gemini-2.0-flash", "models/" + model)


# ---------------------------------------------------------------------------
# The conversation a request carries

class Ctx:
    def __init__(self, state, body, model, stream, sse, scen_name, params, headers):
        self.state = state
        self.body = body
        self.model = model
        self.model_version = model   # what the answer reports (the demo says offline-demo)
        self.stream = stream
        self.sse = sse
        self.scenario = scen_name
        self.params = params
        self.headers = headers
        # The conversation without the page-state turn(s) the responder adds
        # (page_state_turn): the scenarios read messages, calls and responses.
        self.raw_contents = body.get("contents") or []
        self.contents = [c for c in self.raw_contents if page_state_turn(c) is None]
        self.conv = conversation_key(self.contents)
        # the last "real" user turn: a user content with text, no functionResponse
        last_user = -1
        for i, c in enumerate(self.contents):
            if role_of(c) == "user" and not function_responses(c) and \
                    any("text" in p for p in c.get("parts", [])):
                last_user = i
        self.last_user = last_user
        self.step = sum(1 for c in self.contents[last_user + 1:]
                        if role_of(c) == "user" and function_responses(c))
        last = self.contents[-1] if self.contents else {}
        self.last_responses = function_responses(last) if role_of(last) == "user" else []
        self.decls = []
        for t in body.get("tools") or []:
            for d in t.get("functionDeclarations") or []:
                self.decls.append(d)
        self.prompt_tokens = tokens(json.dumps([self.raw_contents, body.get("systemInstruction"),
                                                body.get("tools")], separators=(",", ":")))

    def pause(self, seconds):
        """Wait; True when the client hung up meanwhile.  The handler puts
        its own in place (Handler.pause), which watches the connection."""
        self.state.stop.wait(seconds)
        return False

    def p(self, name, default=None):
        return self.params.get(name, default)

    def p_int(self, name, default):
        v = self.params.get(name)
        if v is None:
            return default
        try:
            return int(v)
        except ValueError:
            raise MockError("%s=%r is not an integer" % (name, v))

    def flag(self, name):
        return self.params.get(name, "0") not in ("0", "", "false", "no")


def role_of(content):
    r = content.get("role") if isinstance(content, dict) else None
    return r or "user"


def function_responses(content):
    return [p["functionResponse"] for p in content.get("parts") or []
            if isinstance(p, dict) and "functionResponse" in p]


def page_state_block(text):
    """The text between the last <page-state> markers of text, or None."""
    i = text.rfind("<page-state>") if isinstance(text, str) else -1
    if i < 0:
        return None
    j = text.find("</page-state>", i)
    return text[i + len("<page-state>"): j if j >= 0 else len(text)]


def page_state_turn(content):
    """The page-state block of a page-state turn, else None.  The responder
    sends the page state as the last turn of `contents`: a user content with
    one line saying what it is, then <page-state>JSON</page-state>, and
    nothing after the closing marker.  It is never a message of the visitor."""
    if not isinstance(content, dict) or role_of(content) != "user" or function_responses(content):
        return None
    text = "".join(p["text"] for p in content.get("parts") or []
                   if isinstance(p, dict) and isinstance(p.get("text"), str))
    end = text.rstrip()
    if not end.endswith("</page-state>") or "\n<page-state>" not in text:
        return None
    return page_state_block(end)


def function_calls(content):
    return [p for p in content.get("parts") or [] if isinstance(p, dict) and "functionCall" in p]


def conversation_key(contents):
    for c in contents:
        if role_of(c) == "user":
            texts = [p["text"] for p in c.get("parts") or []
                     if isinstance(p, dict) and isinstance(p.get("text"), str)]
            if texts:
                return "".join(texts)
    return ""


# ---------------------------------------------------------------------------
# Validation (the real 400s)

def validate_fields(body):
    """The '* GenerateContentRequest...' checks, after the proto parse.
    Returns an error body or None."""
    items = []
    contents = body.get("contents")
    if not contents:
        return field_errors([("contents", "contents is not specified")])
    for ci, c in enumerate(contents):
        role = c.get("role")
        if role not in (None, "", "user", "model"):
            return error_obj(400, "Please use a valid role: user, model.", "INVALID_ARGUMENT")
        parts = c.get("parts") or []
        if not parts:
            items.append(("contents[%d].parts" % ci, "contents.parts must not be empty."))
            continue
        for pi, p in enumerate(parts):
            path = "contents[%d].parts[%d]" % (ci, pi)
            data = [f for f in PART_DATA_FIELDS if f in p]
            if not data:
                items.append((path + ".data",
                              "required oneof field 'data' must have one initialized field"))
            elif len(data) > 1:
                items.append((path + ".data", "oneof field 'data' is already set. Cannot set '%s'"
                              % camel_to_snake(data[1])))
            if "functionCall" in p and not p["functionCall"].get("name"):
                items.append((path + ".function_call.name", "Name cannot be empty."))
            if "functionResponse" in p:
                fr = p["functionResponse"]
                if not fr.get("name"):
                    items.append((path + ".function_response.name", "Name cannot be empty."))
                if "response" not in fr:
                    items.append((path + ".function_response.response",
                                  "response is required and must be a JSON object"))
    si = body.get("systemInstruction")
    if si is not None:
        parts = si.get("parts") or []
        if not parts:
            items.append(("system_instruction.parts", "contents.parts must not be empty."))
        for pi, p in enumerate(parts):
            if set(p) - {"text"} or not isinstance(p.get("text"), str):
                items.append(("system_instruction.parts[%d]" % pi,
                              "only {\"text\": ...} parts are accepted in system_instruction "
                              "(gemini-mock strictness)"))
    seen = {}
    for ti, t in enumerate(body.get("tools") or []):
        for di, d in enumerate(t.get("functionDeclarations") or []):
            path = "tools[%d].function_declarations[%d]" % (ti, di)
            name = d.get("name")
            if not name:
                items.append((path + ".name", "Name cannot be empty."))
            elif not FUNCTION_NAME_RE.match(name):
                items.append((path + ".name", FUNCTION_NAME_MSG))
            elif name in seen:
                items.append((path + ".name", "Duplicate function declaration: %s is also "
                              "declared at %s (gemini-mock strictness)" % (name, seen[name])))
            else:
                seen[name] = path
            if "parameters" in d and "parametersJsonSchema" in d:
                items.append((path, "parameters and parameters_json_schema are mutually "
                              "exclusive; set only one of them"))
            if "parameters" in d:
                check_openapi_schema(d["parameters"], path + ".parameters", items)
            if "parametersJsonSchema" in d:
                js = d["parametersJsonSchema"]
                jpath = path + ".parameters_json_schema"
                if not isinstance(js, dict):
                    items.append((jpath, "must be a JSON Schema object"))
                elif not js.get("properties") and (
                        str(js.get("type", "")).upper() == "OBJECT" or not js):
                    items.append((jpath + ".properties",
                                  "should be non-empty for OBJECT type (gemini-mock rule: "
                                  "declare a parameterless function with no "
                                  "parameters/parametersJsonSchema at all)"))
    tc = (body.get("generationConfig") or {}).get("thinkingConfig") or {}
    if "thinkingLevel" in tc and "thinkingBudget" in tc:
        items.append(("generation_config.thinking_config",
                      "thinking_level and thinking_budget cannot be set together"))
    if items:
        return field_errors(items)
    return None


def check_openapi_schema(node, path, items):
    if not isinstance(node, dict):
        return
    typ = str(node.get("type", "")).upper()
    has_props = "properties" in node
    if typ == "OBJECT":
        if not node.get("properties"):
            items.append((path + ".properties", "should be non-empty for OBJECT type"))
    elif typ:
        if has_props:
            items.append((path + ".properties", "only allowed for OBJECT type"))
        if "required" in node:
            items.append((path + ".required", "only allowed for OBJECT type"))
    elif not node.get("anyOf"):
        items.append((path + ".type", "must be specified when not using one_of, any_of or "
                                      "all_of fields"))
    for k, v in (node.get("properties") or {}).items():
        check_openapi_schema(v, "%s.properties[%s]" % (path, k), items)
    if isinstance(node.get("items"), dict):
        check_openapi_schema(node["items"], path + ".items", items)
    for i, v in enumerate(node.get("anyOf") or []):
        check_openapi_schema(v, "%s.any_of[%d]" % (path, i), items)


def validate_pairing(state, contents):
    """Function calls and responses: N calls in a model turn -> the next
    content is a user content with exactly N functionResponse parts, same
    order, same names, same ids.  Consecutive model contents form one turn
    (the SDKs send a streamed reply as one content per chunk)."""
    consumed = set()
    i = 0
    while i < len(contents):
        if role_of(contents[i]) != "model":
            if function_responses(contents[i]) and i not in consumed:
                return pairing_error(state, "Please ensure that function response turn comes "
                                            "immediately after a function call turn.")
            i += 1
            continue
        j, calls = i, []
        while j < len(contents) and role_of(contents[j]) == "model":
            calls += [(j, p["functionCall"]) for p in function_calls(contents[j])]
            j += 1
        if calls:
            if i == 0:
                return pairing_error(state, "Please ensure that function call turn comes "
                                            "immediately after a user turn or after a function "
                                            "response turn.")
            resps = function_responses(contents[j]) if j < len(contents) else []
            if len(resps) != len(calls):
                return pairing_error(state)
            consumed.add(j)
            call_names = [c.get("name") for _, c in calls]
            resp_names = [r.get("name") for r in resps]
            for k, ((_, call), resp) in enumerate(zip(calls, resps)):
                where = "contents[%d].parts" % j
                if resp.get("name") != call.get("name"):
                    if sorted(map(str, call_names)) == sorted(map(str, resp_names)):
                        msg = ("Please ensure that the function response parts are in the same "
                               "order as the function call parts of the function call turn: "
                               "function response %d (%s) is for `%s` but function call %d is "
                               "`%s`." % (k + 1, where, resp.get("name"), k + 1, call.get("name")))
                    else:
                        msg = ("Please ensure that every function response part names the "
                               "function of its function call part: function response %d (%s) "
                               "names `%s` but function call %d is `%s`."
                               % (k + 1, where, resp.get("name"), k + 1, call.get("name")))
                    return pairing_error(state, msg)
                cid, rid = call.get("id"), resp.get("id")
                call_ids = [c.get("id") for _, c in calls]
                resp_ids = [r.get("id") for r in resps]
                if cid != rid and None not in call_ids and \
                        sorted(map(str, call_ids)) == sorted(map(str, resp_ids)):
                    msg = ("Please ensure that the function response parts are in the same "
                           "order as the function call parts of the function call turn: "
                           "function response %d (%s) answers call id `%s` but function call "
                           "%d has id `%s`." % (k + 1, where, rid, k + 1, cid))
                    return pairing_error(state, msg)
                if cid != rid:
                    def show(v):
                        return "no id" if v is None else "id `%s`" % v
                    msg = ("Please ensure that every function response part carries the id of "
                           "its function call part: function response %d (%s) has %s but "
                           "function call %d (`%s`) has %s."
                           % (k + 1, where, show(rid), k + 1, call.get("name"), show(cid)))
                    return pairing_error(state, msg)
        i = j
    return None


def validate_signatures(state, conv, contents):
    """Every part the mock issued with a thoughtSignature must come back with
    that exact signature, on that exact part."""
    for ci, c in enumerate(contents):
        for pi, p in enumerate(c.get("parts") or []):
            sig = p.get("thoughtSignature")
            fp = part_fingerprint(p)
            if state.is_mock_signature(sig):
                if role_of(c) != "model" or not state.signature_matches(sig, fp):
                    return error_obj(400, "Corrupted thought signature.", "INVALID_ARGUMENT")
                continue
            if role_of(c) != "model" or fp is None or not state.signed_fingerprint(conv, fp):
                continue
            if "functionCall" in p:
                body = state.fixture("e400-thought-signature-missing.json")
                err = first_error(body)
                err["message"] = err["message"].replace(
                    "default_api:codebase_search", "default_api:" + str(p["functionCall"].get("name"))
                ).replace("position 2", "position %d" % (ci + 1))
                return body
            return error_obj(400, "Text part is missing a thought_signature (contents[%d].parts"
                                  "[%d]). The mock issued this part with a thoughtSignature; "
                                  "send it back exactly as received (gemini-mock strictness: "
                                  "the real API does not validate text-part signatures)."
                             % (ci, pi), "INVALID_ARGUMENT")
    return None


# ---------------------------------------------------------------------------
# Scenarios

UNIVERSAL_PARAMS = {"delay", "usage", "gap", "fragment", "chunks", "sigpart", "noid",
                    "nosig", "thoughts", "tooluse", "extra", "textsig", "gzip"}
CALL_PARAMS = {"tool", "args"}


def page_tool(ctx):
    """(name, decl) of the page tool: tool=NAME, else the first declared
    function whose name does not start with action_."""
    name = ctx.p("tool")
    if name:
        for d in ctx.decls:
            if d.get("name") == name:
                return name, d
        return name, None
    for d in ctx.decls:
        if not str(d.get("name", "")).startswith("action_"):
            return d["name"], d
    return None, None


def decl_properties(decl):
    if not decl:
        return {}
    schema = decl.get("parametersJsonSchema") or decl.get("parameters") or {}
    props = schema.get("properties") if isinstance(schema, dict) else None
    return props if isinstance(props, dict) else {}


def default_args(ctx, decl, index=0, varied=False):
    """args=JSON if given (a list gives one object per call), else {} or the
    first enum value of the first enum property."""
    raw = ctx.p("args")
    if raw is not None:
        try:
            val = json.loads(raw)
        except ValueError:
            raise MockError("args=%r is not JSON" % raw)
        if isinstance(val, list):
            val = val[index % len(val)] if val else {}
        if not isinstance(val, dict):
            raise MockError("args must be a JSON object (or a list of objects)")
        return val
    props = decl_properties(decl)
    for pname, pschema in props.items():
        if isinstance(pschema, dict) and isinstance(pschema.get("enum"), list) and pschema["enum"]:
            en = pschema["enum"]
            return {pname: en[index % len(en)] if varied else en[0]}
    if varied:
        for pname, pschema in props.items():
            t = str((pschema or {}).get("type", "")).upper() if isinstance(pschema, dict) else ""
            if t == "STRING":
                return {pname: "value-%d" % (index + 1)}
            if t in ("INTEGER", "NUMBER"):
                return {pname: index + 1}
    return {}


def call_part(ctx, name, args, sign=True):
    fc = {"name": name, "args": args}
    if not ctx.flag("noid"):
        fc = {"id": ctx.state.call_id(), "name": name, "args": args}
    part = {"functionCall": fc}
    if sign and not ctx.flag("nosig"):
        part["_sign"] = True
    return part


def calls_plan(parts):
    return content_plan(parts, "STOP", "Model generated function call(s).")


def text_plan(ctx, text, finish="STOP", sign=None):
    if sign is None:
        sign = ctx.flag("textsig")
    return content_plan([{"text": text, "_sign": sign}], finish)


def summary(responses):
    return "; ".join(compact(r.get("response")) for r in responses) or "(no response)"


def quoted_error(responses):
    out = []
    for r in responses:
        resp = r.get("response")
        if isinstance(resp, dict) and "error" in resp:
            e = resp["error"]
            out.append(e if isinstance(e, str) else compact(e))
        else:
            out.append(compact(resp))
    return "; ".join(out)


def no_page_tool(ctx):
    return text_plan(ctx, "gemini-mock: scenario %s needs a page tool: declare a function whose "
                          "name does not start with action_, or pass tool=NAME" % ctx.scenario)


def page_call_parts(ctx):
    name, decl = page_tool(ctx)
    if not name:
        return None
    return [call_part(ctx, name, default_args(ctx, decl))]


def sc_text(ctx):
    return text_plan(ctx, ctx.p("say", "Hello from the mock."))


def sc_page_call(ctx):
    if ctx.step == 0:
        parts = page_call_parts(ctx)
        return calls_plan(parts) if parts else no_page_tool(ctx)
    return text_plan(ctx, "Done: " + summary(ctx.last_responses))


def sc_server_call(ctx):
    """step 0: one call of the server action `tool=` (default
    action_shop_addReview) with `args=` (n>1: that many calls in one turn);
    then 'Done: ...' with the responses."""
    if ctx.step > 0:
        return text_plan(ctx, "Done: " + summary(ctx.last_responses))
    name = ctx.params.get("tool") or "action_shop_addReview"
    try:
        args = json.loads(ctx.params["args"]) if "args" in ctx.params else {
            "productId": "p004", "rating": 5, "text": "great"}
    except ValueError:
        args = {}
    n = max(1, ctx.p_int("n", 1))
    return calls_plan([call_part(ctx, name, args, sign=(i == 0)) for i in range(n)])


def sc_server_steps(ctx):
    """step k: one call of calls[k] (`calls=` a JSON list of [name, args]),
    signed; after the last: 'Done: ...' with the last responses."""
    try:
        calls = json.loads(ctx.params.get("calls", "[]"))
        calls = [(str(c[0]), c[1] if isinstance(c[1], dict) else {}) for c in calls]
    except (ValueError, TypeError, IndexError, KeyError):
        raise MockError("server-steps: calls must be a JSON list of [name, args]")
    if ctx.step >= len(calls):
        return text_plan(ctx, "Done: " + summary(ctx.last_responses))
    name, args = calls[ctx.step]
    return calls_plan([call_part(ctx, name, args)])


def sc_parallel(ctx):
    if ctx.step > 0:
        return text_plan(ctx, "Done: " + summary(ctx.last_responses))
    name, decl = page_tool(ctx)
    if not name:
        return no_page_tool(ctx)
    n = ctx.p_int("n", 2)
    parts = [call_part(ctx, name, default_args(ctx, decl, i, varied=True), sign=(i == 0))
             for i in range(max(1, n))]
    return calls_plan(parts)


def sc_server_chain(ctx):
    if ctx.step == 0:
        return calls_plan([call_part(ctx, "action_shop_searchProducts", {"query": "usb"})])
    if ctx.step == 1:
        slug = "usb-c-hub"
        resp = ctx.last_responses[0].get("response") if ctx.last_responses else None
        try:
            cand = resp.get("output", resp)
            if isinstance(cand, dict) and "products" not in cand and "result" in cand:
                cand = cand["result"]
            first = cand["products"][0]
            if isinstance(first.get("slug"), str) and first["slug"]:
                slug = first["slug"]
        except (AttributeError, KeyError, IndexError, TypeError):
            pass
        return calls_plan([call_part(ctx, "action_shop_getProductBySlug", {"slug": slug})])
    resp = ctx.last_responses[0].get("response") if ctx.last_responses else None
    product = None
    if isinstance(resp, dict):
        for cand in (resp, resp.get("output"), resp.get("result")):
            if isinstance(cand, dict) and isinstance(cand.get("product"), dict):
                product = cand["product"]
                break
    if product and product.get("name"):
        text = "The product is %s" % product["name"]
        if "price" in product:
            text += ", priced %s" % product["price"]
        return text_plan(ctx, text + ".")
    return text_plan(ctx, "The product lookup returned: " + summary(ctx.last_responses))


def sc_mixed(ctx):
    if ctx.step > 0:
        return text_plan(ctx, "Done: " + summary(ctx.last_responses))
    name, decl = page_tool(ctx)
    if not name:
        return no_page_tool(ctx)
    server = ("action_shop_searchProducts", {"query": "hub"})
    page = (name, default_args(ctx, decl))
    order = [server, page]
    if ctx.p("order", "server-first") == "page-first":
        order = [page, server]
    elif ctx.p("order", "server-first") != "server-first":
        raise MockError("order must be server-first or page-first")
    parts = [call_part(ctx, n, a, sign=(i == 0)) for i, (n, a) in enumerate(order)]
    return calls_plan(parts)


def sc_invalid_args(ctx):
    if ctx.step == 0:
        return calls_plan([call_part(ctx, "action_shop_searchProducts", {"query": 5})])
    return text_plan(ctx, "The tool reported an error: " + quoted_error(ctx.last_responses))


def sc_unknown_tool(ctx):
    if ctx.step == 0:
        return calls_plan([call_part(ctx, "no_such_tool", {})])
    return text_plan(ctx, "The tool reported an error: " + quoted_error(ctx.last_responses))


def sc_loop(ctx):
    return calls_plan([call_part(ctx, "action_shop_searchProducts", {"query": "x"})])


def sc_text_and_call(ctx):
    if ctx.step > 0:
        return text_plan(ctx, "Done: " + summary(ctx.last_responses))
    parts = page_call_parts(ctx)
    if not parts:
        return no_page_tool(ctx)
    return calls_plan([{"text": ctx.p("say", "Let me check.")}] + parts)


def sc_retry_then_ok(ctx):
    n = ctx.state.bump((ctx.scenario, ctx.conv))
    if n < ctx.p_int("times", 1):
        return error_plan(ctx.state, ctx, ctx.p_int("status", 429), ctx.params)
    return text_plan(ctx, ctx.p("say", "Hello from the mock."))


def sc_error(ctx):
    return error_plan(ctx.state, ctx, ctx.p_int("status", 500), ctx.params)


def sc_slow(ctx):
    if ctx.pause(ctx.p_int("ms", 1000) / 1000.0):
        raise PeerGone()
    return text_plan(ctx, ctx.p("say", "Hello from the mock."))


def sc_stall(ctx):
    return Plan("stall", inner=text_plan(ctx, "Hello from the mock."), ms=ctx.p_int("ms", 60000))


def sc_drop(ctx):
    return Plan("drop")


def sc_html(ctx):
    return Plan("html", status=ctx.p_int("status", 502))


def sc_truncated(ctx):
    times = ctx.p_int("times", 0)   # 0: every request; N: the first N, then text
    if times > 0 and ctx.state.bump((ctx.scenario, ctx.conv)) >= times:
        return text_plan(ctx, ctx.p("say", "Hello from the mock."))
    return Plan("truncated", inner=text_plan(ctx, "This reply is cut in half by the mock."),
                short=ctx.flag("short"))


def sc_no_candidates(ctx):
    return Plan("no-candidates")


def finish_only(ctx, reason):
    n = ctx.state.bump((ctx.scenario, ctx.conv))
    if n >= ctx.p_int("times", 1):
        if ctx.step > 0:
            return text_plan(ctx, "Done: " + summary(ctx.last_responses))
        return text_plan(ctx, ctx.p("say", "Hello from the mock."))
    parts = []
    if ctx.flag("withcall"):
        parts = page_call_parts(ctx) or [call_part(ctx, "action_shop_searchProducts",
                                                   {"query": "x"})]
    return content_plan(parts, reason, ctx.p("message")) if parts else \
        Plan("finish-only", finish=reason, finish_message=ctx.p("message"))


def sc_malformed(ctx):
    return finish_only(ctx, "MALFORMED_FUNCTION_CALL")


def sc_unexpected(ctx):
    return finish_only(ctx, "UNEXPECTED_TOOL_CALL")


def sc_blocked(ctx):
    return Plan("raw", obj=ctx.state.fixture("13-prompt-blocked-safety.response.json"))


def sc_safety(ctx):
    return Plan("raw", obj=ctx.state.fixture("14-candidate-finish-safety.response.json"))


def sc_recitation(ctx):
    return Plan("finish-only", finish="RECITATION", finish_message=None)


def sc_max_tokens(ctx):
    text = ctx.p("say", "The sky is blue because of Rayleigh scattering: sunlight is made of "
                        "all colours, and the short blue wavelengths are scattered by the "
                        "molecules of the")
    return text_plan(ctx, text, finish="MAX_TOKENS")


def sc_thought_only(ctx):
    return Plan("raw", obj=ctx.state.fixture("08-thought-part-max-tokens.response.json"))


def sc_empty_parts(ctx):
    form = ctx.p("form", "absent")
    if form not in ("absent", "empty"):
        raise MockError("form must be absent or empty")
    return Plan("empty-parts", form=form)


def sc_signatures(ctx):
    if ctx.step < 2:
        parts = page_call_parts(ctx)
        return calls_plan(parts) if parts else no_page_tool(ctx)
    return text_plan(ctx, "Done: " + summary(ctx.last_responses), sign=True)


def sc_midstream_error(ctx):
    return Plan("midstream", inner=text_plan(ctx, ctx.p("say", "This stream breaks after the "
                                                               "first chunk.")))


# ---------------------------------------------------------------------------
# The offline demo model (scenario `demo`; the default with --demo)
#
# `make demo` without an API key talks to this.  It answers the demo cart
# page's common requests with real-format replies: it reads the last user
# text, the function declarations it received and the page state (the last
# page-state turn of `contents`, else the <page-state> markers of the system
# instruction), and picks tools from those declarations and item coordinates
# from the page state's lists (or, for older pages, the tools' enums).  Like every scenario it is
# stateless: each reply is worked out again from the history (which calls it
# already made since the user's message, what they answered) and the fresh
# page state, so "set the keyboard quantity to 3" clicks once per turn until
# the page shows 3.
#
# It also writes product reviews, the run API's side effect (the
# assistant page, www/assistant/): "review the USB-C hub 5 stars: great"
# searches the catalog for the product (action_shop_searchProducts), then
# calls action_shop_addReview with its _id; the responder stops there for
# the user's approval, and the answer after it says what happened.  Only
# when no page tools are declared: the chat protocol of a page runs
# server actions without asking anyone.

DEMO_MODEL_VERSION = "offline-demo"
DEMO_MAX_CLICKS = 12          # quantity changes give up after this many clicks
DEMO_LIST = 5                 # search results listed by name

NUMBER_WORDS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
                "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
NUM = r"(\d+|%s)" % "|".join(NUMBER_WORDS)
ORDINALS = {"first": 0, "second": 1, "third": 2, "fourth": 3, "fifth": 4, "last": -1}
IRREGULAR = {"mice": "mouse"}
STOPWORDS = set("""
a an the and or of to in on at for from by with my your our me i we you it its them this that
these those is are be please can could would will want like need some any all every one ones
cart basket item items product products thing things quantity qty amount number count units unit
pieces piece times more less fewer another remove delete drop take out rid get clear empty set
change update make increase decrease reduce lower raise bump up down plus minus add put search
find look show tell what which how many much total there have has do does just also now then
""".split())

DEMO_HELP_EXAMPLES = [
    ("remove", "remove an item: *remove the hub*"),
    ("add", "add an item: *add a desk lamp for 19.99*"),
    ("quantity", "change a quantity: *increase the mouse*, *set the keyboard quantity to 3*"),
    ("search", "search the catalog: *search for usb* (or *search for usb and add the first "
               "one*)"),
    ("cart", "describe the cart: *what is in my cart?*"),
    ("review", "review a product: *review the USB-C hub 5 stars: great*"),
]


def demo_number(word):
    if word is None:
        return None
    word = word.lower()
    return int(word) if word.isdigit() else NUMBER_WORDS.get(word)


def demo_words(text):
    """Lower-case words of text; a hyphenated word also gives its pieces."""
    out = []
    for w in re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)*", text.lower()):
        out.append(w)
        if "-" in w:
            out += [x for x in w.split("-") if x]
    return out


def demo_same_word(a, b):
    a, b = IRREGULAR.get(a, a), IRREGULAR.get(b, b)
    if a == b:
        return True
    for x, y in ((a, b), (b, a)):
        if x + "s" == y or x + "es" == y or (x.endswith("y") and x[:-1] + "ies" == y):
            return True
    return False


def demo_money(v):
    try:
        return "$%.2f" % float(v)
    except (TypeError, ValueError):
        return str(v)


def demo_page_state(ctx):
    """The page state: the JSON of the last page-state turn of `contents`
    (searched from the end; where the responder sends it), else the JSON
    between the last <page-state> markers of the system instruction (where
    it used to go).  {} when absent or not a JSON object."""
    raws = [page_state_turn(c) for c in reversed(ctx.raw_contents)]
    raw = next((r for r in raws if r is not None), None)
    if raw is None:
        si = ctx.body.get("systemInstruction") or {}
        raw = page_state_block("".join(p.get("text", "") for p in si.get("parts") or []
                                       if isinstance(p, dict)))
    if raw is None:
        return {}
    try:
        state = json.loads(raw)
    except ValueError:
        return {}
    return state if isinstance(state, dict) else {}


def demo_view(state):
    vs = state.get("viewState")
    return vs if isinstance(vs, dict) else state


def demo_items(state):
    """The cart rows: viewState.items, else items, else the first list of
    objects with a name found anywhere in the state."""
    def rows(v):
        if isinstance(v, list) and v and all(isinstance(x, dict) and isinstance(x.get("name"), str)
                                             for x in v):
            return v
        return None
    for cand in (demo_view(state).get("items"), state.get("items")):
        if rows(cand) is not None:
            return cand
    queue = [state]
    while queue:
        v = queue.pop(0)
        if rows(v) is not None:
            return v
        if isinstance(v, dict):
            queue += [x for k, x in v.items() if k not in ("interactions", "lists", "fields")]
        elif isinstance(v, list):
            queue += v
    return []


def demo_qty(item):
    q = item.get("quantity")
    return q if isinstance(q, (int, float)) and not isinstance(q, bool) else 1


def demo_cart_line(state, still=False):
    """What the page state shows of the cart; still: nothing changed."""
    items = demo_items(state)
    view = demo_view(state)
    total = view.get("total")
    if not isinstance(total, (int, float)) or isinstance(total, bool):
        total = sum(float(i.get("price") or 0) * demo_qty(i) for i in items)
    if not items:
        return "Your cart is %s empty." % ("still" if still else "now")
    units = sum(demo_qty(i) for i in items)
    n = len(items)
    return "Your cart %s %d item%s (%d unit%s), total %s." % (
        "still has" if still else "now has", n, "" if n == 1 else "s", units,
        "" if units == 1 else "s", demo_money(total))


def demo_cart_text(state):
    items = demo_items(state)
    if not items:
        return "Your cart is empty."
    lines = ["- %s — %s × %s" % (i.get("name"), demo_money(i.get("price")), int(demo_qty(i)))
             for i in items]
    return "In your cart:\n" + "\n".join(lines) + "\n\n" + demo_cart_line(state).replace(
        "Your cart now has", "That is")


def demo_match_items(text, items):
    """(score, item) for items named in text: an item id, an ordinal
    ("the second item"), or words of its name (plurals tolerated)."""
    words = [w for w in demo_words(text) if w not in STOPWORDS and len(w) > 1]
    low = text.lower()
    scored = []
    for idx, item in enumerate(items):
        iid = str(item.get("id", ""))
        if iid and re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(iid.lower()), low):
            scored.append((100, idx, item))
            continue
        name_words = {w for w in demo_words(item.get("name", "")) if len(w) > 1}
        score = sum(1 for nw in name_words if any(demo_same_word(nw, w) for w in words))
        if score:
            scored.append((score, idx, item))
    if not scored:
        m = re.search(r"\b(%s)\s+(?:item|one|product|row)\b" % "|".join(ORDINALS), low)
        if m and items:
            k = ORDINALS[m.group(1)]
            if -len(items) <= k < len(items):
                return [(1, items[k])]
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [(s, it) for s, _, it in scored]


def demo_unmatched(text):
    words = [w for w in re.findall(r"[A-Za-z0-9-]+", text)
             if w.lower() not in STOPWORDS and not w.isdigit() and w.lower() not in NUMBER_WORDS]
    return " ".join(words)


def demo_find_tool(tools, *patterns):
    for pat in patterns:
        for name in tools:
            if re.fullmatch(pat, name):
                return name
    return None


def demo_enum_prop(decl):
    for pname, ps in decl_properties(decl).items():
        if isinstance(ps, dict) and isinstance(ps.get("enum"), list) and ps["enum"]:
            return pname, ps["enum"]
    return None, None


def demo_kebab(ref):
    """The page's tool naming (tools.js kebabCase): "removeBtn" -> "remove-btn"."""
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", str(ref))
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1-\2", s)
    return re.sub(r"[^A-Za-z0-9]+", "-", s).strip("-").lower()


def demo_tool_acts_on(tool, ref):
    """Whether the page tool named `tool` is the one for ref
    (click-remove-btn, or click-remove-btn-2 after a name clash)."""
    rest = re.sub(r"^(click|fill|select|toggle)-", "", str(tool or ""))
    return re.fullmatch(r"%s(-\d+)?" % re.escape(demo_kebab(ref)), rest) is not None


def demo_list_entry(state, iid):
    """The item with this id in the page state's lists, or None."""
    lists = state.get("lists") if isinstance(state, dict) else None
    for entries in (lists.values() if isinstance(lists, dict) else []):
        for e in entries if isinstance(entries, list) else []:
            if isinstance(e, dict) and str(e.get("id")) == iid:
                return e
    return None


def demo_item_args(decl, item, items, state=None, tool=None):
    """Args naming item, never made up.  Through the tool's enum when it has
    one (e.g. coordinate "item-2/removeBtn"; older pages), else through the
    page state: the item's entry in `lists` must list the tool's ref among
    its usable refs, and the coordinate is "<id>/<ref>".  {} for a tool that
    takes no item; None when the item cannot be named (its button is
    disabled or gone)."""
    pname, values = demo_enum_prop(decl)
    iid = str(item.get("id", ""))
    if pname is not None:
        if iid:
            for v in values:
                if iid in str(v).split("/") or str(v) == iid:
                    return {pname: v}
            return None
        if len(values) == len(items):
            return {pname: values[items.index(item)]}
        return None
    props = decl_properties(decl)
    if "coordinate" not in props:
        return {}
    entry = demo_list_entry(state or {}, iid) if iid else None
    if entry is None:
        return None
    for ref in entry.get("refs") or []:
        if demo_tool_acts_on(tool, ref):
            return {"coordinate": "%s/%s" % (entry.get("id"), ref)}
    return None


def demo_fill_args(decl, value):
    props = decl_properties(decl)
    if "value" in props or not props:
        return {"value": value}
    schema = decl.get("parametersJsonSchema") or decl.get("parameters") or {}
    for pname in (schema.get("required") or []) + list(props):
        ps = props.get(pname)
        if isinstance(ps, dict) and str(ps.get("type", "string")).upper() == "STRING":
            return {pname: value}
    return {next(iter(props)): value}


def demo_call_item_id(args):
    """The item id a call's coordinate names ("item-2/removeBtn" -> "item-2"),
    or None for a call that names no item."""
    for v in (args or {}).values():
        if isinstance(v, str) and v:
            return v.split("/")[0]
    return None


def demo_shown(items, iid, name):
    """The row of the page state that is the item a call acted on (by id,
    else by name), or None when the page no longer shows it."""
    for it in items:
        if (str(it.get("id")) == iid) if iid else (str(it.get("name")) == name):
            return it
    return None


# A click's call id remembers the quantity the page showed when the model
# clicked: the model is stateless, the fresh page state is all it sees after
# the click, and a text saying the quantity would add to every later request
# (tests/e2e/cost.test.mjs bounds those bytes). Ids are opaque to the
# responder and the browser, which send them back as they came.
DEMO_MEMO = "q"
DEMO_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def demo_memo_id(plan, quantity):
    """End the id of the plan's call with "q" and the quantity in two base-36
    digits (the id keeps its length); a call without an id stays as it is."""
    q = max(0, min(int(quantity), len(DEMO_DIGITS) ** 2 - 1))
    memo = DEMO_MEMO + DEMO_DIGITS[q // len(DEMO_DIGITS)] + DEMO_DIGITS[q % len(DEMO_DIGITS)]
    for part in plan.parts if isinstance(getattr(plan, "parts", None), list) else []:
        fc = part.get("functionCall") if isinstance(part, dict) else None
        if isinstance(fc, dict) and isinstance(fc.get("id"), str) and len(fc["id"]) > len(memo):
            fc["id"] = fc["id"][:-len(memo)] + memo


def demo_memo(call_id):
    """The quantity demo_memo_id put in call_id, or None."""
    if not isinstance(call_id, str) or len(call_id) < 4 or call_id[-3] != DEMO_MEMO:
        return None
    hi, lo = call_id[-2], call_id[-1]
    if hi not in DEMO_DIGITS or lo not in DEMO_DIGITS:
        return None
    return DEMO_DIGITS.index(hi) * len(DEMO_DIGITS) + DEMO_DIGITS.index(lo)


def demo_done(ctx):
    """The calls made since the user's message, with their responses:
    [{"name", "args", "response"}] in order."""
    out, pending = [], []
    for c in ctx.contents[ctx.last_user + 1:]:
        if role_of(c) == "model":
            pending += [p["functionCall"] for p in function_calls(c)]
            continue
        resps = function_responses(c)
        for fc, r in zip(pending, resps):
            out.append({"name": fc.get("name"), "args": fc.get("args") or {},
                        "id": fc.get("id"), "response": r.get("response")})
        pending = pending[len(resps):]
    return out


def demo_error(resp):
    """The error a function response reports, or None."""
    if not isinstance(resp, dict):
        return None
    if "error" in resp:
        e = resp["error"]
        if isinstance(e, dict):
            e = e.get("message") or compact(e)
        return str(e)
    res = resp.get("result", resp.get("output"))
    if isinstance(res, dict) and res.get("ok") is False:
        return str(res.get("error") or res.get("message") or "the page reported a failure")
    return None


def demo_result(resp):
    if isinstance(resp, dict):
        for k in ("result", "output"):
            if k in resp:
                return resp[k]
    return resp


class DemoModel:
    """One reply of the offline demo model: .plan() -> a Plan."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.tools = {d.get("name"): d for d in ctx.decls if d.get("name")}
        text = ""
        if 0 <= ctx.last_user < len(ctx.contents):
            text = "".join(p.get("text", "") for p in ctx.contents[ctx.last_user].get("parts")
                           or [] if isinstance(p, dict) and isinstance(p.get("text"), str))
        self.text = MARKER_RE.sub(" ", text).strip()
        self.low = self.text.lower()
        self.state = demo_page_state(ctx)
        self.items = demo_items(self.state)
        self.done = demo_done(ctx)

    # -- replies --
    def say(self, text):
        return text_plan(self.ctx, text)

    def call(self, *calls, lead=None):
        """One model turn: an optional short text, then the calls (an id
        each, the thought signature on the first call, as Gemini 3 does)."""
        parts = [call_part(self.ctx, name, args, sign=(i == 0))
                 for i, (name, args) in enumerate(calls)]
        if lead:
            parts.insert(0, {"text": lead})
        return calls_plan(parts)

    TOOL_PATTERNS = {
        "remove": (r"click-remove-btn", r"click-.*remove.*", r"click-.*delete.*"),
        "increase": (r"click-increase-btn", r"click-.*(increase|incr|plus).*"),
        "decrease": (r"click-decrease-btn", r"click-.*(decrease|decr|minus).*"),
        "fill-name": (r"fill-name-input", r"fill-.*name.*"),
        "fill-price": (r"fill-price-input", r"fill-.*price.*"),
        "add": (r"click-add-btn", r"click-add(-.*)?-btn", r"click-add.*"),
        "search-action": (r"action_shop_searchProducts", r"action_.*[sS]earch.*"),
        "fill-search": (r"fill-search-input", r"fill-.*search.*"),
        "click-search": (r"click-search-btn", r"click-.*search.*"),
        "review-action": (r"action_shop_addReview", r"action_.*[rR]eview.*"),
    }

    def tool(self, kind):
        """The declared tool for kind (the demo page's name first)."""
        return demo_find_tool(self.tools, *self.TOOL_PATTERNS[kind])

    def did(self, *kinds):
        """The calls of those kinds made since the user's message (by name:
        the tool may be gone from the fresh declarations, e.g. no rows left)."""
        return [d for d in self.done
                if any(demo_find_tool([d["name"]], *self.TOOL_PATTERNS[k]) for k in kinds)]

    def capabilities(self):
        have = {
            "remove": self.tool("remove"),
            "add": self.tool("fill-name") and self.tool("add"),
            "quantity": self.tool("increase") or self.tool("decrease"),
            "search": self.tool("search-action") or (self.tool("fill-search") and
                                                     self.tool("click-search")),
            "cart": self.items,
            "review": self.reviews() and self.tool("search-action"),
        }
        return [line for key, line in DEMO_HELP_EXAMPLES if have[key]]

    def page_tools(self):
        """Declared tools other than server actions and the run API's memory tools."""
        return [n for n in self.tools if not n.startswith("action_")
                and n not in ("save_memory", "search_memory")]

    def reviews(self):
        """Does it write reviews here? Only where no page tools are declared
        (the run API, whose policy asks the user first): the chat protocol
        runs a page's server actions without asking."""
        return self.tool("review-action") is not None and not self.page_tools()

    def help(self, lead):
        caps = self.capabilities()
        text = lead + "\n\nI am the **offline demo model**: no Gemini API key is configured, " \
                      "so I only understand a few simple requests"
        if caps:
            text += " on this page:\n" + "\n".join("- " + c for c in caps)
        else:
            text += ", and this page offers none of the tools I know how to use."
        return self.say(text + "\n\nPut a Gemini API key in `conf/.gemini.yaml` (or set "
                               "`GEMINI_API_KEY`) and restart `make demo` to talk to Gemini.")

    def failed(self):
        """The first error among the last responses, as (call, message)."""
        n = len(self.ctx.last_responses)
        for d in self.done[len(self.done) - n:] if n else []:
            err = demo_error(d["response"])
            if err:
                return d, err
        return None

    def report_error(self, what):
        d, err = what
        args = d["args"]
        where = " on %s" % next(iter(args.values())) if len(args) == 1 else ""
        return self.say("I tried `%s`%s, but the page reported an error: %s\n\n%s" % (
            d["name"], where, err.rstrip("."), demo_cart_line(self.state)))

    # -- the plan --
    def plan(self):
        low = self.low
        if self.reviews() and re.search(r"\b(review|rate)\b", low):
            return self.review()
        err = self.failed()
        if err:
            return self.report_error(err)
        if not low or re.fullmatch(r"(hi|hello|hey|help|hallo|good (morning|afternoon|evening))"
                                   r"\W*(there)?\W*", low):
            return self.help("Hello! I can work this cart page for you." if self.page_tools()
                             else "Hello! I am the demo shop's assistant.")
        if re.search(r"\b(search|look\s+(for|up)|find|do\s+you\s+(have|sell))\b", low):
            return self.search()
        target = self.set_target()
        if target is not None:
            return self.quantity(target=target)
        if re.search(r"\b(increase|raise|bump|more|another|plus)\b", low):
            return self.quantity(delta=self.amount())
        if re.search(r"\b(decrease|reduce|lower|less|fewer|minus)\b", low):
            return self.quantity(delta=-self.amount())
        if re.search(r"\b(remove|delete|drop|take\s+out|get\s+rid|clear|empty)\b", low):
            return self.remove()
        if re.search(r"\badd\b", low):
            return self.add()
        if re.search(r"\b(cart|total|basket)\b|\bwhat\b.*\b(do|have)\s+i\s+(got|have)\b"
                     r"|\bwhat(?:'s|\s+is)?\s+in\s+(?:it|there)\b", low):
            return self.say(demo_cart_text(self.state))
        if re.search(r"\bhelp\b|\bwhat (else )?can you do\b", low):
            return self.help("Here is what I can do.")
        return self.help("Sorry, I cannot help with “%s”: I can only help with this shop's %s."
                         % (self.text, "cart" if self.page_tools() else "catalog and reviews"))

    def amount(self):
        m = re.search(r"\bby\s+%s\b" % NUM, self.low) or \
            re.search(r"\b%s\s+(more|less|fewer)\b" % NUM, self.low)
        n = demo_number(m.group(1)) if m else 1
        return n if n and n > 0 else 1

    def set_target(self):
        if not re.search(r"\b(set|change|update|make|want|quantity|qty)\b", self.low):
            return None
        m = re.search(r"(?:\bto|=)\s*%s\b(?![.,]\d)" % NUM, self.low) or \
            re.search(r"\b(?:quantity|qty)\s*(?:of\s+(?:the\s+)?[a-z-]+\s+)?(?:to|=|:|at)?\s*%s\b"
                      r"(?![.,]\d)" % NUM, self.low) or \
            re.search(r"\b(?:make\s+(?:it|that|them)|want)\s+%s\b(?![.,]\d)" % NUM, self.low)
        return demo_number(m.group(1)) if m else None

    def one_item(self):
        found = demo_match_items(self.text, self.items)
        if not found:
            return None, self.not_found()
        return found[0][1], None

    def not_found(self):
        if not self.items:
            return self.say("Your cart is empty, so there is nothing to change.")
        what = demo_unmatched(self.text)
        return self.say("I could not find %s in your cart. It has: %s." % (
            "“%s”" % what if what else "that item",
            ", ".join(str(i.get("name")) for i in self.items)))

    def remove(self):
        tool = self.tool("remove")
        if self.did("remove"):
            return self.removed()
        if not tool:
            return self.help("This page does not offer a remove button I can use.")
        if not self.items:
            return self.say("Your cart is already empty.")
        if re.search(r"\b(clear|empty)\b.*\b(cart|basket)\b|\b(everything|all)\b", self.low):
            targets = list(self.items)
        else:
            targets = [it for _, it in demo_match_items(self.text, self.items)]
            if not targets:
                return self.not_found()
        decl = self.tools[tool]
        calls, names = [], []
        for it in targets:
            args = demo_item_args(decl, it, self.items, self.state, tool)
            if args is not None:
                calls.append((tool, args))
                names.append("**%s**" % it.get("name"))
        if not calls:
            return self.say("I cannot remove %s: its remove button is not available right now."
                            % self.join(str(it.get("name")) for it in targets))
        return self.call(*calls, lead="Removing %s." % self.join(names))

    def removed(self):
        """The answer after the remove calls, from what the fresh page state
        shows: a page whose buttons do nothing still shows the item."""
        names = self.said("Removing ")
        gone, kept = [], []
        for i, d in enumerate(self.did("remove")):
            name = names[i] if i < len(names) else None
            row = demo_shown(self.items, demo_call_item_id(d["args"]), name)
            if row is None:
                gone.append("**%s**" % (name or "the item"))
            else:
                kept.append("**%s**" % (name or row.get("name")))
        out = []
        if gone:
            out.append("Removed %s from the cart." % self.join(gone))
        if kept:
            out.append("I tried to remove %s, but the page still shows %s." % (
                self.join(kept), "it" if len(kept) == 1 else "them"))
        return self.say(" ".join(out + [demo_cart_line(self.state, still=not gone)]))

    def own_lines(self):
        """The lines of this model's own texts since the user's message."""
        # A streamed text may come back split over parts, or over consecutive
        # model contents (one per chunk): join each model turn's text.
        turns, buf = [], ""
        for c in self.ctx.contents[self.ctx.last_user + 1:] + [{"role": "user"}]:
            if role_of(c) == "model":
                buf += "".join(p["text"] for p in c.get("parts") or []
                               if isinstance(p, dict) and isinstance(p.get("text"), str))
            else:
                turns.append(buf)
                buf = ""
        return [line for turn in turns for line in turn.split("\n")]

    def said(self, prefix):
        """Names in bold in this model's own texts since the user's message
        that start with prefix (the removed item is gone from the fresh page
        state; the call turn said what it was removing)."""
        names = []
        for line in self.own_lines():
            if line.startswith(prefix):
                names += re.findall(r"\*\*(.+?)\*\*", line)
        return names

    def quantity_before(self, clicks):
        """The quantity the page showed before the last of these clicks, as
        its call id remembers it (demo_memo_id), or None: the fresh page
        state is compared with it."""
        return demo_memo(clicks[-1].get("id")) if clicks else None

    @staticmethod
    def join(names):
        names = list(names)
        if len(names) <= 1:
            return "".join(names)
        return ", ".join(names[:-1]) + " and " + names[-1]

    def quantity(self, target=None, delta=None):
        if target == 0 and self.did("remove"):
            return self.removed()
        item, reply = self.one_item()
        if item is None:
            if self.done:     # e.g. the page dropped the row at quantity 0
                what = demo_unmatched(self.text)
                return self.say("%s is no longer in your cart. %s" % (
                    "“%s”" % what if what else "That item", demo_cart_line(self.state)))
            return reply
        name = str(item.get("name"))
        q = int(demo_qty(item))
        inc, dec = self.tool("increase"), self.tool("decrease")
        clicks = self.did("increase", "decrease")
        if clicks and self.quantity_before(clicks) == q:
            return self.say("I clicked %s for **%s**, but the page still shows quantity %d. %s"
                            % ("increase" if demo_find_tool([clicks[-1]["name"]],
                                                            *self.TOOL_PATTERNS["increase"])
                               else "decrease",
                               name, q, demo_cart_line(self.state, still=len(clicks) == 1)))
        if target is not None:
            if target == 0 and self.tool("remove"):
                return self.remove_one(item)
            if q == target:
                if clicks:
                    return self.say("**%s** quantity is now %d. %s" % (
                        name, q, demo_cart_line(self.state)))
                return self.say("**%s** quantity is already %d." % (name, q))
            if len(clicks) >= DEMO_MAX_CLICKS:
                return self.say("I stopped after %d clicks: **%s** quantity is %d, not %d." % (
                    len(clicks), name, q, target))
            tool = inc if q < target else dec
        else:
            tool = inc if delta > 0 else dec
            if clicks and len(clicks) >= abs(delta):
                return self.say("**%s** quantity is now %d. %s" % (
                    name, q, demo_cart_line(self.state)))
        if not tool:
            return self.help("This page does not offer a button to %s quantities." % (
                "increase" if (target is not None and q < target) or (delta or 0) > 0
                else "decrease"))
        args = demo_item_args(self.tools[tool], item, self.items, self.state, tool)
        if args is None:
            return self.say("I cannot change **%s** any further: that button is not available "
                            "right now (quantity %d). %s" % (name, q, demo_cart_line(self.state)))
        turn = self.call((tool, args))
        demo_memo_id(turn, q)
        return turn

    def remove_one(self, item):
        tool = self.tool("remove")
        args = demo_item_args(self.tools[tool], item, self.items, self.state, tool)
        if args is None:
            return self.say("I cannot remove **%s**: its remove button is not available." %
                            item.get("name"))
        return self.call((tool, args), lead="Removing **%s**." % item.get("name"))

    # -- add an item --
    def parse_add(self):
        price = None
        m = re.search(r"(?:\bfor|\bat|\bpriced(?:\s+at)?|\bcosting|\bcosts?|@|\bprice(?:\s+of)?)"
                      r"\s*\$?\s*(\d+(?:[.,]\d{1,2})?)\b", self.text, re.I) or \
            re.search(r"\$\s*(\d+(?:[.,]\d{1,2})?)", self.text)
        if m:
            price = m.group(1).replace(",", ".")
        m = re.search(r"\badd\s+(.+)", self.text, re.I)
        name = m.group(1) if m else ""
        name = re.split(r"\s*(?:,|\bfor\b|\bat\b|\bpriced\b|\bcosting\b|\bcosts?\b|\bwhich\b|"
                        r"\bthat\b|\bwith\b|\$|@|\bto\s+(?:the|my)\s+(?:cart|basket)\b)",
                        name, maxsplit=1, flags=re.I)[0]
        name = re.sub(r"^(?:(?:an?|the|one|new|some|item|product)\s+)*(?:(?:called|named)\s+)?",
                      "", name.strip(), flags=re.I)
        name = name.strip(" .!?\"'“”‘’")
        if name and name == name.lower():
            name = " ".join(w[:1].upper() + w[1:] for w in name.split())
        return name, price

    def add(self):
        name, price = self.parse_add()
        if self.did("add"):
            return self.added(name, price)
        fill_name, fill_price, add = self.tool("fill-name"), self.tool("fill-price"), \
            self.tool("add")
        if not (fill_name and add):
            return self.help("This page does not offer an add form I can use.")
        if not name:
            return self.say("What should I add? For example: *add a desk lamp for 19.99*.")
        if price is None:
            found = demo_match_items(name, self.items)
            if found and (self.tool("increase")):
                return self.quantity(delta=self.amount())
            if fill_price:
                return self.say("What price should I use for **%s**? For example: *add %s for "
                                "19.99*." % (name, name.lower()))
        return self.call(*self.add_calls(name, price))

    def add_calls(self, name, price):
        calls = [(self.tool("fill-name"), demo_fill_args(self.tools[self.tool("fill-name")], name))]
        if price is not None and self.tool("fill-price"):
            calls.append((self.tool("fill-price"),
                          demo_fill_args(self.tools[self.tool("fill-price")], price)))
        calls.append((self.tool("add"), {}))
        return calls

    def added(self, name, price, lead=""):
        there = [i for i in self.items if str(i.get("name", "")).lower() == name.lower()]
        if there:
            it = there[-1]
            return self.say("%sAdded **%s** at %s to the cart. %s" % (
                lead, it.get("name"), demo_money(it.get("price", price)),
                demo_cart_line(self.state)))
        return self.say("%sI filled in the form and clicked Add, but I do not see **%s** in the "
                        "cart yet. %s" % (lead, name, demo_cart_line(self.state)))

    # -- search --
    def parse_query(self):
        m = re.search(r"(?:search(?:\s+(?:in\s+)?the\s+(?:catalog(?:ue)?|shop|store))?(?:\s+for)?"
                      r"|look\s+(?:for|up)|find(?:\s+me)?|do\s+you\s+(?:have|sell))\s+(.+)",
                      self.text, re.I)
        q = m.group(1) if m else ""
        q = re.split(r"\s+and\s+(?:then\s+)?(?:add|put)\b|[?!.;]", q, maxsplit=1, flags=re.I)[0]
        q = re.sub(r"^(?:(?:an?|the|some|any)\s+)+", "", q.strip(), flags=re.I)
        q = re.sub(r"\s+(?:in|from)\s+(?:the\s+)?(?:catalog(?:ue)?|shop|store)$", "", q,
                   flags=re.I)
        q = re.sub(r"\s+(?:products?|items?)$", "", q, flags=re.I)
        return q.strip(" \"'“”‘’")

    def search(self):
        query = self.parse_query()
        action = self.tool("search-action")
        wants_add = re.search(r"\band\s+(?:then\s+)?(?:add|put)\b", self.low) is not None
        if not query:
            return self.say("What should I search for? For example: *search for usb*.")
        if not action:
            return self.page_search(query)
        searches = [d for d in self.done if d["name"] == action]
        if not searches:
            return self.call((action, {"query": query}))
        last = searches[-1]
        res = demo_result(last["response"])
        products = res.get("products") if isinstance(res, dict) else None
        if not isinstance(products, list):
            return self.say("The search returned something I cannot read: %s" % compact(res))
        q = last["args"].get("query", query)
        if not products and len(searches) == 1 and len(q) > 3 and q.lower().endswith("s"):
            return self.call((action, {"query": q[:-1]}))     # "keyboards" -> "keyboard"
        found = self.found_text(q, products, res.get("total"))
        if not wants_add or not products:
            return self.say(found)
        pick = self.pick_product(products)
        add = self.tool("add")
        if not (self.tool("fill-name") and add):
            return self.say(found + "\n\nThis page has no add form I can use to add it.")
        if self.did("add"):
            return self.added(str(pick.get("name")), pick.get("price"), lead=found + "\n\n")
        return self.call(*self.add_calls(str(pick.get("name")), self.price_text(pick)))

    @staticmethod
    def price_text(product):
        p = product.get("price")
        if isinstance(p, (int, float)) and not isinstance(p, bool):
            return "%.2f" % p
        return None if p is None else str(p)

    def pick_product(self, products):
        if re.search(r"\bcheapest\b", self.low):
            return min(products, key=lambda p: float(p.get("price") or 0))
        if re.search(r"\b(most expensive|priciest)\b", self.low):
            return max(products, key=lambda p: float(p.get("price") or 0))
        m = re.search(r"\b(%s)\b" % "|".join(ORDINALS), self.low)
        if m:
            k = ORDINALS[m.group(1)]
            if -len(products) <= k < len(products):
                return products[k]
        return products[0]

    @staticmethod
    def found_text(query, products, total=None):
        if not products:
            return "I found no products for “%s” in the catalog." % query
        n = total if isinstance(total, int) and total >= len(products) else len(products)
        lines = ["- %s — %s" % (p.get("name"), demo_money(p.get("price")))
                 for p in products[:DEMO_LIST]]
        more = len(products) - DEMO_LIST
        if more > 0:
            lines.append("- … and %d more" % more)
        return "I found %d product%s for “%s”:\n%s" % (n, "" if n == 1 else "s", query,
                                                      "\n".join(lines))

    def page_search(self, query):
        fill, click = self.tool("fill-search"), self.tool("click-search")
        if not (fill and click):
            return self.help("This page offers no search I can use.")
        if self.did("click-search"):
            return self.say("I searched the page for “%s”; the results are on the page." % query)
        return self.call((fill, demo_fill_args(self.tools[fill], query)), (click, {}))

    # -- reviews (the run API's side effect) --
    def parse_review(self):
        """(product words, stars or None, review text or None) of a request
        like "review the USB-C hub 5 stars: great", "write a 4 star review
        of the keyboard: solid keys", "rate the mouse 3/5 - it is ok"."""
        t = self.text
        m = re.search(r"[\"“]([^\"”]+)[\"”]", t)
        body = m.group(1) if m else None
        head = t[:m.start()] if m else t
        if body is None:
            m = re.search(r"\s*(?::|\s[-–—]\s)\s*", head)
            if m:
                body, head = head[m.end():], head[:m.start()]
        stars = None
        for pat in (r"\b%s\s*-?\s*stars?\b" % NUM, r"\b([1-9])\s*/\s*5\b",
                    r"\b(?:rating|stars?)\s*(?:of|:|=)?\s*%s\b" % NUM):
            m = re.search(pat, head, re.I)
            if m:
                stars = demo_number(m.group(1))
                if body is None:        # "5 stars, it is great"
                    rest = head[m.end():].strip(" ,.;")
                    if rest and not re.match(r"(?:for|of)\b", rest, re.I):
                        body, head = rest, head[:m.end()]
                head = head[:m.start()] + " " + head[m.end():]
                break
        m = re.search(r"\b(?:review|rate)\b", head, re.I)
        words = head[m.end():] if m else head
        words = re.sub(r"^\s*(?:(?:of|for|on|about|the|a|an|my|this|product|it)\s+)*", "",
                       words + " ", flags=re.I)
        words = re.sub(r"\s+(?:with|and|saying|that says)\s*$", "", words.strip(), flags=re.I)
        body = (body or "").strip(" \"'“”‘’") or None
        return words.strip(" ,.;") or None, stars, body

    def review(self):
        what, stars, body = self.parse_review()
        search, add = self.tool("search-action"), self.tool("review-action")
        example = "For example: *review the USB-C hub 5 stars: great*."
        if not what:
            return self.say("Which product should I review? " + example)
        if stars is None or not 1 <= stars <= 5:
            return self.say("How many stars (1 to 5) should the review of %s give? %s"
                            % (what, example))
        if not body:
            return self.say("What should the review of %s say? %s" % (what, example))
        reviews = [d for d in self.done if d["name"] == add]
        if reviews:
            return self.reviewed(reviews[-1])
        if not search:
            return self.say("I need the catalog search to find %s, and this page offers "
                            "none." % what)
        searches = [d for d in self.done if d["name"] == search]
        if not searches:
            return self.call((search, {"query": what}))
        res = demo_result(searches[-1]["response"])
        err = demo_error(searches[-1]["response"])
        products = res.get("products") if isinstance(res, dict) else None
        if err or not isinstance(products, list):
            return self.say("The catalog search failed: %s" % (err or compact(res)))
        if not products:
            last = demo_words(what)[-1:] if len(demo_words(what)) > 1 else []
            if len(searches) == 1 and last and last[0] not in STOPWORDS:
                return self.call((search, {"query": last[0]}))   # "usb-c hub" -> "hub"
            return self.say("I found no product matching “%s” to review." % what)
        want = set(demo_words(what))
        pick = max(products, key=lambda p: (what.lower() in str(p.get("name", "")).lower(),
                                            len(want & set(demo_words(str(p.get("name", "")))))))
        return self.call((add, {"productId": str(pick.get("_id") or pick.get("id")),
                                "rating": stars, "text": body}))

    def review_product(self, pid):
        """The name of product pid, from the searches made since the user's message."""
        for d in self.done:
            res = demo_result(d["response"])
            for p in (res.get("products") or []) if isinstance(res, dict) else []:
                if isinstance(p, dict) and str(p.get("_id") or p.get("id")) == pid:
                    return str(p.get("name"))
        return pid

    def reviewed(self, d):
        args = d["args"]
        name = self.review_product(str(args.get("productId")))
        err = demo_error(d["response"])
        if err is None:
            return self.say("Done: your %s-star review of **%s** is posted: “%s”." % (
                args.get("rating"), name, args.get("text")))
        m = re.match(r"the user declined this action(?::\s*(.*))?", err)
        if m:
            return self.say("All right, I did not post the review of **%s**: you declined it%s."
                            % (name, " (“%s”)" % m.group(1) if m.group(1) else ""))
        if err.startswith("denied by the site's policy"):
            return self.say("I could not post the review of **%s**: the site does not allow "
                            "it (%s)." % (name, err))
        return self.say("The review of **%s** could not be posted: %s" % (name, err))


def sc_demo(ctx):
    ctx.model_version = DEMO_MODEL_VERSION
    return DemoModel(ctx).plan()


SCENARIOS = {
    # name: (function, extra params, one-line doc)
    "text": (sc_text, {"say"}, "one text part, STOP"),
    "page-call": (sc_page_call, CALL_PARAMS, "call the page tool, then 'Done: ...'"),
    "parallel": (sc_parallel, CALL_PARAMS | {"n"}, "n parallel page calls, then text"),
    "server-call": (sc_server_call, CALL_PARAMS | {"n"},
                    "n calls of the server action `tool` (addReview), then 'Done: ...'"),
    "server-chain": (sc_server_chain, set(), "searchProducts -> getProductBySlug -> text"),
    "server-steps": (sc_server_steps, {"calls"},
                     "one server call per step from `calls` ([[name, args], ...]), then "
                     "'Done: ...'"),
    "mixed": (sc_mixed, CALL_PARAMS | {"order"}, "server call + page call in one turn"),
    "invalid-args": (sc_invalid_args, set(), "searchProducts {query: 5}, then quote the error"),
    "unknown-tool": (sc_unknown_tool, set(), "no_such_tool {}, then quote the error"),
    "loop": (sc_loop, set(), "always call searchProducts {query: x}"),
    "text-and-call": (sc_text_and_call, CALL_PARAMS | {"say"}, "text + page call in one turn"),
    "retry-then-ok": (sc_retry_then_ok, {"status", "times", "retry", "header", "wrap",
                                         "fixture", "say", "html"},
                      "first `times` requests fail with `status`, then text"),
    "error": (sc_error, {"status", "retry", "header", "wrap", "fixture", "html"},
              "always `status` with the real body"),
    "slow": (sc_slow, {"ms", "say"}, "sleep ms, then text"),
    "stall": (sc_stall, {"ms"}, "headers + part of the body, then hang ms"),
    "drop": (sc_drop, set(), "close the connection without a response"),
    "html": (sc_html, {"status"}, "an HTML error page"),
    "truncated": (sc_truncated, {"short", "times", "say"}, "200 with half the body"),
    "no-candidates": (sc_no_candidates, set(), "200 with usageMetadata only"),
    "malformed": (sc_malformed, CALL_PARAMS | {"times", "message", "withcall", "say"},
                  "MALFORMED_FUNCTION_CALL `times` times, then text"),
    "unexpected-tool-call": (sc_unexpected, CALL_PARAMS | {"times", "message", "withcall", "say"},
                             "UNEXPECTED_TOOL_CALL `times` times, then text"),
    "blocked": (sc_blocked, set(), "fixture 13: promptFeedback.blockReason SAFETY"),
    "safety": (sc_safety, set(), "fixture 14: finishReason SAFETY, no content"),
    "recitation": (sc_recitation, set(), "finishReason RECITATION, no content"),
    "max-tokens": (sc_max_tokens, {"say"}, "text cut off, MAX_TOKENS"),
    "thought-only": (sc_thought_only, set(), "fixture 08: only a thought part"),
    "empty-parts": (sc_empty_parts, {"form"}, "content with no parts, STOP"),
    "signatures": (sc_signatures, CALL_PARAMS, "Gemini-3 style: signed call, signed call, "
                                               "signed text"),
    "midstream-error": (sc_midstream_error, {"say"}, "stream: one chunk, then a bare error "
                                                     "object (unary: 500)"),
    "demo": (sc_demo, set(), "the offline demo model: answers the demo cart page's requests "
                             "(modelVersion offline-demo)"),
}


def check_scenario(name, params):
    if name not in SCENARIOS:
        raise MockError("unknown scenario %r (known: %s)" % (name, ", ".join(sorted(SCENARIOS))))
    allowed = SCENARIOS[name][1] | UNIVERSAL_PARAMS
    bad = sorted(set(params) - allowed)
    if bad:
        raise MockError("scenario %s: unknown parameter(s) %s (allowed: %s)"
                        % (name, ", ".join(bad), ", ".join(sorted(allowed))))


def resolve_scenario(state, body, headers):
    """(name, params, source) - marker, header, default, 'text'."""
    contents = body.get("contents") if isinstance(body, dict) else None
    if isinstance(contents, list):
        for c in contents:
            if isinstance(c, dict) and (c.get("role") or "user") == "user":
                texts = [p.get("text") for p in c.get("parts") or []
                         if isinstance(p, dict) and isinstance(p.get("text"), str)]
                if texts:
                    m = MARKER_RE.search("".join(texts))
                    if m:
                        return parse_scenario_spec(m.group(1)) + ("marker",)
                    break
    h = headers.get("x-mock-scenario")
    if h:
        return parse_scenario_spec(h) + ("header",)
    with state.lock:
        d = state.default_scenario
    if d:
        return d[0], dict(d[1]), "default"
    return "text", {}, "builtin"


# ---------------------------------------------------------------------------
# Rendering plans into responses

class Renderer:
    def __init__(self, ctx):
        self.ctx = ctx
        self.state = ctx.state
        self.response_id = self.state.response_id()
        self.thoughts = ctx.p_int("thoughts", 24)
        # toolUsePromptTokenCount: what Gemini-side tools fed the model
        # (billed as prompt); sent only when asked for, as the API does
        self.tooluse = ctx.p_int("tooluse", 0)

    def finalize_part(self, proto, extra=True):
        part = {k: v for k, v in proto.items() if k != "_sign"}
        if "text" in part and extra and self.ctx.params.get("extra") != "0":
            part[MOCK_PART_FIELD] = MOCK_PART_FIELD_VALUE
        if proto.get("_sign"):
            part["thoughtSignature"] = self.state.issue_signature(self.ctx.conv,
                                                                  part_fingerprint(part))
        return part

    def usage(self, cand_tokens, stream=False):
        prompt = self.ctx.prompt_tokens
        total = prompt + cand_tokens + self.thoughts + self.tooluse
        if stream:   # key order of the raw SSE captures (09a, 09b)
            u = {"promptTokenCount": prompt}
            if cand_tokens:
                u["candidatesTokenCount"] = cand_tokens
            u["totalTokenCount"] = total
            u["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": prompt}]
            if self.thoughts:
                u["thoughtsTokenCount"] = self.thoughts
            if self.tooluse:
                u["toolUsePromptTokenCount"] = self.tooluse
            return u
        u = {}
        if cand_tokens:
            u["candidatesTokenCount"] = cand_tokens
        u["promptTokenCount"] = prompt
        u["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": prompt}]
        if self.thoughts:
            u["thoughtsTokenCount"] = self.thoughts
        if self.tooluse:
            u["toolUsePromptTokenCount"] = self.tooluse
        u["totalTokenCount"] = total
        return u

    @staticmethod
    def part_tokens(part):
        if "text" in part:
            return tokens(part["text"])
        if "functionCall" in part:
            return tokens(json.dumps(part["functionCall"], separators=(",", ":")))
        return 0

    def turn_token(self):
        raw = ("%s%s" % (self.response_id, self.response_id)).encode()
        return "v1:" + base64.urlsafe_b64encode(raw).decode().rstrip("=")

    def unary_obj(self, candidate, cand_tokens):
        obj = {}
        if candidate is not None:
            obj["candidates"] = [candidate]
        obj["modelVersion"] = self.ctx.model_version
        obj["responseId"] = self.response_id
        if self.ctx.params.get("extra") != "0":
            obj["turnToken"] = self.turn_token()
        obj["usageMetadata"] = self.usage(cand_tokens)
        return obj

    def chunk_obj(self, candidate, cand_tokens, last):
        obj = {}
        if candidate is not None:
            obj["candidates"] = [candidate]
        if last or self.ctx.params.get("usage", "every") != "last":
            obj["usageMetadata"] = self.usage(cand_tokens, stream=True)
        obj["modelVersion"] = self.ctx.model_version
        obj["responseId"] = self.response_id
        return obj

    # -- content plans -----------------------------------------------------
    def unary_content(self, plan):
        parts = [self.finalize_part(p) for p in plan.parts]
        cand = {"content": {"parts": parts, "role": "model"}}
        if plan.finish_message:
            cand["finishMessage"] = plan.finish_message
        cand["finishReason"] = plan.finish
        cand["index"] = 0
        return self.unary_obj(cand, sum(self.part_tokens(p) for p in parts))

    def stream_content(self, plan):
        """Text parts become a few deltas; all function calls of the turn come
        whole in one chunk; finishReason only on the last chunk."""
        n_chunks = self.ctx.p_int("chunks", 3)
        sigpart = self.ctx.p("sigpart", "empty")
        if sigpart not in ("empty", "last"):
            raise MockError("sigpart must be empty or last")
        # one list of final parts per chunk, with the candidates tokens so
        # far: a text counts as the whole text sent so far (not the sum of
        # its pieces), so the last chunk's count is the unary answer's
        groups, counts = [], []
        calls = []
        done = 0      # tokens of the parts sent whole
        for proto in plan.parts:
            if "functionCall" in proto:
                calls.append(self.finalize_part(proto))
                continue
            if calls:
                done += sum(self.part_tokens(p) for p in calls)
                groups.append(calls)
                counts.append(done)
                calls = []
            pieces = split_text(proto["text"], n_chunks)
            for k, piece in enumerate(pieces):
                last_piece = k == len(pieces) - 1
                p = {"text": piece}
                if last_piece and proto.get("_sign") and sigpart == "last":
                    p["_sign"] = True
                groups.append([self.finalize_part(p, extra=last_piece)])
                counts.append(done + tokens("".join(pieces[:k + 1])))
            done += tokens(proto["text"])
            if proto.get("_sign") and sigpart == "empty":
                groups.append([self.finalize_part({"text": "", "_sign": True}, extra=False)])
                counts.append(done)
        if calls:
            done += sum(self.part_tokens(p) for p in calls)
            groups.append(calls)
            counts.append(done)
        events = []
        if not groups:
            groups, counts = [[]], [0]
        for gi, parts in enumerate(groups):
            last = gi == len(groups) - 1
            cum = counts[gi]
            cand = {"content": {"parts": parts, "role": "model"}}
            if last:
                if plan.finish_message:
                    cand["finishMessage"] = plan.finish_message
                cand["finishReason"] = plan.finish
            cand["index"] = 0
            events.append(self.chunk_obj(cand, cum, last))
        return events

    def render(self, plan):
        """-> list of response objects (one for unary; the chunks for a stream)."""
        stream = self.ctx.stream
        k = plan.kind
        if k == "content":
            return self.stream_content(plan) if stream else [self.unary_content(plan)]
        if k == "raw":
            return [plan.obj]
        if k == "finish-only":
            cand = {"finishReason": plan.finish, "index": 0}
            if plan.finish_message:
                cand = {"finishMessage": plan.finish_message, "finishReason": plan.finish,
                        "index": 0}
            return [self.chunk_obj(cand, 0, True) if stream else self.unary_obj(cand, 0)]
        if k == "no-candidates":
            return [self.chunk_obj(None, 0, True) if stream else self.unary_obj(None, 0)]
        if k == "empty-parts":
            content = {"role": "model"} if plan.form == "absent" else {"parts": [], "role": "model"}
            cand = {"content": content, "finishReason": "STOP", "index": 0}
            return [self.chunk_obj(cand, 0, True) if stream else self.unary_obj(cand, 0)]
        raise AssertionError(k)


# ---------------------------------------------------------------------------
# HTTP

ROUTE_RE = re.compile(r"^/v1beta/models/([^/:]+):(generateContent|streamGenerateContent)$")
# Vertex AI's path (tests/mock/README.md "Vertex AI"): the same bodies, an OAuth token
VERTEX_ROUTE_RE = re.compile(r"^/v1/projects/([^/]+)/locations/([^/]+)/publishers/google/"
                             r"models/([^/:]+):(generateContent|streamGenerateContent)$")


def match_route(path):
    """(model, method, vertex) of an API path, or None."""
    m = ROUTE_RE.match(path)
    if m:
        return m.group(1), m.group(2), False
    m = VERTEX_ROUTE_RE.match(path)
    if m:
        return m.group(3), m.group(4), True
    return None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "scaffolding on HTTPServer2"
    sys_version = ""
    timeout = 300

    def version_string(self):
        return self.server_version

    def setup(self):
        super().setup()
        self.conn_id = self.server.state.next_conn()
        self.gzip_ok = False

    def finish(self):
        try:
            super().finish()
        finally:
            self.server.state.conn_closed(self.conn_id)

    def peer_gone(self):
        """Called when the socket polls readable: EOF or an error means the
        client has closed; data (a pipelined request) means it is still there."""
        try:
            return self.connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True

    def pause(self, seconds):
        """Wait `seconds`, or less if the mock is stopping; watch the socket
        meanwhile (every 50 ms at most) and return True as soon as the client
        has closed the connection, so a hang ends, and /__mock/connections
        shows the close, when the client goes."""
        state = self.server.state
        deadline = time.monotonic() + seconds
        poller = select.poll()
        poller.register(self.connection, select.POLLIN | select.POLLERR | select.POLLHUP
                        | getattr(select, "POLLRDHUP", 0))
        while not state.stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            step = min(left, 0.05)
            if poller.poll(step * 1000.0):
                if self.peer_gone():
                    self.close_connection = True
                    return True
                state.stop.wait(step)   # data waiting (read after this answer): no busy loop
        return False

    # BaseHTTPRequestHandler logs the request line, query string (and so a
    # ?key=) included: silence it; _log() writes our own line.
    def log_message(self, fmt, *args):
        pass

    def log_request(self, code="-", size="-"):
        pass

    def _log(self, rec, path, stream):
        if self.server.state.quiet:
            return
        sys.stderr.write("gemini-mock: conn=%d seq=%s %s %s%s scenario=%s status=%s\n" % (
            self.conn_id, rec.get("seq", "-"), self.command, path,
            " (sse)" if stream else "", rec.get("scenario") or "-", rec.get("status")))
        sys.stderr.flush()

    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    do_PUT = do_DELETE = do_PATCH = do_GET

    # -- body ---------------------------------------------------------------
    def read_body(self):
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if "chunked" in te:
            out = bytearray()
            while True:
                line = self.rfile.readline(65537)
                if not line:
                    break
                size = int(line.split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                out += self.rfile.read(size)
                self.rfile.readline(65537)
                if len(out) > MAX_BODY:
                    raise ValueError("body too large")
            return bytes(out)
        n = self.headers.get("Content-Length")
        if not n:
            return b""
        n = int(n)
        if n > MAX_BODY:
            raise ValueError("body too large")
        return self.rfile.read(n)

    # -- output -------------------------------------------------------------
    def send_bytes(self, status, body, ctype, headers=()):
        self.send_response(status, REASONS.get(status))
        self.send_header("Content-Type", ctype)
        if self.gzip_ok and ctype.startswith("application/json") and body:
            # like the real API: gzip when the client accepts it (docs/internals/gemini-wire.md §1)
            body = gzip.compress(body, mtime=0)
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Vary", "Origin, X-Origin, Referer")
        self.send_header("X-Content-Type-Options", "nosniff")
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()

    def send_json(self, status, obj, headers=(), stream_route=False):
        # The real API answers errors on the streaming route with a plain JSON
        # body but Content-Type text/event-stream (fixture e404).
        ctype = "text/event-stream" if stream_route else "application/json; charset=UTF-8"
        self.send_bytes(status, pretty(obj).encode("utf-8"), ctype, headers)

    def start_chunked(self, ctype):
        self.send_response(200, "OK")
        self.send_header("Content-Type", ctype)
        if ctype == "text/event-stream":
            self.send_header("Content-Disposition", "attachment")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Vary", "Origin, X-Origin, Referer")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.flush()

    def write_chunk(self, data):
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

    def end_chunked(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def control_json(self, status, obj):
        self.send_bytes(status, (json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8"),
                        "application/json; charset=UTF-8")

    # -- dispatch -----------------------------------------------------------
    def dispatch(self):
        self.gzip_ok = False
        self.server.state.conn_request(self.conn_id)
        url = urllib.parse.urlsplit(self.path)
        try:
            raw = self.read_body()
        except (ValueError, OSError):
            self.close_connection = True
            self.send_bytes(413, b"", "text/plain")
            return
        if url.path.startswith("/__mock/"):
            self.control(url, raw)
            return
        try:
            self.api(url, raw)
        except (BrokenPipeError, ConnectionResetError, PeerGone):
            self.close_connection = True

    def control(self, url, raw):
        state = self.server.state
        q = dict(urllib.parse.parse_qsl(url.query))
        if url.path == "/__mock/health":
            return self.control_json(200, {"ok": True, "port": self.server.server_address[1],
                                           "pid": os.getpid()})
        if url.path == "/__mock/connections" and self.command == "GET":
            body = (state.conns_json() + "\n").encode("utf-8")
            return self.send_bytes(200, body, "application/json; charset=UTF-8")
        if url.path == "/__mock/requests" and self.command == "GET":
            since = int(q.get("since", "0") or 0)
            body = (state.records_json(since) + "\n").encode("utf-8")
            return self.send_bytes(200, body, "application/json; charset=UTF-8")
        if url.path == "/__mock/reset" and self.command == "POST":
            state.reset()
            return self.control_json(200, {"ok": True})
        if url.path == "/__mock/scenario":
            if self.command == "GET":
                d = state.default_scenario
                return self.control_json(200, {"name": d[0] if d else None,
                                               "params": d[1] if d else {}})
            if self.command == "POST":
                try:
                    obj = json.loads(raw.decode("utf-8") or "{}")
                    if not isinstance(obj, dict):
                        raise MockError("body must be a JSON object")
                    name = obj.pop("name", None)
                    if name is None:
                        with state.lock:
                            state.default_scenario = None
                        return self.control_json(200, {"ok": True, "name": None, "params": {}})
                    params = {k: (v if isinstance(v, str) else json.dumps(v))
                              for k, v in obj.items()}
                    check_scenario(name, params)
                except (ValueError, MockError) as exc:
                    return self.control_json(400, {"ok": False, "error": str(exc)})
                with state.lock:
                    state.default_scenario = (name, params)
                return self.control_json(200, {"ok": True, "name": name, "params": params})
        return self.control_json(404, {"ok": False, "error": "no control route %s %s"
                                                            % (self.command, url.path)})

    def api(self, url, raw):
        state = self.server.state
        headers = {}
        for k, v in self.headers.items():
            k = k.lower()
            headers[k] = headers[k] + ", " + v if k in headers else v
        query = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
        body = None
        json_error = None
        if raw.strip():
            try:
                body = json.loads(raw.decode("utf-8"),
                                  parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
            except (ValueError, UnicodeDecodeError) as exc:
                json_error = str(exc)
        m = match_route(url.path)
        stream = bool(m and m[1] == "streamGenerateContent")
        sse = stream and query.get("alt") == "sse"
        rec = {"seq": None, "conn": self.conn_id, "method": self.command, "path": url.path,
               "query": query, "headers": headers, "body": body, "raw_len": len(raw),
               "scenario": None, "status": None, "stream": stream,
               "model": m[0] if m else None, "vertex": bool(m and m[2])}
        state.add_record(rec)

        def finish(status, obj=None, hdrs=(), log=True):
            rec["status"] = status
            if obj is not None:
                self.send_json(status, obj, hdrs, stream_route=stream)
            if log:
                self._log(rec, url.path, sse)

        scen = None
        scen_error = None
        try:
            scen = resolve_scenario(state, body if isinstance(body, dict) else {}, headers)
            rec["scenario"] = scen[0]
            check_scenario(scen[0], scen[1])
        except MockError as exc:
            scen_error = str(exc)
        accept = [t.split(";")[0].strip().lower()
                  for t in headers.get("accept-encoding", "").split(",")]
        self.gzip_ok = "gzip" in accept and not (scen and scen[1].get("gzip") == "0")

        if not m or self.command != "POST":
            return finish(404, error_obj(404, "gemini-mock: no route for %s %s (the mock serves "
                                              "POST /v1beta/models/{model}:generateContent and "
                                              ":streamGenerateContent?alt=sse)"
                                         % (self.command, url.path)))
        if m[2]:
            # Vertex AI: an OAuth token in Authorization: Bearer, never a key
            auth = headers.get("authorization", "")
            token = auth[len("Bearer "):] if auth.startswith("Bearer ") else ""
            if "key" in query or "x-goog-api-key" in headers or not token.strip():
                return finish(401, error_obj(
                    401, "Request is missing required authentication credential. Expected "
                         "OAuth 2 access token, login cookie or other valid authentication "
                         "credential.", "UNAUTHENTICATED"))
            if token == "bad-token":
                return finish(401, error_plan(state, None, 401, {}).obj)
        else:
            # auth: the key must come in x-goog-api-key
            key = headers.get("x-goog-api-key", "")
            if "key" in query or not key:
                return finish(403, state.fixture("e403-permission-denied.json"))
            if key == "bad-key":
                return finish(400, state.fixture("e400-api-key-invalid.array-wrapped.json"))
        model = m[0]
        if model not in state.models and not state.any_model:
            return finish(404, model_not_found(state, model))
        # the body
        if json_error is not None:
            desc = "Invalid JSON payload received. Unexpected token.\n%s\n^" % (
                raw[:40].decode("utf-8", "replace"))
            return finish(400, bad_request([("", desc)]))
        if body is None:
            body = {}
        if not isinstance(body, dict):
            return finish(400, bad_request([("", 'Invalid JSON payload received. Unknown name "": '
                                                 'Root element must be a message.')]))
        walker = ProtoWalker()
        norm = walker.walk(body, ("msg", "GenerateContentRequest"), "")
        if walker.violations:
            return finish(400, bad_request(walker.violations))
        err = validate_fields(norm)
        if err is None:
            err = validate_pairing(state, norm["contents"])
        if err is None:
            err = validate_signatures(state, conversation_key(norm["contents"]), norm["contents"])
        if err is not None:
            return finish(400, err)
        if scen_error:
            return finish(400, error_obj(400, "gemini-mock: " + scen_error, "INVALID_ARGUMENT"))
        name, params, _src = scen
        ctx = Ctx(state, norm, model, stream, sse, name, params, headers)
        ctx.pause = self.pause
        try:
            delay = ctx.p_int("delay", 0)
            if delay > 0 and self.pause(delay / 1000.0):
                raise PeerGone()
            plan = SCENARIOS[name][0](ctx)
            self.send_plan(ctx, plan, rec, finish)
        except MockError as exc:
            return finish(400, error_obj(400, "gemini-mock: " + str(exc), "INVALID_ARGUMENT"))

    # -- sending a plan -------------------------------------------------------
    def send_plan(self, ctx, plan, rec, finish):
        state = ctx.state
        k = plan.kind
        if k == "error":
            return finish(plan.status, plan.obj, plan.headers)
        if k == "html":
            status = plan.status
            rec["status"] = status
            body = HTML_ERROR.format(code=status, reason=REASONS.get(status, "Error"))
            self.send_bytes(status, body.encode("utf-8"), "text/html; charset=UTF-8")
            return self._log(rec, self.path.split("?")[0], ctx.sse)
        if k == "drop":
            rec["status"] = 0
            self._log(rec, self.path.split("?")[0], ctx.sse)
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if k == "midstream":
            if not ctx.stream:
                return finish(500, state.fixture("e500-internal.json"))
            events = Renderer(ctx).render(plan.inner)[:1]
            for ev in events:   # no finishReason in the one chunk we send
                for c in ev.get("candidates", []):
                    c.pop("finishReason", None)
                    c.pop("finishMessage", None)
            rec["status"] = 200
            self._log(rec, self.path.split("?")[0], ctx.sse)
            self.start_chunked("text/event-stream" if ctx.sse else "application/json; charset=UTF-8")
            for ev in events:
                self.write_chunk(b"data: " + sse_dumps(ev).encode("utf-8") + b"\r\n\r\n")
            bare = json.dumps(state.fixture("e500-internal.midstream-chunk.json"),
                              separators=(",", ":"))
            self.write_chunk(bare.encode("utf-8") + b"\n")
            self.end_chunked()
            return
        inner = plan.inner if k in ("stall", "truncated") else plan
        objs = Renderer(ctx).render(inner)
        rec["status"] = 200
        self._log(rec, self.path.split("?")[0], ctx.sse)
        if not ctx.stream:
            body = pretty(objs[0]).encode("utf-8")
            ctype = "application/json; charset=UTF-8"
            if k == "stall":
                return self.stall_unary(body, ctype, plan.ms)
            if k == "truncated":
                half = body[: len(body) // 2]
                if plan.short:   # announce the full length, send half, close
                    self.close_connection = True
                    self.send_response(200, "OK")
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(half)
                    self.wfile.flush()
                    return
                return self.send_bytes(200, half, ctype)
            return self.send_bytes(200, body, ctype)
        # streaming
        if ctx.sse:
            payloads = [b"data: " + sse_dumps(o).encode("utf-8") + b"\r\n\r\n" for o in objs]
            ctype = "text/event-stream"
        else:   # without alt=sse the API streams one JSON array
            text = pretty(objs).encode("utf-8")
            payloads = [text]
            ctype = "application/json; charset=UTF-8"
        self.start_chunked(ctype)
        if k == "stall":   # the first event (or half of the only one), then hang
            first = payloads[0]
            self.write_chunk(first if len(payloads) > 1 else first[: max(1, len(first) // 2)])
            self.pause(plan.ms / 1000.0)
            self.close_connection = True
            return
        if k == "truncated":
            data = b"".join(payloads)
            self.write_chunk(data[: len(data) // 2])
            if plan.short:
                self.close_connection = True
                return
            self.end_chunked()
            return
        gap = ctx.p_int("gap", 0) / 1000.0
        fragment = ctx.flag("fragment")
        for i, data in enumerate(payloads):
            if i and gap and self.pause(gap):
                return
            if fragment:   # split every event over several writes (and TCP segments)
                step = max(1, min(7, len(data) // 3))
                for j in range(0, len(data), step):
                    self.write_chunk(data[j:j + step])
                    time.sleep(0.002)
            else:
                self.write_chunk(data)
        self.end_chunked()

    def stall_unary(self, body, ctype, ms):
        self.close_connection = True
        self.send_response(200, "OK")
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[: len(body) // 2])
        self.wfile.flush()
        self.pause(ms / 1000.0)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, addr, state):
        self.state = state
        super().__init__(addr, Handler)


class Server6(Server):
    address_family = socket.AF_INET6


# ---------------------------------------------------------------------------
# main

HELP_EPILOG = """\
scenarios (select with [[mock:NAME k=v ...]] in the first user text, the
x-mock-scenario header, or POST /__mock/scenario; default: text):
""" + "\n".join("  %-22s %s" % (n, SCENARIOS[n][2]) for n in SCENARIOS) + """

parameters accepted by every scenario: delay=ms usage=every|last gap=ms
fragment=1 chunks=N sigpart=empty|last noid=1 nosig=1 thoughts=N tooluse=N
extra=0 textsig=1 gzip=0.  See tests/mock/README.md.

Stop with SIGTERM or SIGINT (exit status 0).
"""


def loopback_host(host):
    if host == "localhost":
        return "127.0.0.1"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return None
    return host if ip.is_loopback else None


def write_port_file(path, port):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as fh:
        fh.write("%d\n" % port)
    os.replace(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="gemini_mock.py",
        description="Mock Gemini REST server (v1beta generateContent and "
                    "streamGenerateContent?alt=sse) for offline tests.",
        epilog=HELP_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1",
                    help="loopback address to bind (127.0.0.0/8, ::1 or localhost); "
                         "anything else is refused (default 127.0.0.1)")
    ap.add_argument("--port", type=int, default=0, help="port; 0 picks a free one (default 0)")
    ap.add_argument("--port-file", metavar="FILE",
                    help="write the chosen port to FILE once listening (atomically)")
    ap.add_argument("--model", action="append", default=[], metavar="NAME",
                    help="also serve this model id (repeatable); known: " + ", ".join(KNOWN_MODELS))
    ap.add_argument("--seed", default="0",
                    help="seed for ids, response ids and thought signatures (default 0)")
    ap.add_argument("--fixtures", default=DEFAULT_FIXTURES, metavar="DIR",
                    help="directory of the fixture files (default: tests/data/gemini-fixtures)")
    ap.add_argument("--scenario", metavar="'NAME k=v ...'",
                    help="initial default scenario (as POST /__mock/scenario)")
    ap.add_argument("--quiet", action="store_true", help="no per-request log lines")
    ap.add_argument("--demo", action="store_true",
                    help="the offline demo model for `make demo`: the default scenario is "
                         "`demo` (unless --scenario says otherwise) and any model id is served")
    args = ap.parse_args(argv)

    host = loopback_host(args.host)
    if host is None:
        sys.stderr.write("gemini-mock: refusing to bind %r: only loopback addresses are allowed\n"
                         % args.host)
        return 2
    try:
        state = State(args.seed, args.fixtures, KNOWN_MODELS + args.model)
    except (OSError, ValueError) as exc:
        sys.stderr.write("gemini-mock: cannot load fixtures: %s\n" % exc)
        return 2
    state.quiet = args.quiet
    if args.demo:
        state.any_model = True
        state.default_scenario = ("demo", {})
    if args.scenario:
        try:
            name, params = parse_scenario_spec(args.scenario)
            check_scenario(name, params)
        except MockError as exc:
            sys.stderr.write("gemini-mock: --scenario: %s\n" % exc)
            return 2
        state.default_scenario = (name, params)

    cls = Server6 if ":" in host else Server
    try:
        server = cls((host, args.port), state)
    except OSError as exc:
        sys.stderr.write("gemini-mock: cannot bind %s:%d: %s\n" % (host, args.port, exc))
        return 1
    port = server.server_address[1]

    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              daemon=True)
    thread.start()
    if args.port_file:
        write_port_file(args.port_file, port)
    sys.stderr.write("gemini-mock: listening on %s port %d (pid %d)%s\n" % (
        host, port, os.getpid(), " - offline demo model" if args.demo else ""))
    sys.stderr.flush()
    while not stop.wait(0.2):
        pass
    state.stop.set()     # wake stalled and slow handlers
    server.shutdown()
    server.server_close()
    sys.stderr.write("gemini-mock: stopped\n")
    sys.stderr.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
