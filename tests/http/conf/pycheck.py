#!/usr/bin/env python3
"""pycheck.py - many JSON checks in one Python start, for lib.sh's assert_py
and make_json.

    pycheck.py check --group G --checks FILE [common options]
    pycheck.py make --expr EXPR --out FILE [common options]

Common options: --body FILE --headers FILE --status N (the last response),
--mock URL (the mock Gemini server, for `reqs`), --saved DIR (bodies kept by
save_res, as S[name]).

check: FILE holds one check per line (blank lines and lines starting with
'#' are skipped; a line ending in a backslash continues on the next):

    EXPR                    ok when EXPR is true
    EXPR ==> WANT           ok when EXPR == WANT (both Python); shows what it got
    LABEL :: EXPR [==> WANT]  the same, reported under LABEL

Each check prints `ok - G: LABEL` or `not ok - G: LABEL: why` (the label is
the expression unless given). Names bound in expressions:

    r        the last response body as JSON (None if it is not JSON)
    body     the last response body as text
    status   the last response's HTTP status (int)
    hdr(N)   the last response's header N (None if absent)
    reqs     the requests the mock recorded since its last reset (list);
             each request's page state turn is taken out of body.contents
             into r['page_turn'] (at r['page_index']), and its JSON is
             r['page_state'] (None when there is none)
    S        saved response bodies by name (JSON)
    E        the environment (os.environ)
    json, re
    fresp(req)   the functionResponse objects of the last content of req's body
    fcalls(turn) the functionCall objects of a content (turn)
    sigs(turns)  the thoughtSignature values of the parts of a list of contents
    has(d, k)    k is a key of the dict d

make: evaluates EXPR with the same names and writes it to FILE as JSON.
"""

import argparse
import json
import os
import re
import sys


def load_json(path):
    try:
        with open(path, "rb") as fh:
            return json.loads(fh.read().decode("utf-8"))
    except (OSError, ValueError):
        return None


class Saved(dict):
    def __init__(self, folder):
        super().__init__()
        self.folder = folder

    def __missing__(self, name):
        v = load_json(os.path.join(self.folder or ".", name + ".json"))
        if v is None:
            raise KeyError("no saved body %r" % name)
        self[name] = v
        return v


class Lazy:
    """The mock's records, fetched on first use."""

    def __init__(self, url):
        self.url = url
        self.value = None

    def get(self):
        if self.value is None:
            if not self.url:
                raise RuntimeError("no mock running")
            import urllib.request  # only here: it takes a third of the start-up
            with urllib.request.urlopen(self.url + "/__mock/requests", timeout=10) as resp:
                self.value = [split_page_turn(r) for r in json.loads(resp.read().decode("utf-8"))]
        return self.value


PAGE_TURN_RE = re.compile(r"\A[^\n]*\n<page-state>\n(.*)\n</page-state>\Z", re.S)


def split_page_turn(rec):
    """The responder sends the page state as a turn of its own (a user turn
    of one text part: a line, then the JSON between <page-state> markers),
    last when the request starts; the turns of its server-only steps follow
    it. Checks about the conversation read body.contents without it; the
    turn is rec['page_turn'], at rec['page_index'], and its JSON
    rec['page_state']."""
    rec["page_turn"] = rec["page_state"] = rec["page_index"] = None
    contents = (rec.get("body") or {}).get("contents") if isinstance(rec.get("body"), dict) else None
    for i, turn in enumerate(contents or []):
        parts = turn.get("parts") if isinstance(turn, dict) else None
        if turn.get("role") == "user" and isinstance(parts, list) and len(parts) == 1 and \
                isinstance(parts[0], dict) and isinstance(parts[0].get("text"), str):
            m = PAGE_TURN_RE.match(parts[0]["text"])
            if m:
                rec["page_turn"], rec["page_index"] = turn, i
                rec["page_state"] = json.loads(m.group(1))
                rec["body"]["contents"] = contents[:i] + contents[i + 1:]
                break
    return rec


def headers_of(path):
    out = {}
    try:
        text = open(path, "rb").read().decode("latin-1")
    except OSError:
        return out
    for line in text.split("\n"):
        line = line.rstrip("\r")
        if line.startswith("HTTP/"):
            out = {}
            continue
        if ":" in line:
            k, _, v = line.partition(":")
            out[k.strip().lower()] = v.strip()
    return out


def fresp(req):
    contents = (req.get("body") or {}).get("contents") or []
    if not contents:
        return []
    return [p["functionResponse"] for p in contents[-1].get("parts") or []
            if isinstance(p, dict) and "functionResponse" in p]


def fcalls(turn):
    return [p["functionCall"] for p in (turn or {}).get("parts") or []
            if isinstance(p, dict) and "functionCall" in p]


def sigs(turns):
    return [p["thoughtSignature"] for t in turns or [] for p in t.get("parts") or []
            if isinstance(p, dict) and "thoughtSignature" in p]


def has(d, k):
    return isinstance(d, dict) and k in d


def namespace(args):
    body_text = ""
    if args.body:
        try:
            body_text = open(args.body, "rb").read().decode("utf-8", "replace")
        except OSError:
            pass
    hdrs = headers_of(args.headers) if args.headers else {}
    lazy = Lazy(args.mock)
    ns = {
        "r": load_json(args.body) if args.body else None,
        "body": body_text,
        "status": int(args.status) if (args.status or "").isdigit() else 0,
        "hdr": lambda n: hdrs.get(n.lower()),
        "S": Saved(args.saved),
        "E": os.environ,
        "json": json,
        "re": re,
        "fresp": fresp,
        "fcalls": fcalls,
        "sigs": sigs,
        "has": has,
    }
    return ns, lazy


def evaluate(expr, ns, lazy):
    if re.search(r"\breqs\b", expr):
        ns["reqs"] = lazy.get()
    return eval(expr, ns)


def show(v, n=300):
    try:
        s = json.dumps(v, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        s = repr(v)
    return s if len(s) <= n else s[:n] + "..."


def read_checks(path):
    lines, cur = [], ""
    with open(path, encoding="utf-8") as fh:
        for raw in fh:
            line = raw.rstrip("\n")
            if line.endswith("\\"):
                cur += line[:-1].strip() + " "
                continue
            line = (cur + line.strip()).strip()
            cur = ""
            if line and not line.startswith("#"):
                lines.append(line)
    if cur.strip():
        lines.append(cur.strip())
    return lines


def do_check(args):
    ns, lazy = namespace(args)
    verbose = bool(os.environ.get("T_VERBOSE"))
    excerpt = ns["body"].replace("\n", " ")
    if not verbose and len(excerpt) > 300:
        excerpt = excerpt[:300] + "..."
    for line in read_checks(args.checks):
        label, _, rest = line.rpartition(" :: ")
        if not label:
            label, rest = line, line
        expr, sep, want = rest.partition(" ==> ")
        name = "%s: %s" % (args.group, label)
        try:
            got = evaluate(expr, ns, lazy)
            if sep:
                exp = evaluate(want, ns, lazy)
                good = got == exp
                why = "got %s, want %s" % (show(got), show(exp))
            else:
                good = bool(got)
                why = "false (%s)" % show(got, 120)
        except Exception as exc:  # a check that cannot run has failed
            good, why = False, "%s: %s" % (type(exc).__name__, exc)
        if good:
            print("ok - %s" % name)
        else:
            print("not ok - %s: %s; status %s; body: %s" % (name, why, ns["status"], excerpt or "(empty)"))
    return 0


def do_make(args):
    ns, lazy = namespace(args)
    value = evaluate(args.expr, ns, lazy)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(value, fh, ensure_ascii=False)
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["check", "make"])
    ap.add_argument("--group", default="")
    ap.add_argument("--checks")
    ap.add_argument("--expr")
    ap.add_argument("--out")
    ap.add_argument("--body")
    ap.add_argument("--headers")
    ap.add_argument("--status", default="")
    ap.add_argument("--mock", default="")
    ap.add_argument("--saved")
    args = ap.parse_args()
    return do_check(args) if args.mode == "check" else do_make(args)


if __name__ == "__main__":
    sys.exit(main())
