#!/bin/bash
# t_version.sh - `gemini-agent --version` and `gemini-agent version`: the
# Makefile's VERSION (make print-version) on the first line, then the
# libraries it runs with and was built with; the same text both ways.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_binary
WANT=$(make -s -C "$REPO" --no-print-directory print-version) || bail "make print-version failed"
check "make print-version: a version (x.y.z)" eval '[[ $WANT =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]'

ga_run --version
check "--version: exit 0" [ "$rc" = 0 ]
check "--version: nothing on stderr" [ -z "$err" ]
check "--version: first line 'gemini-agent $WANT'" [ "$(head -n 1 <<<"$out")" = "gemini-agent $WANT" ]
for lib in 'libcurl [0-9.]+ \(built with [0-9.]+\)' 'jansson [0-9.]+ \(built with [0-9.]+\)' \
    'libyaml [0-9.]+' 'SQLite [0-9.]+ \(built with [0-9.]+\)' \
    'OpenSSL libcrypto [0-9.]+[a-z]? \(built with [0-9.]+\)' 'libfcgi \(built with [0-9.]+\)'; do
    check "--version: a line '$lib'" grep -Eqx "$lib" <<<"$out"
done
VERSION_OUT=$out

ga_run version
check "version: exit 0, the same text" eval '[ "$rc" = 0 ] && [ "$out" = "$VERSION_OUT" ]'
ga_run --help
check "--help names --version" grep -qF -- '--version' <<<"$out"
finish
