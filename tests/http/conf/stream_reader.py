#!/usr/bin/env python3
"""stream_reader.py - NDJSON answers for t_stream.sh, read as they arrive.

    stream_reader.py lines --out FILE [--head CURL_HEADERS | --cgi] [--result FILE]
        Reads a response body from stdin (`curl -N ... -o -`, or a CGI
        program's whole output with --cgi) and timestamps each line the
        moment it arrives. On EOF writes FILE:
            {"status": N, "headers": {lower-case name: value},
             "lines": [{"ms": <ms since the reader started>, "raw": "...",
                        "obj": <the line as JSON, or null>}],
             "end_ms": <ms at EOF>, "tail": "<bytes after the last newline>"}
        --head: curl's -D file (read at EOF); --cgi: the head is the CGI
        header block at the start of stdin (Status: gives the status).
        --result: also write the `result` object of the last line (null if
        the last line is not {"type":"result"}) to that file.

    stream_reader.py hangup --url URL --body FILE --out FILE
        POSTs FILE (Accept: application/x-ndjson) over a socket of its own,
        reads until the first {"type":"delta"} line, then closes the
        socket. FILE gets {"status", "lines": [...], "close_ms": <
        time.monotonic() in ms just before close()>}.

    stream_reader.py same JSON_ANSWER STREAM_RESULT
        Exit 0 when the two answers are equal once normalised (normal() below
        says how and why), else 1 with the first difference on stdout.
"""

import argparse
import json
import os
import socket
import sys
import time
import urllib.parse


def parse_line(raw):
    try:
        return json.loads(raw)
    except ValueError:
        return None


def cmd_lines(a):
    t0 = time.monotonic()
    buf = b""
    lines = []
    head_done = not a.cgi
    head = b""
    while True:
        chunk = os.read(0, 65536)
        ms = (time.monotonic() - t0) * 1000.0
        if not chunk:
            break
        if not head_done:
            head += chunk
            for sep in (b"\r\n\r\n", b"\n\n"):
                i = head.find(sep)
                if i >= 0:
                    buf, head = head[i + len(sep):], head[:i]
                    head_done = True
                    break
            if not head_done:
                continue
        else:
            buf += chunk
        *complete, buf = buf.split(b"\n")
        for raw in complete:
            text = raw.decode("utf-8", "replace")
            lines.append({"ms": round(ms, 1), "raw": text, "obj": parse_line(text)})
    end = (time.monotonic() - t0) * 1000.0
    status, headers = None, {}
    if a.cgi:
        text = head.decode("latin-1")
        for ln in text.replace("\r\n", "\n").split("\n"):
            k, _, v = ln.partition(":")
            if k.strip():
                headers[k.strip().lower()] = v.strip()
        st = headers.get("status", "")
        status = int(st.split()[0]) if st[:3].isdigit() else None
    elif a.head:
        try:
            text = open(a.head, encoding="latin-1").read()
        except OSError:
            text = ""
        for ln in text.replace("\r\n", "\n").split("\n"):
            if ln.startswith("HTTP/"):
                parts = ln.split()
                status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
                headers = {}
            elif ":" in ln:
                k, _, v = ln.partition(":")
                headers[k.strip().lower()] = v.strip()
    out = {"status": status, "headers": headers, "lines": lines, "end_ms": round(end, 1),
           "tail": buf.decode("utf-8", "replace")}
    with open(a.out, "w", encoding="utf-8") as fh:
        json.dump(out, fh, ensure_ascii=False)
    if a.result:
        last = lines[-1]["obj"] if lines else None
        res = last.get("result") if isinstance(last, dict) and last.get("type") == "result" else None
        with open(a.result, "w", encoding="utf-8") as fh:
            json.dump(res, fh, ensure_ascii=False)
    return 0


def cmd_hangup(a):
    u = urllib.parse.urlsplit(a.url)
    body = open(a.body, "rb").read()
    s = socket.create_connection((u.hostname, u.port or 80), timeout=20)
    s.sendall(b"POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
              b"Accept: application/x-ndjson\r\nContent-Length: %d\r\n\r\n"
              % (u.path.encode(), u.netloc.encode(), len(body)) + body)
    data = b""
    status = None
    lines = []
    close_ms = None
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            if status is None:
                if b"\r\n\r\n" not in data:
                    continue
                head, data = data.split(b"\r\n\r\n", 1)
                status = int(head.split(b" ", 2)[1])
            # the body is chunked: its size lines are not JSON, its lines are
            *complete, data = data.split(b"\n")
            found = False
            for raw in complete:
                obj = parse_line(raw.decode("utf-8", "replace").strip())
                if isinstance(obj, dict):
                    lines.append(obj)
                    found = found or obj.get("type") == "delta"
            if found:
                break
    finally:
        close_ms = time.monotonic() * 1000.0
        s.close()
    with open(a.out, "w", encoding="utf-8") as fh:
        json.dump({"status": status, "lines": lines, "close_ms": close_ms}, fh)
    return 0


def normal(answer):
    """An answer with what legitimately differs between the two modes
    made equal:

    - serverCalls[].ms is the wall time the action took: it differs from
      run to run in either mode. Set to 0 (after checking it is an int >= 0).
    - A signed text part. The mock, like Gemini, binds a signature to the
      part it sends it on; in a stream it sends the text as unsigned deltas
      and the signature on an empty-text part of its own at the end (as
      Gemini does), and the responder keeps that part as it came (joining
      it to the text would corrupt the signature). So in every model turn
      of `history`, a part {"text": "", "thoughtSignature": S, ...} is
      folded into the text part before it, and every text part's signature
      becomes "<text-signature>" (the two modes' values differ because the
      parts signed differ). Function-call signatures are compared as they
      are: a call comes whole, signed the same way in both modes.
    - signatures (the server's, of history turns): a turn whose text parts
      differ as above is signed differently; each entry is compared as
      null or not, and must be as long as history.
    - conversation: a request without one gets a new key (agent/convkey.h),
      random in each mode. Compared as "a c1. key" or not.
    Everything else must be equal: type, message, calls and their ids,
    history, usage (geminiCalls included), serverCalls, model, flags.
    """
    a = json.loads(json.dumps(answer))
    if "conversation" in a:
        c = a["conversation"]
        a["conversation"] = "<key>" if isinstance(c, str) and c.startswith("c1.") else "bad: %r" % (c,)
    for sc in a.get("serverCalls") or []:
        if isinstance(sc, dict) and "ms" in sc:
            if not (isinstance(sc["ms"], int) and sc["ms"] >= 0):
                sc["ms"] = "bad: %r" % (sc["ms"],)
            else:
                sc["ms"] = 0
    if isinstance(a.get("signatures"), list):
        a["signatures"] = [None if s is None else
                           ("<signature>" if isinstance(s, str) else "bad: %r" % (s,))
                           for s in a["signatures"]]
        if len(a["signatures"]) != len(a.get("history") or []):
            a["signatures"] = "bad: not as long as history"
    for turn in a.get("history") or []:
        if not isinstance(turn, dict) or turn.get("role") != "model":
            continue
        parts = []
        for p in turn.get("parts") or []:
            if (isinstance(p, dict) and p.get("text") == "" and "thoughtSignature" in p
                    and parts and "text" in parts[-1] and "thoughtSignature" not in parts[-1]):
                for k, v in p.items():
                    if k != "text":
                        parts[-1].setdefault(k, v)
                continue
            parts.append(p)
        for p in parts:
            if isinstance(p, dict) and "text" in p and "thoughtSignature" in p:
                p["thoughtSignature"] = "<text-signature>"
        turn["parts"] = parts
    return a


def first_diff(x, y, path="$"):
    if type(x) is not type(y):
        return "%s: %r vs %r" % (path, x, y)
    if isinstance(x, dict):
        for k in list(x) + [k for k in y if k not in x]:
            if k not in x or k not in y:
                return "%s.%s: only in the %s answer" % (path, k, "JSON" if k in x else "streamed")
            d = first_diff(x[k], y[k], "%s.%s" % (path, k))
            if d:
                return d
        return None
    if isinstance(x, list):
        if len(x) != len(y):
            return "%s: %d items vs %d" % (path, len(x), len(y))
        for i, (p, q) in enumerate(zip(x, y)):
            d = first_diff(p, q, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    return None if x == y else "%s: %r vs %r" % (path, x, y)


def cmd_same(a):
    x = json.load(open(a.json, encoding="utf-8"))
    y = json.load(open(a.stream, encoding="utf-8"))
    if y is None:
        print("the stream has no result")
        return 1
    d = first_diff(normal(x), normal(y))
    if d:
        print(d[:600])
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("lines")
    p.add_argument("--out", required=True)
    p.add_argument("--head")
    p.add_argument("--cgi", action="store_true")
    p.add_argument("--result")
    p = sub.add_parser("hangup")
    p.add_argument("--url", required=True)
    p.add_argument("--body", required=True)
    p.add_argument("--out", required=True)
    p = sub.add_parser("same")
    p.add_argument("json")
    p.add_argument("stream")
    a = ap.parse_args()
    return {"lines": cmd_lines, "hangup": cmd_hangup, "same": cmd_same}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
