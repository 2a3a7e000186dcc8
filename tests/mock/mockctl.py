#!/usr/bin/env python3
"""mockctl.py - query and control a running gemini_mock.py from shell tests.

    mockctl.py COMMAND [ARGS...] (--port-file FILE | --port N) [--host H] [--compact]

Commands (each prints JSON on stdout):
    health                      GET  /__mock/health
    wait [--timeout S]          wait until FILE holds a port and the mock answers
                                health (default 10 s), then print the health JSON
    requests [--since SEQ]      GET  /__mock/requests: every recorded API request
    count                       the number of recorded API requests (a bare number)
    connections                 GET  /__mock/connections: every TCP connection,
                                when it opened and closed (monotonic ms)
    reset                       POST /__mock/reset: records, counters, signatures
    scenario NAME [k=v ...]     POST /__mock/scenario: set the default scenario
    scenario --clear            back to the built-in default (text)
    scenario                    print the default scenario

The port file may also come from $MOCK_PORT_FILE.  Exit status: 0 success,
1 the mock did not answer or answered an error, 2 usage error.
Standard library only.
"""

import json
import os
import sys
import time
import urllib.error
import urllib.request


def usage(msg=None):
    if msg:
        sys.stderr.write("mockctl: %s\n" % msg)
    sys.stderr.write(__doc__.split("\n\n", 2)[1] + "\n")
    sys.exit(2)


def read_port(port_file):
    try:
        with open(port_file) as fh:
            text = fh.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def call(host, port, method, path, body=None, timeout=10):
    data = None if body is None else json.dumps(body).encode("utf-8")
    netloc = "[%s]:%d" % (host, port) if ":" in host else "%s:%d" % (host, port)
    req = urllib.request.Request("http://%s%s" % (netloc, path), data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        try:
            return exc.code, json.loads(exc.read().decode("utf-8"))
        except ValueError:
            return exc.code, {"error": str(exc)}


def main(argv):
    opts = {"--port-file": os.environ.get("MOCK_PORT_FILE"), "--port": None,
            "--host": "127.0.0.1", "--since": "0", "--timeout": "10"}
    flags = set()
    words = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in opts:
            if i + 1 >= len(argv):
                usage("%s needs a value" % a)
            opts[a] = argv[i + 1]
            i += 2
            continue
        if a in ("--compact", "--clear"):
            flags.add(a)
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            words.append(a)
        i += 1
    if not words:
        usage("no command")
    cmd, args = words[0], words[1:]
    host = opts["--host"]
    indent = None if "--compact" in flags else 2

    def out(obj):
        print(json.dumps(obj, indent=indent, ensure_ascii=False))

    port = None
    if opts["--port"]:
        if not opts["--port"].isdigit():
            usage("--port must be a number")
        port = int(opts["--port"])
    elif not opts["--port-file"]:
        usage("give --port-file FILE (or --port N, or set MOCK_PORT_FILE)")

    if cmd == "wait":
        deadline = time.time() + float(opts["--timeout"])
        last = "no port file"
        while time.time() < deadline:
            p = port or read_port(opts["--port-file"])
            if p:
                try:
                    status, obj = call(host, p, "GET", "/__mock/health", timeout=1)
                    if status == 200:
                        out(obj)
                        return 0
                    last = "health answered %d" % status
                except OSError as exc:
                    last = str(exc)
            time.sleep(0.05)
        sys.stderr.write("mockctl: the mock is not up: %s\n" % last)
        return 1

    if port is None:
        port = read_port(opts["--port-file"])
        if port is None:
            sys.stderr.write("mockctl: no port in %s\n" % opts["--port-file"])
            return 1
    try:
        if cmd == "health":
            status, obj = call(host, port, "GET", "/__mock/health")
        elif cmd == "requests":
            status, obj = call(host, port, "GET", "/__mock/requests?since=%d" % int(opts["--since"]))
        elif cmd == "count":
            status, obj = call(host, port, "GET", "/__mock/requests")
            if status == 200:
                print(len(obj))
                return 0
        elif cmd == "connections":
            status, obj = call(host, port, "GET", "/__mock/connections")
        elif cmd == "reset":
            status, obj = call(host, port, "POST", "/__mock/reset", {})
        elif cmd == "scenario":
            if "--clear" in flags:
                status, obj = call(host, port, "POST", "/__mock/scenario", {"name": None})
            elif not args:
                status, obj = call(host, port, "GET", "/__mock/scenario")
            else:
                body = {"name": args[0]}
                for kv in args[1:]:
                    if "=" not in kv:
                        usage("scenario parameter %r is not key=value" % kv)
                    k, v = kv.split("=", 1)
                    body[k] = v
                status, obj = call(host, port, "POST", "/__mock/scenario", body)
        else:
            usage("unknown command %r" % cmd)
    except OSError as exc:
        sys.stderr.write("mockctl: cannot reach the mock on %s:%d: %s\n" % (host, port, exc))
        return 1
    out(obj)
    return 0 if status == 200 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
