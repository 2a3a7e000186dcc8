#!/usr/bin/env python3
"""Minimal FastCGI client for the HTTP tests (talks to the responder's socket
directly, bypassing nginx, which normalises or buffers what we want to test).

    fcgi_client.py --socket PATH [--param NAME=VALUE ...] [--body-file FILE]
                   [--split N --delay SECONDS] [--ready-file FILE]
                   [--timeout SECONDS] --headers-out FILE --body-out FILE

Sends one request (role RESPONDER, keep-conn off). The body is sent as
FCGI_STDIN records; with --split N the first N bytes are sent, --ready-file
(if given) is created, the client sleeps --delay seconds, then sends the rest.
The CGI answer is written as an HTTP-like header block ("HTTP/1.1 <status>"
then the CGI headers) to --headers-out and the body to --body-out; the status
is printed on stdout. Exit 0 on a complete answer (FCGI_END_REQUEST seen),
2 on a socket error or timeout, 3 on a protocol error.
"""
import argparse
import os
import socket
import struct
import sys
import time

BEGIN_REQUEST, ABORT_REQUEST, END_REQUEST, PARAMS, STDIN, STDOUT, STDERR = 1, 2, 3, 4, 5, 6, 7
RESPONDER = 1
REQ_ID = 1


def record(rtype, content=b""):
    out = b""
    # Records carry at most 65535 bytes of content.
    chunks = [content[i:i + 65535] for i in range(0, len(content), 65535)] or [b""]
    for c in chunks:
        out += struct.pack(">BBHHBB", 1, rtype, REQ_ID, len(c), 0, 0) + c
    return out


def nv_len(n):
    return struct.pack(">B", n) if n < 128 else struct.pack(">I", n | 0x80000000)


def encode_params(params):
    out = b""
    for k, v in params:
        kb, vb = k.encode(), v.encode()
        out += nv_len(len(kb)) + nv_len(len(vb)) + kb + vb
    return out


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        part = sock.recv(n - len(buf))
        if not part:
            return None
        buf += part
    return buf


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--socket", required=True)
    ap.add_argument("--param", action="append", default=[])
    ap.add_argument("--body-file")
    ap.add_argument("--split", type=int, default=-1)
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--ready-file")
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--headers-out", required=True)
    ap.add_argument("--body-out", required=True)
    a = ap.parse_args()

    params = []
    for p in a.param:
        k, _, v = p.partition("=")
        params.append((k, v))
    body = b""
    if a.body_file:
        with open(a.body_file, "rb") as f:
            body = f.read()

    deadline = time.monotonic() + a.timeout
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(a.timeout)
    try:
        sock.connect(a.socket)
        sock.sendall(record(BEGIN_REQUEST, struct.pack(">HB5x", RESPONDER, 0)))
        sock.sendall(record(PARAMS, encode_params(params)) + record(PARAMS))
        if 0 <= a.split < len(body):
            if a.split > 0:
                sock.sendall(record(STDIN, body[:a.split]))
            if a.ready_file:
                open(a.ready_file, "w").close()
            time.sleep(a.delay)
            rest = body[a.split:]
        else:
            rest = body
        if rest:
            sock.sendall(record(STDIN, rest))
        sock.sendall(record(STDIN))
        if a.ready_file and not os.path.exists(a.ready_file):
            open(a.ready_file, "w").close()

        out, err, ended = b"", b"", False
        while not ended:
            sock.settimeout(max(0.05, deadline - time.monotonic()))
            hdr = recv_exact(sock, 8)
            if hdr is None:
                break
            _, rtype, _, clen, plen, _ = struct.unpack(">BBHHBB", hdr)
            content = recv_exact(sock, clen + plen)
            if content is None:
                break
            content = content[:clen]
            if rtype == STDOUT:
                out += content
            elif rtype == STDERR:
                err += content
            elif rtype == END_REQUEST:
                ended = True
    except (OSError, socket.timeout) as e:
        sys.stderr.write("fcgi_client: %s\n" % e)
        open(a.headers_out, "wb").close()
        open(a.body_out, "wb").close()
        print("000")
        return 2
    finally:
        sock.close()

    if err:
        sys.stderr.write(err.decode("utf-8", "replace"))
    # Split the CGI answer into header block and body.
    sep = out.find(b"\r\n\r\n")
    seplen = 4
    lf = out.find(b"\n\n")
    if sep < 0 or (0 <= lf < sep):
        sep, seplen = lf, 2
    if sep < 0:
        head, rest = out, b""
    else:
        head, rest = out[:sep], out[sep + seplen:]
    lines = [l.rstrip(b"\r") for l in head.split(b"\n") if l.strip()]
    status = "200"
    for l in lines:
        name, _, value = l.partition(b":")
        if name.strip().lower() == b"status":
            status = value.strip().split(b" ")[0].decode("ascii", "replace")
    with open(a.headers_out, "wb") as f:
        f.write(b"HTTP/1.1 " + status.encode() + b"\r\n")
        for l in lines:
            f.write(l + b"\r\n")
        f.write(b"\r\n")
    with open(a.body_out, "wb") as f:
        f.write(rest)
    print(status)
    if not ended:
        sys.stderr.write("fcgi_client: connection closed before FCGI_END_REQUEST\n")
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
