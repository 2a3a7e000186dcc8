#!/bin/bash
# t_links.sh - the README and docs/ hold together: every relative link in
# README.md and docs/**/*.md reaches a file and, when it names one, an
# #anchor there (tests/docs/links.py); the README links every page and
# folder of docs/ (its table of contents); and the README's two commands
# hold the one .ci/run runs. No server is started.
#
#   bash tests/docs/t_links.sh            or
#   T_DIR=tests/docs tests/http/run.sh    (the runner's summary line)
source "$(dirname "${BASH_SOURCE[0]}")/../http/lib.sh"

LINKS=$REPO/tests/docs/links.py

# 1. the repository's own links
if out=$("$PY" "$LINKS" "$REPO" 2>&1); then
    ok "README.md and docs/**/*.md: every relative link and #anchor resolves (${out##*$'\n'})"
else
    not_ok "README.md and docs/**/*.md: every relative link and #anchor resolves" \
        "$(printf '%s' "$out" | tr '\n' ';')"
fi

# 2. the checker itself finds what is broken, and only that
fake=$T_TMP/fake
mkdir -p "$fake/docs/sub"
cat >"$fake/README.md" <<'MD'
# Title

## Two `words`: here (too)

## Two `words`: here (too)

<a id="custom"></a>

[ok](docs/a.md) [ok](docs/a.md#a-heading) [ok](#two-words-here-too-1)
[ok](#custom) [ok](docs/sub/) [ok](https://example.org/x.md) ![ok](docs/a.md)
[missing file](docs/nope.md) [missing anchor](docs/a.md#no-such-heading)
`[in code](docs/nope2.md)`

```md
[in a block](docs/nope3.md)
```
MD
printf '# A heading\n\n[back](../README.md#title) [bad](../README.md#two-words-here-too-2)\n' \
    >"$fake/docs/a.md"
out=$("$PY" "$LINKS" "$fake" 2>&1)
rc=$?
want='README.md:11: docs/nope.md: no such file
README.md:11: docs/a.md#no-such-heading: no anchor #no-such-heading in docs/a.md
docs/a.md:3: ../README.md#two-words-here-too-2: no anchor #two-words-here-too-2 in README.md
2 files, 3 broken links'
if [ "$rc" -eq 1 ] && [ "$out" = "$want" ]; then
    ok "links.py reports a missing file and missing anchors, nothing in code, exit 1"
else
    not_ok "links.py reports a missing file and missing anchors, nothing in code, exit 1" \
        "exit $rc: $(printf '%s' "$out" | tr '\n' ';')"
fi

# 3. the README is the table of contents of docs/: each page directly in
#    docs/ and each folder of it is linked (a link into the folder counts)
missing=$("$PY" - "$REPO" <<'PY'
import os, re, sys
root = sys.argv[1]
readme = open(os.path.join(root, 'README.md'), encoding='utf-8').read()
targets = {os.path.normpath(t.split('#')[0])
           for t in re.findall(r'\]\(([^)\s#][^)\s]*)\)', readme)}
for name in sorted(os.listdir(os.path.join(root, 'docs'))):
    p = os.path.join('docs', name)
    if os.path.isdir(os.path.join(root, p)):
        if name != 'screenshots' and not any(t == p or t.startswith(p + '/') for t in targets):
            print(p + '/')
    elif name.endswith('.md') and p not in targets:
        print(p)
PY
)
if [ -z "$missing" ]; then
    ok "README.md links every page and folder of docs/"
else
    not_ok "README.md links every page and folder of docs/" "not linked: ${missing//$'\n'/ }"
fi

# 4. .ci/run runs the README's test command
ci=$(sed -n 's/^exec \(make [a-z]*\)$/\1/p' "$REPO/.ci/run")
if [ -n "$ci" ] && grep -q "^$ci " "$REPO/README.md"; then
    ok "the README's two commands hold .ci/run's ($ci)"
else
    not_ok "the README's two commands hold .ci/run's" "'$ci' not at a line start in README.md"
fi

# 5. every repository path the README and docs/ name exists
if out=$("$PY" "$REPO/tests/docs/paths.py" "$REPO" 2>&1); then
    ok "README.md and docs/**/*.md: every repository path they name exists (${out##*$'\n'})"
else
    not_ok "README.md and docs/**/*.md: every repository path they name exists" \
        "$(printf '%s' "$out" | tr '\n' ';')"
fi

# 6. ...and the checker finds a missing one, and only that
fake=$T_TMP/fakepaths
mkdir -p "$fake/docs" "$fake/src/gemini" "$fake/src/http"
touch "$fake/src/gemini/credentials.c" "$fake/src/http/chat.c"
cat >"$fake/README.md" <<'MD'
`src/http/chat.c` `http/chat.c` `gemini/credentials` `src/gemini/*.c`
`gemini/auth` `src/gemini/client.c` `/_jay/actions` `build/gemini-agent`
`docs/<page>.md` `https://example.org/src/x.c`

```sh
cat src/http/nope.h
```
MD
out=$("$PY" "$REPO/tests/docs/paths.py" "$fake" 2>&1)
rc=$?
want='README.md:2: gemini/auth: no such file in the repository
README.md:2: src/gemini/client.c: no such file in the repository
README.md:6: src/http/nope.h: no such file in the repository
1 files, 3 missing'
if [ "$rc" -eq 1 ] && [ "$out" = "$want" ]; then
    ok "paths.py reports missing repository paths (spans and blocks), skips globs, placeholders, URLs and build output"
else
    not_ok "paths.py reports missing repository paths, and only those" \
        "exit $rc: $(printf '%s' "$out" | tr '\n' ';')"
fi

# 7. no source, test or page cites what a reader of the repository cannot
#    open: an issue number, a seed section, a path outside the repository
cites=$(cd "$REPO" && git grep --untracked -nE '[Ii]ssue [0-9]+|[Ss]eed [0-9]{3}|\.\./shared/(research|seeds|DESIGN|STYLE|gemini)|/work/shared|\bseeds/' -- \
    src include actions www scripts Makefile conf nginx docs README.md .ci tests \
    ':!tests/unit/data' ':!tests/docs/t_links.sh' 2>/dev/null)
if [ -z "$cites" ]; then
    ok "no comment or page cites an issue, a seed or a path outside the repository"
else
    not_ok "no comment or page cites an issue, a seed or a path outside the repository" \
        "$(printf '%s' "$cites" | head -5 | tr '\n' ';')"
fi

finish
