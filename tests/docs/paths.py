#!/usr/bin/env python3
"""paths.py - every repository path README.md and docs/ name exists.

    tests/docs/paths.py ROOT

Reads README.md and docs/**/*.md under ROOT. A code span (`...`) or a
fenced block's word that looks like a path in the repository - it starts
with one of the repository's top folders (src/, include/, conf/, nginx/,
actions/, tests/, www/, docs/, scripts/, .ci/) or with a layer folder of
src/ (`http/chat.c` is src/http/chat.c) - must name a file or folder that
exists; a layer path without an extension (`gemini/auth`) may name a
module (its .c or .h). Spans with a wildcard, a placeholder (<x>, $X, ...)
or a URL are not paths and are skipped, as are files a command makes
(build*/, var/, node_modules/) and the site owner's own files
(conf/.gemini.yaml and the like, listed below).

Prints `file:line: PATH: no such file in the repository` for each, then
`N files, M missing`; exits 1 when any is missing.
"""
import os
import re
import sys

TOP = ('src', 'include', 'conf', 'nginx', 'actions', 'tests', 'www', 'docs',
       'scripts', '.ci')
# Made by the site owner or a command, never in the repository.
MADE = {'conf/.gemini.yaml', 'conf/agent.local.yaml', 'www/vendor',
        'tests/e2e/screenshots'}
SPAN = re.compile(r'`([^`\n]+)`')
WORD = re.compile(r'(?<![\w./$-])((?:\.ci|[a-z][\w-]*)(?:/[\w.@+-]+)+/?)')


def layers(root):
    src = os.path.join(root, 'src')
    return {d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))}


def candidates(text):
    """(line, word) of each path-looking word in code spans and blocks."""
    fenced = False
    for n, line in enumerate(text.split('\n'), 1):
        if line.lstrip().startswith('```'):
            fenced = not fenced
            continue
        spans = [line] if fenced else SPAN.findall(line)
        for span in spans:
            if re.search(r'[*<>$…{}]|\.\.\.|://', span):
                continue
            for m in WORD.finditer(span):
                yield n, m.group(1)


def exists(root, path, lay):
    p = path.rstrip('/')
    head = p.split('/')[0]
    if p in MADE or head.startswith('build') or head in ('var',
                                                          'node_modules'):
        return True
    if head in TOP:
        full = os.path.join(root, p)
    elif head in lay:
        full = os.path.join(root, 'src', p)
        if not os.path.splitext(p)[1]:
            return any(os.path.exists(full + e) for e in ('', '.c', '.h'))
    else:
        return True  # not a repository path (a URL path, a package name)
    return os.path.exists(full)


def main(root):
    lay = layers(root)
    files = [os.path.join(root, 'README.md')]
    for d, _, names in os.walk(os.path.join(root, 'docs')):
        files += [os.path.join(d, x) for x in sorted(names)
                  if x.endswith('.md')]
    missing = 0
    for f in files:
        text = open(f, encoding='utf-8').read()
        for n, path in candidates(text):
            if not exists(root, path, lay):
                print('%s:%d: %s: no such file in the repository'
                      % (os.path.relpath(f, root), n, path))
                missing += 1
    print('%d files, %d missing' % (len(files), missing))
    return 1 if missing else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else '.'))
