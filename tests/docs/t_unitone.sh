#!/bin/bash
# t_unitone.sh - one unit suite alone (docs/internals/testing.md): the
# recipe's command runs the suite it names and nothing else, and a name
# with no suite is a clear error. Run after `make check` (scripts/test.sh),
# so the objects are there and this only links.
source "$(dirname "${BASH_SOURCE[0]}")/../http/lib.sh"

DOC=$REPO/docs/internals/testing.md
cmd=$("$PY" "$REPO/tests/deploy/recipe.py" "$DOC" one-suite) || bail "no one-suite block in $DOC"
out=$(cd "$REPO" && bash -c "$cmd" 2>&1)
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^Running suite(s): permission$' <<<"$out" &&
   grep -q '^100%: Checks: [1-9]' <<<"$out"; then
    ok "docs/internals/testing.md one-suite: '$cmd' runs the permission suite alone ($(grep '^100%' <<<"$out"))"
else
    not_ok "docs/internals/testing.md one-suite runs the permission suite alone" \
        "exit $rc: $(tail -5 <<<"$out" | tr '\n' ';')"
fi

out=$(cd "$REPO" && scripts/unit-one.sh no_such_module 2>&1)
rc=$?
if [ "$rc" -eq 2 ] && [ "$out" = "scripts/unit-one.sh: no tests/unit/check_no_such_module.c" ]; then
    ok "unit-one.sh with no such suite: exit 2 and a message naming the file"
else
    not_ok "unit-one.sh with no such suite: exit 2 and a message naming the file" "exit $rc: $out"
fi

finish
