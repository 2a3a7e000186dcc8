#!/bin/sh
# Install the npm packages (package-lock.json pins them) and copy the two
# the browser loads into www/vendor/ (ignored by git: installed, never
# committed). Safe to run twice: npm ci runs only when the lock changed.
# --omit=optional: @anthropic-ai/claude-agent-sdk (tests/sdk) lists its own
# native Claude Code binary (364 MB) as an optional dependency; the test
# spawns gemini-agent instead, so the binary is never installed.
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd -P)
cd "$repo"
if [ ! -f node_modules/.package-lock.json ] ||
   [ package-lock.json -nt node_modules/.package-lock.json ]; then
    npm ci --omit=optional --no-audit --no-fund --loglevel=error
fi
mkdir -p www/vendor
cp node_modules/dompurify/dist/purify.es.mjs www/vendor/dompurify.js
cp node_modules/marked/lib/marked.esm.js www/vendor/marked.js
