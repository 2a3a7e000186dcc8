#!/usr/bin/env python3
"""recipe.py - print a fenced block of a recipe in docs/deploy/, so that a
test runs the recipe exactly as written.

A recipe's blocks that a test runs or installs carry a name after their
language (GitHub shows only the language):

    ```sh install
    make install PREFIX="$HOME/.local"
    ```

    recipe.py FILE NAME     the block named NAME (exactly one must exist)
    recipe.py FILE --list   the names, one per line

Exits 2 with a message on stderr when the block is missing or named twice,
so a recipe edited without its test fails the test instead of running
nothing.
"""
import re
import sys

FENCE = re.compile(r'^(\s*)(```+|~~~+)\s*(\S*)\s*(\S*)\s*$')


def blocks(text):
    """(language, name, body) for every fenced block, in order."""
    out, cur, lines = [], None, []
    for line in text.split('\n'):
        m = FENCE.match(line)
        if cur is None:
            if m and m.group(3):
                cur = (m.group(2), m.group(3), m.group(4), len(m.group(1)))
                lines = []
            continue
        if m and m.group(2).startswith(cur[0][0]) and len(m.group(2)) >= len(cur[0]) \
                and not m.group(3):
            out.append((cur[1], cur[2], '\n'.join(lines) + '\n'))
            cur = None
            continue
        # strip the fence's own indentation (a block inside a list item)
        ind = cur[3]
        lines.append(line[ind:] if line[:ind].strip() == '' else line)
    return out


def main(argv):
    if len(argv) != 3:
        sys.stderr.write('usage: recipe.py FILE NAME | FILE --list\n')
        return 2
    try:
        with open(argv[1], encoding='utf-8') as f:
            found = blocks(f.read())
    except OSError as e:
        sys.stderr.write('recipe.py: %s\n' % e)
        return 2
    if argv[2] == '--list':
        for _, name, _ in found:
            if name:
                print(name)
        return 0
    hits = [body for _, name, body in found if name == argv[2]]
    if len(hits) != 1:
        sys.stderr.write('recipe.py: %s has %d blocks named %r (want 1)\n'
                         % (argv[1], len(hits), argv[2]))
        return 2
    sys.stdout.write(hits[0])
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
