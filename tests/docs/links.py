#!/usr/bin/env python3
"""links.py - every relative link in README.md and docs/**/*.md must reach
a file that exists and, when it names one, an #anchor that file has.

    links.py [ROOT]     ROOT: the repository (default: two folders up)

Checks Markdown links and images, [text](target) and ![alt](target),
outside fenced blocks and `code spans`; a target with a scheme (https:,
mailto:) is not checked. Anchors are GitHub's: a heading's text in lower
case, punctuation other than - and _ dropped, spaces made -, a repeated
one given -1, -2, ...; an <a id="x"> or <a name="x"> counts too. A link
into a folder passes when the folder exists. Prints one line per broken
link (file:line: target: why) and exits 1 when there is any.
"""
import os
import re
import sys

FENCE = re.compile(r'^\s*(```+|~~~+)')
LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)')
CODE = re.compile(r'(`+)(?:(?!\1).)+?\1')
HEADING = re.compile(r'^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$')
HTML_ANCHOR = re.compile(r'<a\s+(?:id|name)="([^"]+)"', re.I)


def prose_lines(text):
    """(line number, line) outside fenced blocks."""
    fence = None
    for n, line in enumerate(text.split('\n'), 1):
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)
                continue
            yield n, line
        elif m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                and line.strip() == m.group(1):
            fence = None


def slug(heading):
    """GitHub's anchor for a heading's text."""
    t = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', heading)   # links: their text
    t = re.sub(r'<[^>]+>', '', t).replace('`', '').lower()
    t = re.sub(r'[^\w\- ]', '', t)
    return t.replace(' ', '-')


def anchors(path, cache={}):
    if path not in cache:
        seen, out = {}, set()
        with open(path, encoding='utf-8') as f:
            text = f.read()
        for _, line in prose_lines(text):
            out.update(HTML_ANCHOR.findall(line))
            m = HEADING.match(line)
            if not m:
                continue
            s = slug(m.group(2))
            k = seen.get(s, 0)
            out.add(s if k == 0 else '%s-%d' % (s, k))
            seen[s] = k + 1
        cache[path] = out
    return cache[path]


def check_file(root, path):
    bad = []
    with open(path, encoding='utf-8') as f:
        text = f.read()
    for n, line in prose_lines(text):
        for m in LINK.finditer(CODE.sub('', line)):
            target = m.group(1)
            if not target or re.match(r'^[a-zA-Z][a-zA-Z0-9+.-]*:', target):
                continue
            file_part, _, anchor = target.partition('#')
            dest = path if not file_part else os.path.normpath(
                os.path.join(os.path.dirname(path), file_part))
            where = '%s:%d: %s' % (os.path.relpath(path, root), n, target)
            if not os.path.exists(dest):
                bad.append('%s: no such file' % where)
            elif anchor and os.path.isfile(dest) and dest.endswith('.md') \
                    and anchor not in anchors(dest):
                bad.append('%s: no anchor #%s in %s' % (where, anchor,
                                                       os.path.relpath(dest, root)))
    return bad


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else
                           os.path.join(os.path.dirname(__file__), '..', '..'))
    files = [os.path.join(root, 'README.md')]
    for d, _, names in os.walk(os.path.join(root, 'docs')):
        files += [os.path.join(d, n) for n in sorted(names) if n.endswith('.md')]
    bad, count = [], 0
    for p in files:
        if os.path.isfile(p):
            count += 1
            bad += check_file(root, p)
    for b in bad:
        print(b)
    print('%d files, %d broken links' % (count, len(bad)))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
