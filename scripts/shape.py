#!/usr/bin/env python3
"""shape.py - the size limits the C sources keep (docs/internals/layout.md).

    scripts/shape.py [--report] [--max-lines N] [--max-params N] [FILE...]

Reads src/**/*.c (or the FILEs given), written in the layout `make format`
keeps: a definition's name starts a line at column 0, its `{` and `}` stand
alone at column 0. For each function it counts the lines from `{` to `}`
and the parameters; for each struct defined at column 0, its fields.

Without --report it prints every function over the limits (100 lines, 8
parameters) as `file:line: name: N lines` and exits 1 when there is one.
With --report it prints the numbers the limits are about: functions over
80 and 100 lines, the longest, functions with 7 or more parameters, and the
structs with the most fields.
"""
import glob
import os
import re
import sys

NAME = re.compile(r'(?<![\w])([A-Za-z_]\w*)\s*\(')


def split_params(text):
    """Top-level comma-separated parameters of a parameter list."""
    depth, cur, out = 0, '', []
    for ch in text:
        if ch in '([':
            depth += 1
        elif ch in ')]':
            depth -= 1
        if ch == ',' and depth == 0:
            out.append(cur)
            cur = ''
        else:
            cur += ch
    out.append(cur)
    out = [p.strip() for p in out if p.strip()]
    return [] if out == ['void'] else out


def functions(path):
    """(name, line, body lines, parameter count) of each definition."""
    lines = open(path, encoding='utf-8', errors='replace').read().split('\n')
    out = []
    i = 0
    while i < len(lines):
        if lines[i] == '{':
            # the signature: the lines since a blank line, a `}`, the end
            # of a comment or a preprocessor line
            j = i - 1
            while j >= 0 and lines[j] not in ('', '}') and \
                    not lines[j].endswith('*/') and \
                    not lines[j].startswith('#'):
                j -= 1
            j += 1
            sig = ' '.join(lines[j:i])
            m = NAME.search(sig)
            if not m or j == i:
                i += 1
                continue
            k = i + 1
            while k < len(lines) and lines[k] != '}':
                k += 1
            open_at = sig.index('(', m.start(1))
            depth, end = 0, open_at
            for end in range(open_at, len(sig)):
                depth += sig[end] == '('
                depth -= sig[end] == ')'
                if depth == 0:
                    break
            params = split_params(sig[open_at + 1:end])
            out.append((m.group(1), j + 1, k - i + 1, len(params)))
            i = k
        i += 1
    return out


def structs(path):
    """(name, line, fields) of each struct defined at column 0."""
    text = open(path, encoding='utf-8', errors='replace').read()
    text = re.sub(r'/\*.*?\*/', lambda c: '\n' * c.group(0).count('\n'),
                  text, flags=re.S)
    out = []
    for m in re.finditer(r'^struct (\w+) \{\n', text, flags=re.M):
        depth, fields, pos = 1, 0, m.end()
        while depth and pos < len(text):
            ch = text[pos]
            if ch == '{':
                depth += 1
            elif ch == '}':
                depth -= 1
            elif ch == ';' and depth == 1:
                fields += 1
            pos += 1
        line = text.count('\n', 0, m.start()) + 1
        out.append((m.group(1), line, fields))
    return out


def main(argv):
    report = '--report' in argv
    max_lines, max_params, files = 100, 8, []
    args = [a for a in argv if a != '--report']
    while args:
        a = args.pop(0)
        if a == '--max-lines':
            max_lines = int(args.pop(0))
        elif a == '--max-params':
            max_params = int(args.pop(0))
        else:
            files.append(a)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not files:
        files = sorted(glob.glob(os.path.join(root, 'src', '**', '*.c'),
                                 recursive=True))
    fns, sts = [], []
    for f in files:
        rel = os.path.relpath(f, root)
        fns += [(rel,) + fn for fn in functions(f)]
        sts += [(rel,) + s for s in structs(f)]
        h = f[:-2] + '.h'
        if os.path.exists(h) and h not in files:
            sts += [(os.path.relpath(h, root),) + s for s in structs(h)]
    if len(files) > 1:
        for h in sorted(glob.glob(os.path.join(root, 'src', '**', '*.h'),
                                  recursive=True)):
            if not os.path.exists(h[:-2] + '.c'):
                sts += [(os.path.relpath(h, root),) + s for s in structs(h)]
    if report:
        longest = sorted(fns, key=lambda x: -x[3])
        print('functions: %d' % len(fns))
        print('over 80 lines: %d' % sum(1 for f in fns if f[3] > 80))
        print('over 100 lines: %d' % sum(1 for f in fns if f[3] > 100))
        print('7 or more parameters: %d' % sum(1 for f in fns if f[4] >= 7))
        print('over 8 parameters: %d' % sum(1 for f in fns if f[4] > 8))
        print('longest:')
        for f in longest[:15]:
            print('  %s:%d: %s: %d lines' % (f[0], f[2], f[1], f[3]))
        print('widest:')
        for f in sorted(fns, key=lambda x: -x[4])[:5]:
            print('  %s:%d: %s: %d parameters' % (f[0], f[2], f[1], f[4]))
        print('largest structs:')
        seen = set()
        for s in sorted(sts, key=lambda x: -x[3]):
            if s[:2] in seen:
                continue
            seen.add(s[:2])
            print('  %s:%d: struct %s: %d fields' % (s[0], s[2], s[1], s[3]))
            if len(seen) == 5:
                break
        return 0
    bad = 0
    for f in fns:
        if f[3] > max_lines:
            print('%s:%d: %s: %d lines (limit %d)' % (f[0], f[2], f[1], f[3],
                                                       max_lines))
            bad += 1
        if f[4] > max_params:
            print('%s:%d: %s: %d parameters (limit %d)' % (
                f[0], f[2], f[1], f[4], max_params))
            bad += 1
    if bad:
        print('shape: %d over the limits (docs/internals/layout.md)' % bad)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
