#!/usr/bin/env python3
"""search_mock.py - a fake SearXNG search endpoint (and a plain document
server) on a loopback address, for the web_search and references plugins'
tests. Python 3 standard library only.

    search_mock.py --port 0 --port-file FILE [--host 127.0.0.1]

Routes (GET):
  /search?q=...&format=json...  SearXNG's JSON shape: 25 results for q
                                (titles "Result N for <q>", some padded
                                with whitespace, one with a 1000-character
                                content, and three whose url is not http(s):
                                javascript:, ftp:, none)
  /html/search                  200 text/html (not JSON)
  /fail/search                  500
  /slow/search                  answers after 3 s
  /shape/search                 JSON without a results list
  /doc/NAME                     text/plain "Document NAME ..." (references)
  /big                          200 KiB of text
  /redirect                     302 to file:///etc/passwd
  /to?url=URL                   302 to URL (the outbound policy's tests)
  /__last                       {"path", "params", "headers"} of the last
                                request to any other route
  /__count                      {"PATH": requests} per path (query cut off)
  /__health                     {"ok": true}
SIGTERM or SIGINT stop it with status 0.
"""
import argparse
import json
import os
import signal
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
LAST = {}
COUNT = {}


def results_for(q):
    out = []
    for i in range(1, 26):
        r = {"title": "Result %d for %s" % (i, q),
             "url": "https://example.org/r%d?q=%s" % (i, urllib.parse.quote(q)),
             "content": "Snippet %d about %s." % (i, q),
             "engine": "mock", "score": 1.0 / i}
        if i == 1:
            r["title"] = "  \n Result 1 \t for   %s \n" % q
        if i == 2:
            r["url"] = "javascript:alert(1)"
        if i == 3:
            r["url"] = "ftp://files.example.org/x"
        if i == 4:
            del r["url"]
        if i == 5:
            r["content"] = "\u00e9" * 1000
        out.append(r)
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send(self, status, body, ctype="application/json", extra=None):
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        if isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        path = u.path
        if path == "/__health":
            return self.send(200, {"ok": True})
        if path == "/__last":
            with LOCK:
                return self.send(200, LAST or {})
        if path == "/__count":
            with LOCK:
                return self.send(200, COUNT)
        params = dict(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
        with LOCK:
            LAST.clear()
            LAST.update({"path": path, "params": params,
                         "headers": {k.lower(): v for k, v in self.headers.items()}})
            COUNT[path] = COUNT.get(path, 0) + 1
        if path == "/search":
            return self.send(200, {"query": params.get("q", ""),
                                   "number_of_results": 25,
                                   "results": results_for(params.get("q", "")),
                                   "suggestions": [], "infoboxes": []})
        if path == "/html/search":
            return self.send(200, "<html><body>no json here</body></html>", "text/html")
        if path == "/fail/search":
            return self.send(500, {"error": "boom"})
        if path == "/slow/search":
            time.sleep(3)
            return self.send(200, {"results": []})
        if path == "/shape/search":
            return self.send(200, {"answers": ["42"]})
        if path.startswith("/doc/"):
            name = path[5:]
            return self.send(200, "Document %s: the mock's text for %s.\n" % (name, name),
                             "text/plain; charset=utf-8")
        if path == "/big":
            return self.send(200, "x" * (200 * 1024), "text/plain")
        if path == "/redirect":
            return self.send(302, "", "text/plain", {"Location": "file:///etc/passwd"})
        if path == "/to":
            to = urllib.parse.parse_qs(u.query).get("url", [""])[0]
            return self.send(302, "", "text/plain", {"Location": to})
        return self.send(404, {"error": "no such route"})


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # a client that stops reading (a size cap) is no error here
        if isinstance(sys.exc_info()[1], (ConnectionError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    a = ap.parse_args()
    if a.host not in ("127.0.0.1", "localhost", "::1") and not a.host.startswith("127."):
        print("search_mock: loopback addresses only", file=sys.stderr)
        return 2
    if ":" in a.host:
        Server.address_family = socket.AF_INET6
    srv = Server((a.host, a.port), Handler)

    def stop(signum, frame):
        threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % srv.server_address[1])
        os.rename(tmp, a.port_file)
    srv.serve_forever(poll_interval=0.1)
    srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
