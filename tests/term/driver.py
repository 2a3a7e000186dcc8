#!/usr/bin/env python3
"""Drive `gemini-agent chat --input-format stream-json` as the Claude Agent
SDK does: an initialize control request, then (once it is answered) one
user message per --prompt; can_use_tool requests answered by --allow or
--deny MESSAGE; stdin closed after the last result. Every line of the
child's stdout is printed as it came; exits with the child's status
(124 when it outlived --timeout).

    driver.py [--prompt TEXT]... [--allow | --deny MESSAGE]
              [--control JSON]... [--timeout S] -- CMD ARGS...

--control sends extra control requests (their `request` objects) right
after initialize is answered, before the first prompt.
"""
import argparse
import json
import subprocess
import sys
import threading


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompt", action="append", default=[])
    ap.add_argument("--allow", action="store_true")
    ap.add_argument("--deny")
    ap.add_argument("--interrupt", action="store_true",
                    help="answer can_use_tool with an interrupt request")
    ap.add_argument("--control", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, bufsize=1)
    timer = threading.Timer(a.timeout, p.kill)
    timer.start()

    def send(obj):
        p.stdin.write(json.dumps(obj) + "\n")
        p.stdin.flush()

    prompts = list(a.prompt)

    def next_prompt():
        if prompts:
            send({"type": "user", "session_id": "", "parent_tool_use_id": None,
                  "message": {"role": "user",
                              "content": [{"type": "text", "text": prompts.pop(0)}]}})
        else:
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
            res["toolUseID"] = r.get("tool_use_id")
            send({"type": "control_response",
                  "response": {"subtype": "success", "request_id": m["request_id"],
                               "response": res}})
        elif t == "result":
            next_prompt()
    rc = p.wait()
    timer.cancel()
    sys.exit(124 if rc < 0 else rc)


if __name__ == "__main__":
    main()
