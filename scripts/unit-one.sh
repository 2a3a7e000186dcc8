#!/bin/sh
# Build and run one unit suite alone, so work on one module is not blocked
# by another module's half-written files. Usage:
#   scripts/unit-one.sh MOD [extra src/*/*.c files...] [--asan]
# Builds tests/unit/check_MOD.c with the leaf modules plus the extra files
# into build-one/MOD/ and runs it from tests/unit/.
set -eu
mod=$1; shift
asan=""; extra=""
for a in "$@"; do
    case "$a" in
    --asan) asan="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" ;;
    *) extra="$extra $a" ;;
    esac
done
out=build-one/$mod; mkdir -p "$out"
cat > "$out/main.c" <<EOC
#include <check.h>
#include <stdlib.h>
Suite *${mod}_suite(void);
int main(void) {
    SRunner *sr = srunner_create(${mod}_suite());
    srunner_run_all(sr, CK_NORMAL);
    int f = srunner_ntests_failed(sr);
    srunner_free(sr);
    return f ? EXIT_FAILURE : EXIT_SUCCESS;
}
EOC
# shellcheck disable=SC2086
gcc -std=c11 -DTESTING -O1 -g $asan -Wall -Wextra -Werror -Wshadow \
    -Wstrict-prototypes -Wpointer-arith -Wcast-qual -Wwrite-strings -Wvla \
    -Wformat=2 -fno-common -Isrc -Iinclude \
    src/core/arena.c src/core/sbuf.c src/core/status.c src/core/diag.c \
    src/core/logmsg.c src/core/utf8.c src/core/memlimit.c $extra \
    "tests/unit/check_$mod.c" "$out/main.c" -o "$out/check" \
    $(pkg-config --cflags --libs jansson yaml-0.1 check)
cd tests/unit && "../../$out/check"
