#!/usr/bin/env python3
"""hostile.py - an MCP server that misbehaves on purpose, for the tests
of the mcp plugin against a hostile server: check_mcp_hostile.c
and tests/http/t_mcp_hostile.sh. Python 3, stdlib only.

    hostile.py MODE[,MODE...]          stdio: newline-delimited JSON-RPC
    hostile.py --http PORTFILE         Streamable HTTP on 127.0.0.1, a free
                                       port written to PORTFILE; the modes
                                       are the url's path: /MODE[,MODE...]

Every mode lists two tools, "echo" (answers {"text"} back, read-only)
and "act", unless it is a listing mode that lists something else; "act"
is where a call mode misbehaves. Modes:

  good           nothing wrong
  listing (at load, so the client leaves the server's tools out):
  many-tools     tools/list of 100,000 tools
  huge-list      tools/list of 50 MB (one tool's description)
  endless-list   tools/list answered by one endless line, no newline
  deep-list      tools/list nested 100,000 deep
  slow-init      never answers initialize
  drip-init      answers initialize one byte a second
  stall-init     half of the initialize answer, then nothing
  exit-after-init  exits right after initialize
  not-json       every answer is a line that is not JSON (and it waits)
  not-rpc        every answer is JSON that is not JSON-RPC
  wrong-id       every answer carries another id
  bad-utf8       every answer has invalid UTF-8 in a string
  nul            every answer has NUL (raw, and \\u0000)
                 (deep-list and these four exit after their answer)
  lying listing (the server loads, some tools are left out or loosened):
  dup-names      the same name three times
  bad-names      names Gemini refuses, too long, not strings, built-ins'
  bad-schemas    inputSchema not an object, 100 deep, $ref loops
  cursor-loop    nextCursor always the same
  cursor-endless a new nextCursor on every page, forever
  unasked        a response to a request never made before each answer
  calls (of "act"):
  ghost-tool     "act" is listed, but calling it: "unknown tool"
  huge-result    a 50 MB result
  endless-call   one endless line, no newline
  deep-result    structuredContent nested 40 deep (and "flat text")
  nested-result  structuredContent nested 16 deep, the most passed on
  late-call      answers 10 s late
  drip-call      answers one byte a second
  stall-call     half a line, then nothing
  huge-error     a JSON-RPC error whose message is 1 MB of control chars
  flood          5,000 notifications/tools/list_changed before the answer
  exit-on-call   exits when "act" is called
  asks-client    sends sampling/createMessage and roots/list and waits
  stderr-flood   writes to stderr without end (stdio only)
"""
import json
import os
import sys
import threading
import time

BIG = 50 * 1024 * 1024


def dumps(msg):
    return json.dumps(msg, separators=(",", ":"))


def tools_of(modes):
    """The tools/list result of a first page, or raw bytes."""
    echo = {"name": "echo", "description": "Echoes text back",
            "inputSchema": {"type": "object",
                            "properties": {"text": {"type": "string"}}},
            "annotations": {"readOnlyHint": True}}
    act = {"name": "act", "description": "Acts",
           "inputSchema": {"type": "object"},
           "annotations": {"readOnlyHint": True}}  # no approval asked
    tools = [echo, act]
    if "many-tools" in modes:
        tools = [{"name": "t%d" % i} for i in range(100000)]
    if "dup-names" in modes:
        tools += [{"name": "dup", "description": "one"},
                  {"name": "dup", "description": "two"},
                  {"name": "dup", "description": "three"}]
    if "bad-names" in modes:
        tools += [{"name": ""}, {"name": 42}, {"description": "no name"},
                  {"name": "has space/and.dots"}, {"name": "ünï cödé"},
                  {"name": "x" * 300}, {"name": "Bash"}, {"name": "run_bash"},
                  {"name": "action_mcp_good_echo"},
                  {"name": "esc\n\x1b[31mred\x07"}, "not an object", None]
    if "bad-schemas" in modes:
        deep = {"type": "object"}
        for _ in range(100):
            deep = {"type": "object", "properties": {"a": deep}}
        mid = {"type": "object"}
        for _ in range(20):  # 20 schema levels: 40 JSON levels
            mid = {"type": "object", "properties": {"a": mid}}
        tools += [{"name": "schema-string", "inputSchema": "object"},
                  {"name": "schema-array", "inputSchema": [1, 2]},
                  {"name": "schema-null", "inputSchema": None},
                  {"name": "schema-deep", "inputSchema": deep},
                  {"name": "schema-mid", "inputSchema": mid},
                  {"name": "schema-ref", "inputSchema": {"$ref": "#"}},
                  {"name": "schema-refs", "inputSchema": {
                      "type": "object", "$defs": {"a": {"$ref": "#/$defs/b"},
                                                  "b": {"$ref": "#/$defs/a"}},
                      "properties": {"x": {"$ref": "#/$defs/a"}}}},
                  {"name": "schema-array-type", "inputSchema": {
                      "type": "array"}}]
    return tools


class Server:
    """One connection's state: its modes and a way to write."""

    def __init__(self, modes, write, stdio):
        self.modes = modes
        self.write = write  # bytes -> None
        self.stdio = stdio
        self.pages = 0

    def die(self):
        """Exit (stdio); over HTTP the connection ends unanswered."""
        if self.stdio:
            os._exit(0)
        raise ConnectionResetError("dies")

    def send(self, msg):
        self.write((dumps(msg) + "\n").encode())

    def answer(self, mid, result):
        return {"jsonrpc": "2.0", "id": mid, "result": result}

    def bad_answer(self, mid, result):
        """The answer as the malformed modes spoil it: bytes, or None
        when the mode spoils nothing."""
        m = self.modes
        if "not-json" in m:
            return b"this is not JSON, id %d\n" % mid
        if "not-rpc" in m:
            return b'[1,2,3]\n{"hello":"world"}\n"str"\n{"jsonrpc":"2.0","id":%d}\n' % mid
        if "wrong-id" in m:
            return (dumps({"jsonrpc": "2.0", "id": mid + 1000, "result": result}) +
                    "\n" + dumps({"jsonrpc": "2.0", "id": str(mid),
                                  "result": result}) + "\n").encode()
        if "bad-utf8" in m:
            return b'{"jsonrpc":"2.0","id":%d,"result":{"x":"\xff\xfe\xc0\xaf"}}\n' % mid
        if "nul" in m:
            return (b'{"jsonrpc":"2.0","id":%d,"result":{"x":"a\x00b"}}\n'
                    b'{"jsonrpc":"2.0","id":%d,"result":{"x":"a\\u0000b"}}\n'
                    % (mid, mid))
        return None

    def reply(self, mid, result):
        bad = self.bad_answer(mid, result)
        if "unasked" in self.modes:
            self.send(self.answer(mid + 999, {"surprise": True}))
        if bad is not None:
            self.write(bad)
            if "not-json" not in self.modes:
                self.die()  # garbage, then gone; not-json goes on
        else:
            self.send(self.answer(mid, result))

    def endless(self, head=b'{"jsonrpc":"2.0","id":1,"result":{"x":"'):
        self.write(head)
        chunk = b"x" * 65536
        while True:
            self.write(chunk)

    def drip(self, data):
        for i in range(len(data)):
            self.write(data[i:i + 1])
            time.sleep(1)

    def initialize(self, mid):
        m = self.modes
        result = {"protocolVersion": "2025-06-18",
                  "capabilities": {"tools": {"listChanged": True}},
                  "serverInfo": {"name": "hostile", "version": "1"}}
        if "slow-init" in m:  # till its input ends (stall-init: not even)
            if self.stdio:
                sys.stdin.read()
                os._exit(0)
            time.sleep(3600)
        text = (dumps(self.answer(mid, result)) + "\n").encode()
        if "drip-init" in m:
            self.drip(text)
        if "stall-init" in m:
            self.write(text[:len(text) // 2])
            time.sleep(3600)
        self.reply(mid, result)

    def tools_list(self, mid, params):
        m = self.modes
        self.pages += 1
        if "huge-list" in m:  # bytes, not json.dumps: no time lost here
            self.write(b'{"jsonrpc":"2.0","id":%d,"result":{"tools":[{"name":'
                       b'"huge","description":"' % mid + b"d" * BIG +
                       b'"}]}}\n')
            return
        if "endless-list" in m:
            self.endless(b'{"jsonrpc":"2.0","id":%d,"result":{"tools":[' % mid)
        if "deep-list" in m:
            n = 100000
            self.write(b'{"jsonrpc":"2.0","id":%d,"result":{"tools":' % mid +
                       b"[" * n + b"]" * n + b"}}\n")
            self.die()
        result = {"tools": tools_of(m)}
        if "cursor-loop" in m:
            result["nextCursor"] = "same"
        if "cursor-endless" in m:
            result["nextCursor"] = "page-%d" % self.pages
        self.reply(mid, result)

    def call(self, mid, params):
        m = self.modes
        name = params.get("name")
        args = params.get("arguments") or {}
        if name == "echo":
            self.reply(mid, {"content": [{"type": "text",
                                          "text": "echo: %s" % args.get("text")}]})
            return
        if name != "act" or "ghost-tool" in m:
            self.send({"jsonrpc": "2.0", "id": mid, "error": {
                "code": -32602, "message": "Unknown tool: %s" % name}})
            return
        if "huge-result" in m:
            self.write(b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":'
                       b'"text","text":"' % mid + b"r" * BIG + b'"}]}}\n')
            return
        if "endless-call" in m:
            self.endless(b'{"jsonrpc":"2.0","id":%d,"result":{"content":"' % mid)
        if "deep-result" in m or "nested-result" in m:
            deep = {"leaf": True}
            for _ in range(40 if "deep-result" in m else 15):
                deep = {"d": deep}
            self.send(self.answer(mid, {"content": [{"type": "text",
                                                     "text": "flat text"}],
                                        "structuredContent": deep}))
            return
        if "late-call" in m:
            time.sleep(10)
        if "drip-call" in m:
            self.drip((dumps(self.answer(mid, {"content": []})) + "\n").encode())
            return
        if "stall-call" in m:
            self.write(b'{"jsonrpc":"2.0","id":%d,"res' % mid)
            time.sleep(3600)
        if "huge-error" in m:
            msg = "".join(chr(c) for c in range(1, 32)) + "\x1b[31m" + "e" * (1 << 20)
            self.send({"jsonrpc": "2.0", "id": mid,
                       "error": {"code": -32000, "message": msg}})
            return
        if "flood" in m:
            note = (dumps({"jsonrpc": "2.0",
                           "method": "notifications/tools/list_changed"}) +
                    "\n").encode()
            self.write(note * 5000)
        if "exit-on-call" in m:
            self.die()
        if "asks-client" in m:
            self.send({"jsonrpc": "2.0", "id": "s-1",
                       "method": "sampling/createMessage",
                       "params": {"messages": [], "maxTokens": 10}})
            self.send({"jsonrpc": "2.0", "id": "s-2", "method": "roots/list"})
            if not self.stdio:
                time.sleep(3600)  # the answers would need a POST: none comes
            got = [json.loads(sys.stdin.readline()) for _ in range(2)]
            codes = [g.get("error", {}).get("code") for g in got]
            self.reply(mid, {"content": [{"type": "text",
                                          "text": "client said %s" % codes}]})
            return
        self.reply(mid, {"content": [{"type": "text", "text": "acted"}]})

    def handle(self, msg):
        """One message from the client; False to stop."""
        method, mid = msg.get("method"), msg.get("id")
        params = msg.get("params") or {}
        if method == "initialize":
            self.initialize(mid)
        elif method == "notifications/initialized":
            if "exit-after-init" in self.modes:
                self.die()
        elif method == "tools/list":
            self.tools_list(mid, params)
        elif method == "tools/call":
            self.call(mid, params)
        elif mid is not None and method is not None:
            self.send({"jsonrpc": "2.0", "id": mid, "error": {
                "code": -32601, "message": "no " + str(method)}})
        return True


def stderr_flood():
    line = b"hostile: a line of stderr that never ends \x1b[31m\xff\n" * 64
    try:
        while True:
            os.write(2, line)
    except OSError:
        pass


def run_stdio(modes):
    out = sys.stdout.buffer

    def write(b):
        out.write(b)
        out.flush()
    if "stderr-flood" in modes:
        threading.Thread(target=stderr_flood, daemon=True).start()
    srv = Server(modes, write, True)
    try:
        for line in sys.stdin:
            srv.handle(json.loads(line))
    except (BrokenPipeError, ConnectionResetError):
        pass


def run_http(portfile):
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # the body ends when we close

        def log_message(self, *args):
            pass

        def do_DELETE(self):
            self.send_response(200)
            self.end_headers()

        def do_POST(self):
            modes = self.path.strip("/").split(",")
            n = int(self.headers.get("Content-Length") or 0)
            msg = json.loads(self.rfile.read(n))
            if "exit-after-init" in modes and msg.get("method") != "initialize" \
                    and msg.get("id") is not None:
                self.send_response(404)  # the session died with the server
                self.end_headers()
                return
            if msg.get("id") is None:
                self.send_response(202)
                self.end_headers()
                Server(modes, lambda b: None, False).handle(msg)
                return
            sse = "asks-client" in modes
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream" if sse
                             else "application/json")
            self.send_header("Mcp-Session-Id", "s" * 40)
            self.end_headers()

            def write(b):
                if sse:
                    for line in b.decode().splitlines():
                        b2 = ("data: %s\n\n" % line).encode()
                        self.wfile.write(b2)
                else:
                    self.wfile.write(b)
                self.wfile.flush()
            try:
                Server(modes, write, False).handle(msg)
            except (BrokenPipeError, ConnectionResetError):
                pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % httpd.server_address[1])
    os.rename(tmp, portfile)
    httpd.serve_forever()


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        run_http(sys.argv[2])
    elif len(sys.argv) == 2:
        run_stdio(sys.argv[1].split(","))
    else:
        sys.exit("usage: hostile.py MODE[,MODE...] | --http PORTFILE")


main()
