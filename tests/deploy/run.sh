#!/bin/bash
# tests/deploy/run.sh - the deployment tests (tests/deploy/t_*.sh): each
# way of running the product a site owner has (installed binary, .deb,
# Apache's modes, shared hosting, another origin, the bundle), run from
# the recipe in docs/deploy/ as written. Same runner and output as
# tests/http/run.sh:
#
#   tests/deploy/run.sh              every test
#   tests/deploy/run.sh t_x.sh ...   the named tests only
#
# The tests source tests/http/lib.sh (mock Gemini, nginx, assertions) and,
# for Apache, tests/deploy/apache_lib.sh.
T_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P) \
    exec "$(dirname "${BASH_SOURCE[0]}")/../http/run.sh" "$@"
