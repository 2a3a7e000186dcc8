#!/usr/bin/env python3
"""Drive `gemini-agent chat --input-format stream-json` as the Claude Agent
SDK does: an initialize control request, then (once it is answered) one
user message per --prompt; can_use_tool requests answered by --allow or
--deny MESSAGE; stdin closed after the last result. Every line of the
child's stdout is printed as it came; exits with the child's status
(124 when it outlived --timeout).

    driver.py [--prompt TEXT]... [--allow | --always | --deny MESSAGE]
              [--control JSON]... [--timeout S] -- CMD ARGS...

--control sends extra control requests (their `request` objects) right
after initialize is answered, before the first prompt.

--interrupt-on KIND sends one interrupt control request (request_id
"int_1") when the child writes a message of that kind: a message type
("stream_event", "assistant", ...) or "tool_use" (an assistant message
with a tool_use block); --interrupt-after MS waits that long first (or,
without --interrupt-on, counts from the first prompt). Then stderr gets
"driver: interrupt->result S" (seconds from the interrupt to the next
result).
"""
import argparse
import json
import subprocess
import sys
import threading
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompt", action="append", default=[])
    ap.add_argument("--allow", action="store_true")
    ap.add_argument("--deny")
    ap.add_argument("--interrupt", action="store_true",
                    help="answer can_use_tool with an interrupt request")
    ap.add_argument("--interrupt-on")
    ap.add_argument("--interrupt-after", type=float)
    ap.add_argument("--always", action="store_true",
                    help="allow, with updatedPermissions = the request's "
                         "permission_suggestions (a UI's \"always allow\")")
    ap.add_argument("--control", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, bufsize=1)
    timer = threading.Timer(a.timeout, p.kill)
    timer.start()

    lock = threading.Lock()
    sent_at = []   # when the interrupt went out

    def send(obj):
        with lock:
            if p.stdin.closed:
                return
            p.stdin.write(json.dumps(obj) + "\n")
            p.stdin.flush()

    def interrupt():
        sent_at.append(time.monotonic())
        send({"request_id": "int_1", "type": "control_request",
              "request": {"subtype": "interrupt"}})

    def interrupt_later():
        if a.interrupt_after:
            t = threading.Timer(a.interrupt_after / 1000.0, interrupt)
            t.daemon = True
            t.start()
        else:
            interrupt()

    armed = [a.interrupt_on is not None or a.interrupt_after is not None]
    prompts = list(a.prompt)

    def next_prompt():
        if prompts:
            send({"type": "user", "session_id": "", "parent_tool_use_id": None,
                  "message": {"role": "user",
                              "content": [{"type": "text", "text": prompts.pop(0)}]}})
            if armed[0] and a.interrupt_on is None:
                armed[0] = False
                interrupt_later()
        else:
            with lock:
                p.stdin.close()

    send({"request_id": "init_1", "type": "control_request",
          "request": {"subtype": "initialize"}})
    for line in p.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        try:
            m = json.loads(line)
        except ValueError:
            continue
        t = m.get("type")
        if armed[0] and a.interrupt_on is not None and (
                t == a.interrupt_on or
                (a.interrupt_on == "tool_use" and t == "assistant" and
                 any(b.get("type") == "tool_use"
                     for b in m["message"]["content"]))):
            armed[0] = False
            interrupt_later()
        if t == "control_response" and m["response"].get("request_id") == "init_1":
            for i, c in enumerate(a.control):
                send({"request_id": "ctl_%d" % i, "type": "control_request",
                      "request": json.loads(c)})
            next_prompt()
        elif t == "control_request" and m["request"].get("subtype") == "can_use_tool":
            r = m["request"]
            if a.interrupt:
                send({"request_id": "int_1", "type": "control_request",
                      "request": {"subtype": "interrupt"}})
                continue
            if a.deny is not None:
                res = {"behavior": "deny", "message": a.deny}
            else:
                res = {"behavior": "allow", "updatedInput": r["input"]}
                if a.always:
                    res["updatedPermissions"] = r.get("permission_suggestions", [])
            res["toolUseID"] = r.get("tool_use_id")
            send({"type": "control_response",
                  "response": {"subtype": "success", "request_id": m["request_id"],
                               "response": res}})
        elif t == "result":
            if len(sent_at) == 1:
                sys.stderr.write("driver: interrupt->result %.3f\n"
                                 % (time.monotonic() - sent_at[0]))
                sent_at.append(None)
            next_prompt()
    rc = p.wait()
    timer.cancel()
    sys.exit(124 if rc < 0 else rc)


if __name__ == "__main__":
    main()
