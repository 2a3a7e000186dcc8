#!/usr/bin/env python3
"""mcp_fake.py - a small MCP server over stdio for check_plugin_mcp.c: the
corners server-everything does not show.

- before answering initialize it writes a line that is not JSON, a
  notification, and a ping request, and goes on only if the client
  answered the ping ({"id": "srv-1", "result": {}}); else it exits 3;
- it speaks protocol version 2025-03-26, not the one asked for;
- tools/list comes in two pages (nextCursor);
- tool "loose" has a schema the agent's subset refuses (oneOf) and no
  description; "dotted.name" is read-only; "slow" sleeps 5 s; "mixed"
  answers text, an image and a resource link.
"""
import json
import sys
import time


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def main():
    for line in sys.stdin:
        msg = json.loads(line)
        method, mid = msg.get("method"), msg.get("id")
        if method == "initialize":
            sys.stdout.write("log: a stray line that is not JSON\n")
            send({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "info", "data": "hello"}})
            send({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"})
            reply = json.loads(sys.stdin.readline())
            if reply.get("id") != "srv-1" or reply.get("result") != {}:
                sys.exit(3)
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": "2025-03-26", "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake", "version": "1"}}})
        elif method == "tools/list":
            if (msg.get("params") or {}).get("cursor") == "p2":
                tools = [{"name": "dotted.name", "description": "Dotted",
                          "inputSchema": {"type": "object"},
                          "annotations": {"readOnlyHint": True}}]
                send({"jsonrpc": "2.0", "id": mid, "result": {"tools": tools}})
            else:
                tools = [{"name": "loose", "inputSchema": {
                              "type": "object", "properties": {
                                  "x": {"oneOf": [{"type": "string"},
                                                  {"type": "number"}]}}}},
                         {"name": "slow", "description": "Sleeps",
                          "inputSchema": {"type": "object"}},
                         {"name": "mixed", "description": "Mixed content",
                          "inputSchema": {"type": "object"}}]
                send({"jsonrpc": "2.0", "id": mid,
                      "result": {"tools": tools, "nextCursor": "p2"}})
        elif method == "tools/call":
            name = msg["params"]["name"]
            if name == "slow":
                time.sleep(5)
            content = [{"type": "text", "text": name}]
            if name == "mixed":
                content += [{"type": "image", "data": "AAAA",
                             "mimeType": "image/png"},
                            {"type": "resource_link", "uri": "file:///x",
                             "name": "x"}]
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": content}})
        elif mid is not None:
            send({"jsonrpc": "2.0", "id": mid,
                  "error": {"code": -32601, "message": "no " + str(method)}})


main()
