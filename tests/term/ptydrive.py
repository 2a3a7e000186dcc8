#!/usr/bin/env python3
"""ptydrive.py - run a command on a pseudo-terminal and drive it like a
person would: wait for text, type a line, press Ctrl-D. Used by
tests/term/t_tty.sh for `gemini-agent chat`'s interactive mode.
Python standard library only (pty).

    ptydrive.py [--timeout S] [--raw FILE] [--out FILE] STEP... -- COMMAND ARGS...

Steps, in order:
    expect=REGEX   wait until REGEX matches the output after the previous
                   match (ANSI escape codes stripped before matching)
    send=TEXT      type TEXT (a "\\n" in TEXT is Enter)
    eof            press Ctrl-D (the end of input at the start of a line)
    intr           press Ctrl-C (the terminal sends SIGINT to the command)
    sleep=S        wait S seconds (reading the output meanwhile)

After the last step it reads until the command exits. --out gets the
output with ANSI codes stripped and CR LF as LF, --raw the bytes as written. Exits with
the command's exit status; 124 when a step or the exit timed out (the
output so far is printed on stderr then).
"""
import os
import pty
import re
import select
import signal
import sys
import time

ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def main(argv):
    timeout = 20.0
    raw_path = out_path = None
    steps = []
    i = 0
    while i < len(argv) and argv[i] != "--":
        a = argv[i]
        if a == "--timeout":
            timeout = float(argv[i + 1])
            i += 2
            continue
        if a in ("--raw", "--out"):
            if a == "--raw":
                raw_path = argv[i + 1]
            else:
                out_path = argv[i + 1]
            i += 2
            continue
        if a.startswith("expect="):
            steps.append(("expect", re.compile(a[7:])))
        elif a.startswith("send="):
            steps.append(("send", a[5:].replace("\\n", "\n").encode()))
        elif a == "eof":
            steps.append(("send", b"\x04"))
        elif a == "intr":
            steps.append(("send", b"\x03"))
        elif a.startswith("sleep="):
            steps.append(("sleep", float(a[6:])))
        else:
            sys.exit("ptydrive.py: unknown step %r" % a)
        i += 1
    cmd = argv[i + 1:]
    if not cmd:
        sys.exit("ptydrive.py: no command after --")

    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)

    raw = bytearray()
    pos = 0  # where the next expect starts, in the stripped output
    closed = False

    def stripped():
        return ANSI.sub(b"", bytes(raw)).replace(b"\r\n", b"\n").decode(
            "utf-8", "replace")

    def pump(until):
        nonlocal closed
        while not closed:
            left = until - time.monotonic()
            if left <= 0:
                return
            r, _, _ = select.select([fd], [], [], min(left, 0.1))
            if not r:
                return
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the command closed the terminal
                data = b""
            if not data:
                closed = True
                return
            raw.extend(data)

    def fail(why):
        sys.stderr.write("ptydrive.py: %s\n--- output so far ---\n%s\n---\n"
                         % (why, stripped()))
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        save()
        sys.exit(124)

    def save():
        if raw_path:
            with open(raw_path, "wb") as f:
                f.write(bytes(raw))
        if out_path:
            with open(out_path, "w") as f:
                f.write(stripped())

    for kind, arg in steps:
        deadline = time.monotonic() + timeout
        if kind == "send":
            pump(time.monotonic() + 0.05)  # let it reach the read
            os.write(fd, arg)
            continue
        if kind == "sleep":
            end = time.monotonic() + arg
            while not closed and time.monotonic() < end:
                pump(end)
            continue
        while True:
            m = arg.search(stripped(), pos)
            if m:
                pos = m.end()
                break
            if closed or time.monotonic() > deadline:
                fail("no match for %r" % arg.pattern)
            pump(min(deadline, time.monotonic() + 0.2))

    deadline = time.monotonic() + timeout
    while not closed and time.monotonic() < deadline:
        pump(deadline)
    if not closed:
        fail("the command did not exit")
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    save()
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
