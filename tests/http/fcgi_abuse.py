#!/usr/bin/env python3
"""A FastCGI client that speaks the protocol badly (t_fastcgi_abuse.sh).

    fcgi_abuse.py --addr HOST:PORT [--hold S] SCENARIO...

For each scenario: open a connection to `gemini-agent serve`, abuse the
protocol as the scenario says, and see what the responder does with that
connection (answers, closes, or holds it) within a bound; while an abusive
connection is still open, a well-formed request on a new connection must be
answered 200 promptly; afterwards no request thread may stay busy (GET
/_jay/status, which the stack allows to 127.0.0.1, counts them). Prints
TAP-like lines (ok - / not ok - ...) and a comment per scenario; exit 0.
Python 3 standard library only.
"""
import argparse
import json
import socket
import struct
import sys
import time

V1 = 1
BEGIN, ABORT, END, PARAMS, STDIN, STDOUT, STDERR, DATA = 1, 2, 3, 4, 5, 6, 7, 8
GET_VALUES, GET_VALUES_RESULT, UNKNOWN_TYPE = 9, 10, 11
RESPONDER, AUTHORIZER, FILTER = 1, 2, 3
KEEP_CONN = 1

SEARCH = "/_jay/actions/shop.searchProducts"
SEND = "/_jay/actions/geminiAgent.sendMessage"
GOOD_BODY = b'{"query":"a"}'
PROMPT_MS = 2000  # a well-formed request is answered within this

ADDR = ("127.0.0.1", 0)
HOLD = 15.0  # how long the responder may keep a stuck connection


def rec(rtype, content=b"", rid=1, version=V1, pad=0, padbyte=b"\0"):
    """One record; content longer than 65535 is split."""
    out = b""
    chunks = [content[i:i + 65535] for i in range(0, len(content), 65535)] or [b""]
    for c in chunks:
        out += struct.pack(">BBHHBB", version, rtype, rid, len(c), pad, 0) + c + padbyte * pad
    return out


def nv_len(n):
    return struct.pack(">B", n) if n < 128 else struct.pack(">I", n | 0x80000000)


def nv(name, value):
    if isinstance(name, str):
        name = name.encode()
    if isinstance(value, str):
        value = value.encode()
    return nv_len(len(name)) + nv_len(len(value)) + name + value


def begin(rid=1, role=RESPONDER, flags=0):
    return rec(BEGIN, struct.pack(">HB5x", role, flags), rid)


def params_for(method="POST", uri=SEARCH, body=GOOD_BODY, extra=()):
    p = [("GATEWAY_INTERFACE", "CGI/1.1"), ("REQUEST_METHOD", method),
         ("REQUEST_URI", uri), ("DOCUMENT_URI", uri.split("?")[0]),
         ("SCRIPT_NAME", uri.split("?")[0]), ("SERVER_PROTOCOL", "HTTP/1.1"),
         ("REMOTE_ADDR", "127.0.0.1")]
    if body:
        p += [("CONTENT_LENGTH", str(len(body))), ("CONTENT_TYPE", "application/json")]
    p += list(extra)
    return b"".join(nv(k, v) for k, v in p)


def good_request(rid=1, method="POST", uri=SEARCH, body=GOOD_BODY, flags=0):
    return (begin(rid, flags=flags) + rec(PARAMS, params_for(method, uri, body), rid) +
            rec(PARAMS, b"", rid) + (rec(STDIN, body, rid) if body else b"") +
            rec(STDIN, b"", rid))


def connect(rcvbuf=0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(HOLD)
    s.connect(ADDR)
    return s


def send(s, data):
    """Send what the responder takes; False once it closed on us."""
    try:
        s.sendall(data)
        return True
    except OSError:
        return False


class Reply:
    """What came back on a connection: records, and how it ended."""

    def __init__(self):
        self.records = []  # (type, id, content)
        self.closed = False  # the responder closed (EOF or reset)
        self.ms = 0

    def stdout(self, rid=1):
        return b"".join(c for t, i, c in self.records if t == STDOUT and i == rid)

    def ended(self, rid=1):
        return any(t == END and i == rid for t, i, c in self.records)

    def status(self, rid=1):
        head = self.stdout(rid).split(b"\r\n\r\n")[0]
        for line in head.split(b"\r\n"):
            k, _, v = line.partition(b":")
            if k.strip().lower() == b"status":
                return v.strip().split(b" ")[0].decode("ascii", "replace")
        return "200" if head else "none"

    def body_json(self, rid=1):
        out = self.stdout(rid)
        i = out.find(b"\r\n\r\n")
        try:
            return json.loads(out[i + 4:].decode("utf-8"))
        except ValueError:
            return None

    def summary(self, rid=1):
        if self.ended(rid):
            return "answered %s" % self.status(rid)
        if self.records:
            return "records %s" % sorted({t for t, _, _ in self.records})
        return "closed" if self.closed else "held"


def read_reply(s, limit, until_end=None, until_type=None):
    """Read records until the responder closes, `until_end` ends, a record
    of `until_type` arrives, or `limit` seconds pass."""
    r, buf, t0 = Reply(), b"", time.monotonic()
    deadline = t0 + limit
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        s.settimeout(left)
        try:
            part = s.recv(65536)
        except socket.timeout:
            break
        except OSError:
            part = b""
        if not part:
            r.closed = True
            break
        buf += part
        while len(buf) >= 8:
            _, t, i, clen, plen, _ = struct.unpack(">BBHHBB", buf[:8])
            if len(buf) < 8 + clen + plen:
                break
            r.records.append((t, i, buf[8:8 + clen]))
            buf = buf[8 + clen + plen:]
        if until_end is not None and r.ended(until_end):
            break
        if until_type is not None and any(t == until_type for t, _, _ in r.records):
            break
    r.ms = int((time.monotonic() - t0) * 1000)
    return r


# --- reporting ----------------------------------------------------------------

FAILED = []


def ok(name):
    print("ok - %s" % name)


def not_ok(name, why):
    FAILED.append(name)
    print("not ok - %s: %s" % (name, why))


def check(name, cond, why):
    if cond:
        ok(name)
    else:
        not_ok(name, why)


def probe(label):
    """A well-formed request on a fresh connection: 200, promptly."""
    t0 = time.monotonic()
    try:
        s = connect()
        send(s, good_request())
        r = read_reply(s, 10, until_end=1)
        s.close()
    except OSError as e:
        not_ok("%s: a well-formed request is answered" % label, "connect: %s" % e)
        return
    ms = int((time.monotonic() - t0) * 1000)
    j = r.body_json()
    good = r.ended() and r.status() == "200" and isinstance(j, dict) and "products" in j
    check("%s: a well-formed request is answered 200" % label, good,
          "got %s; %r" % (r.summary(), r.stdout()[:200]))
    check("%s: ... within %d ms" % (label, PROMPT_MS), ms <= PROMPT_MS, "took %d ms" % ms)


def probe_open(name):
    """The abusive connection is still open: others are served meanwhile."""
    time.sleep(0.3)  # the responder has taken the connection by now
    probe("%s (its connection still open)" % name)


def busy_threads():
    """Busy request threads, this status request included (None: unknown)."""
    try:
        s = connect()
        send(s, good_request(method="GET", uri="/_jay/status", body=b""))
        r = read_reply(s, 5, until_end=1)
        s.close()
        return (r.body_json() or {}).get("workers", {}).get("busy")
    except (OSError, AttributeError):
        return None


def threads_freed(label, within):
    """Every request thread but the status request's is free again."""
    t0 = time.monotonic()
    busy = None
    while time.monotonic() - t0 < within:
        busy = busy_threads()
        if busy == 1:
            break
        time.sleep(0.2)
    print("# %s: threads free after %.1f s" % (label, time.monotonic() - t0))
    check("%s: no request thread stays busy" % label, busy == 1,
          "busy threads: %r after %.1f s" % (busy, time.monotonic() - t0))


# --- the scenarios --------------------------------------------------------------
# Each returns (socket or None, reply): the connection is left to run() to
# probe around and close.

def answered_or_closed(r):
    return r.ended() or r.closed


def sc_stdin_before_params():
    s = connect()
    send(s, begin() + rec(STDIN, GOOD_BODY) + rec(PARAMS, params_for()) + rec(PARAMS) + rec(STDIN))
    return s, read_reply(s, HOLD, until_end=1), answered_or_closed


def sc_params_after_end():
    s = connect()
    send(s, begin() + rec(PARAMS, params_for()) + rec(PARAMS) +
         rec(PARAMS, nv("LATE", "x")) + rec(PARAMS) + rec(STDIN, GOOD_BODY) + rec(STDIN))
    return s, read_reply(s, HOLD, until_end=1), answered_or_closed


def sc_second_begin():
    s = connect()
    send(s, begin() + rec(PARAMS, params_for()) + begin() + rec(PARAMS) +
         rec(STDIN, GOOD_BODY) + rec(STDIN))
    return s, read_reply(s, HOLD, until_end=1), answered_or_closed


def sc_begin_twice_after_stdin():
    s = connect()
    send(s, good_request() + begin() + rec(PARAMS, params_for()) + rec(PARAMS) + rec(STDIN))
    return s, read_reply(s, HOLD, until_end=1), answered_or_closed


def sc_unknown_type():
    s = connect()
    # a management record of an unknown type (id 0), then one in the request
    send(s, rec(42, b"hello", rid=0) + begin() + rec(PARAMS, params_for()) + rec(PARAMS) +
         rec(77, b"x" * 100) + rec(STDIN, GOOD_BODY) + rec(STDIN))
    return s, read_reply(s, HOLD, until_end=1), answered_or_closed


def sc_wrong_version():
    s = connect()
    send(s, rec(BEGIN, struct.pack(">HB5x", RESPONDER, 0), version=2) +
         rec(PARAMS, params_for(), version=2) + rec(PARAMS, version=2) + rec(STDIN, version=2))
    return s, read_reply(s, HOLD, until_end=1), answered_or_closed


def sc_wrong_version_mid():
    s = connect()
    send(s, begin() + rec(PARAMS, params_for()) + rec(PARAMS) +
         rec(STDIN, GOOD_BODY[:5]) + rec(STDIN, GOOD_BODY[5:], version=9) + rec(STDIN))
    return s, read_reply(s, HOLD, until_end=1), answered_or_closed


def sc_huge_name():
    s = connect()
    ok_ = send(s, begin() + rec(PARAMS, nv("N" * (1 << 20), "v") + params_for()) + rec(PARAMS) +
               rec(STDIN, GOOD_BODY) + rec(STDIN))
    return s, read_reply(s, HOLD, until_end=1), lambda r: answered_or_closed(r) or not ok_


def sc_huge_value():
    s = connect()
    ok_ = send(s, begin() + rec(PARAMS, params_for() + nv("HTTP_X_BIG", "v" * (1 << 20))) +
               rec(PARAMS) + rec(STDIN, GOOD_BODY) + rec(STDIN))
    return s, read_reply(s, HOLD, until_end=1), lambda r: answered_or_closed(r) or not ok_


def sc_million_params():
    s = connect()
    tiny = b"".join(nv("P%d" % i, "") for i in range(1000000))
    ok_ = send(s, begin() + rec(PARAMS, params_for() + tiny) + rec(PARAMS) +
               rec(STDIN, GOOD_BODY) + rec(STDIN))
    return s, read_reply(s, HOLD, until_end=1), lambda r: answered_or_closed(r) or not ok_


def sc_lying_param_length():
    # a name that claims 2 GB, then the params end
    s = connect()
    send(s, begin() + rec(PARAMS, nv_len(0x7fffffff) + nv_len(0x7fffffff) + b"abc") +
         rec(PARAMS) + rec(STDIN))
    return s, read_reply(s, HOLD, until_end=1), answered_or_closed


def sc_lying_param_length_open():
    # the same, and the connection stays open: the responder must not wait
    s = connect()
    send(s, begin() + rec(PARAMS, nv_len(0x7fffffff) + nv_len(5) + b"abc"))
    probe_open("lying-param-length-open")
    return s, read_reply(s, HOLD, until_end=1), answered_or_closed


def sc_lying_record_length():
    # a record header that claims 65535 bytes of content, 10 sent, then silence
    s = connect()
    send(s, begin() + struct.pack(">BBHHBB", 1, PARAMS, 1, 65535, 0, 0) + b"x" * 10)
    probe_open("lying-record-length")
    return s, read_reply(s, HOLD, until_end=1), answered_or_closed


def sc_silent():
    # connects and sends nothing
    s = connect()
    probe_open("silent")
    return s, read_reply(s, HOLD), answered_or_closed


def sc_trickled_head():
    # the params a byte every 0.5 s: every read arrives under the read
    # timeout, so only the head's own deadline (10 s in all) ends it
    s = connect()
    head = params_for()
    send(s, begin() + struct.pack(">BBHHBB", 1, PARAMS, 1, len(head), 0, 0))
    probe_open("trickled-head")
    t0, r = time.monotonic(), Reply()
    for b in head:
        if time.monotonic() - t0 > HOLD or not send(s, bytes([b])):
            break
        s.settimeout(0.5)
        try:
            if s.recv(1) == b"":
                break
        except socket.timeout:
            pass
        except OSError:
            break
    r.ms = int((time.monotonic() - t0) * 1000)
    r.closed = r.ms < HOLD * 1000
    print("# trickled-head: the responder closed after %d ms" % r.ms)
    return s, r, lambda r: r.closed


def sc_stdin_never_ends():
    # CONTENT_LENGTH 100, 10 bytes of it, then the connection stays open
    body = b'{"query":"' + b"a" * 88 + b'"}'
    s = connect()
    send(s, begin() + rec(PARAMS, params_for(body=body)) + rec(PARAMS) + rec(STDIN, body[:10]))
    probe_open("stdin-never-ends")
    return s, read_reply(s, HOLD, until_end=1), answered_or_closed


def sc_stdin_trickle():
    # the whole body a byte at a time, one byte every 0.5 s would outlast
    # anything; here: the body complete but the empty STDIN never comes
    s = connect()
    send(s, begin() + rec(PARAMS, params_for()) + rec(PARAMS) + rec(STDIN, GOOD_BODY))
    probe_open("stdin-no-end-record")
    return s, read_reply(s, HOLD, until_end=1), lambda r: r.ended() and r.status() == "200"


def sc_close_mid_header():
    s = connect()
    send(s, begin() + rec(PARAMS, params_for())[:5])
    s.close()
    return None, Reply(), lambda r: True


def sc_close_mid_params():
    s = connect()
    send(s, begin() + rec(PARAMS, params_for())[:40])
    s.close()
    return None, Reply(), lambda r: True


def sc_close_mid_stdin():
    s = connect()
    send(s, begin() + rec(PARAMS, params_for()) + rec(PARAMS) + rec(STDIN, GOOD_BODY)[:12])
    s.close()
    return None, Reply(), lambda r: True


def sc_reset_mid_stdin():
    s = connect()
    send(s, begin() + rec(PARAMS, params_for()) + rec(PARAMS) + rec(STDIN, GOOD_BODY)[:12])
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()  # RST
    return None, Reply(), lambda r: True


def sc_never_reads():
    # a chat whose answer (it carries the 6 MB message back in its
    # history) is far more than the socket buffers hold, on a connection
    # that never reads: the responder's write must time out and free the
    # thread while the connection is still open
    s = connect(rcvbuf=4096)
    body = json.dumps({"message": "hello " + "x" * (6 << 20), "history": []}).encode()
    send(s, good_request(uri=SEND, body=body))
    probe_open("never-reads")
    time.sleep(10)  # the mock's answer takes seconds, then the write's 10 s
    threads_freed("never-reads (its connection still open)", HOLD)
    return s, Reply(), lambda r: True


def sc_abort():
    s = connect()
    body = b'{"query":"' + b"a" * 88 + b'"}'
    send(s, begin() + rec(PARAMS, params_for(body=body)) + rec(PARAMS) +
         rec(STDIN, body[:10]) + rec(ABORT))
    probe_open("abort")
    return s, read_reply(s, HOLD, until_end=1), answered_or_closed


def sc_abort_before_params():
    s = connect()
    send(s, begin() + rec(ABORT) + rec(PARAMS, params_for()) + rec(PARAMS) + rec(STDIN))
    return s, read_reply(s, HOLD, until_end=1), answered_or_closed


def sc_multiplexed():
    # two requests interleaved on one connection: id 1 is served, id 2
    # refused (libfcgi answers FCGI_CANT_MPX_CONN) or dropped
    s = connect()
    p1, p2 = params_for(), params_for()
    send(s, begin(1, flags=KEEP_CONN) + begin(2, flags=KEEP_CONN) + rec(PARAMS, p1, 1) +
         rec(PARAMS, p2, 2) + rec(PARAMS, b"", 1) + rec(PARAMS, b"", 2) +
         rec(STDIN, GOOD_BODY, 2) + rec(STDIN, GOOD_BODY, 1) + rec(STDIN, b"", 2) +
         rec(STDIN, b"", 1))
    return s, read_reply(s, HOLD, until_end=1), lambda r: r.ended(1) and r.status(1) == "200"


def sc_get_values():
    s = connect()
    q = nv("FCGI_MAX_CONNS", "") + nv("FCGI_MAX_REQS", "") + nv("FCGI_MPXS_CONNS", "")
    send(s, rec(GET_VALUES, q, rid=0))
    r = read_reply(s, 1, until_type=GET_VALUES_RESULT)
    got = [c for t, i, c in r.records if t == GET_VALUES_RESULT]
    print("# get-values: %r" % got)
    # then a well-formed request on the same connection is still served
    send(s, good_request())
    r2 = read_reply(s, HOLD, until_end=1)
    r.records += r2.records
    r.closed = r2.closed
    return s, r, lambda r: answered_or_closed(r) and (not got or b"FCGI_MPXS_CONNS" in got[0])


def sc_padding():
    # the request cut into one-byte records with 255 bytes of padding each
    # (nginx pads to 8): must be served normally
    s = connect()
    p = params_for()
    data = begin()
    for i in range(len(p)):
        data += rec(PARAMS, p[i:i + 1], pad=255, padbyte=b"\xff")
    data += rec(PARAMS)
    for i in range(len(GOOD_BODY)):
        data += rec(STDIN, GOOD_BODY[i:i + 1], pad=255, padbyte=b"\xee")
    data += rec(STDIN, pad=3)
    send(s, data)
    return s, read_reply(s, HOLD, until_end=1), lambda r: r.ended() and r.status() == "200"


def sc_padded_head_records():
    # padding after FCGI_BEGIN_REQUEST or the empty PARAMS (nginx pads
    # neither): libfcgi 2.4.2 reads the padding as the next record and the
    # request arrives without its params or body - an error answer, which
    # is all this can get
    s = connect()
    send(s, begin() + rec(PARAMS, params_for()) + rec(PARAMS, pad=7) + rec(STDIN, GOOD_BODY) +
         rec(STDIN))
    r = read_reply(s, HOLD, until_end=1)
    s.close()
    s = connect()
    send(s, rec(BEGIN, struct.pack(">HB5x", RESPONDER, 0), pad=8) + rec(PARAMS, params_for()) +
         rec(PARAMS) + rec(STDIN, GOOD_BODY) + rec(STDIN))
    r2 = read_reply(s, HOLD, until_end=1)
    print("# padded-head-records: the padded end of params %s, the padded begin %s"
          % (r.summary(), r2.summary()))
    good = answered_or_closed(r)
    return s, r2, lambda r2: good and answered_or_closed(r2)


def sc_foreign_zero_records():
    # zero-length DATA and STDERR records (streams a responder is never
    # sent) between the body's records: an error or a close, nothing worse
    s = connect()
    data = begin() + rec(PARAMS, params_for()) + rec(PARAMS)
    for i in range(len(GOOD_BODY)):
        data += rec(STDIN, GOOD_BODY[i:i + 1]) + rec(DATA) + rec(STDERR)
    send(s, data + rec(STDIN))
    return s, read_reply(s, HOLD, until_end=1), answered_or_closed


def sc_zero_stdin_early():
    # an empty STDIN (end of body) before CONTENT_LENGTH bytes: incomplete
    s = connect()
    send(s, begin() + rec(PARAMS, params_for()) + rec(PARAMS) + rec(STDIN, GOOD_BODY[:4]) +
         rec(STDIN) + rec(STDIN, GOOD_BODY[4:]))
    return s, read_reply(s, HOLD, until_end=1), lambda r: r.ended() and r.status() == "400"


def sc_begin_bad_length():
    s = connect()
    send(s, rec(BEGIN, b"\x00\x01") + rec(PARAMS, params_for()) + rec(PARAMS) + rec(STDIN))
    return s, read_reply(s, HOLD, until_end=1), answered_or_closed


def sc_begin_id_zero():
    s = connect()
    send(s, begin(rid=0) + rec(PARAMS, params_for(), 0) + rec(PARAMS, b"", 0) + rec(STDIN, b"", 0))
    return s, read_reply(s, HOLD, until_end=1), answered_or_closed


def sc_role(role):
    def run():
        s = connect()
        send(s, begin(role=role) + rec(PARAMS, params_for()) + rec(PARAMS) +
             rec(STDIN, GOOD_BODY) + rec(STDIN))
        r = read_reply(s, HOLD, until_end=1)
        # refused: never a 200 (an authorizer's 200 grants access)
        return s, r, lambda r: answered_or_closed(r) and r.status() != "200"
    return run


SCENARIOS = {
    "stdin-before-params": sc_stdin_before_params,
    "params-after-end": sc_params_after_end,
    "second-begin": sc_second_begin,
    "begin-after-request": sc_begin_twice_after_stdin,
    "unknown-type": sc_unknown_type,
    "wrong-version": sc_wrong_version,
    "wrong-version-mid": sc_wrong_version_mid,
    "huge-name": sc_huge_name,
    "huge-value": sc_huge_value,
    "million-params": sc_million_params,
    "lying-param-length": sc_lying_param_length,
    "lying-param-length-open": sc_lying_param_length_open,
    "lying-record-length": sc_lying_record_length,
    "silent": sc_silent,
    "trickled-head": sc_trickled_head,
    "stdin-never-ends": sc_stdin_never_ends,
    "stdin-no-end-record": sc_stdin_trickle,
    "close-mid-header": sc_close_mid_header,
    "close-mid-params": sc_close_mid_params,
    "close-mid-stdin": sc_close_mid_stdin,
    "reset-mid-stdin": sc_reset_mid_stdin,
    "never-reads": sc_never_reads,
    "abort": sc_abort,
    "abort-before-params": sc_abort_before_params,
    "multiplexed": sc_multiplexed,
    "get-values": sc_get_values,
    "padding": sc_padding,
    "padded-head-records": sc_padded_head_records,
    "foreign-zero-records": sc_foreign_zero_records,
    "zero-stdin-early": sc_zero_stdin_early,
    "begin-bad-length": sc_begin_bad_length,
    "begin-id-zero": sc_begin_id_zero,
    "role-authorizer": sc_role(AUTHORIZER),
    "role-filter": sc_role(FILTER),
    "role-unknown": sc_role(99),
}

def run(name):
    t0 = time.monotonic()
    s, r, good = SCENARIOS[name]()
    ms = int((time.monotonic() - t0) * 1000)
    print("# %s: %s after %d ms" % (name, r.summary(), ms))
    check("%s: the responder answers or closes within %.0f s" % (name, HOLD), good(r),
          "%s after %d ms; stdout %r" % (r.summary(), ms, r.stdout()[-160:]))
    if s is not None:
        s.close()
    probe(name)
    threads_freed(name, 5)


def main():
    global ADDR, HOLD
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", required=True)
    ap.add_argument("--hold", type=float, default=HOLD)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("scenario", nargs="*")
    a = ap.parse_args()
    if a.list:
        print("\n".join(SCENARIOS))
        return 0
    host, _, port = a.addr.rpartition(":")
    ADDR, HOLD = (host, int(port)), a.hold
    for name in a.scenario or list(SCENARIOS):
        if name not in SCENARIOS:
            not_ok(name, "no such scenario")
            continue
        try:
            run(name)
        except Exception as e:  # a client-side surprise is a failure, not a crash
            not_ok(name, "%s: %s" % (type(e).__name__, e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
