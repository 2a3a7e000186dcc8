#!/bin/sh
# Build and run one unit suite alone, so work on one module is not blocked
# by another module's half-written files. Usage:
#   scripts/unit-one.sh MOD [--asan]
# Compiles every source as `make check` does (the same objects, in
# build-test/, or build-asan-test/ with --asan, so make keeps it
# incremental; a file that does not compile is left out with its error
# shown), puts the objects in
# one archive, and links tests/unit/check_MOD.c against it: the linker
# takes only the objects the suite needs, found by their symbols, so no
# list of dependencies is kept anywhere. Runs it from tests/unit/
# (CK_RUN_CASE=name runs one test case). docs/internals/testing.md.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 MOD [--asan]" >&2; exit 2; }
mod=$1; shift
repo=$(cd "$(dirname "$0")/.." && pwd -P)
cd "$repo"
[ -f "tests/unit/check_$mod.c" ] || { echo "$0: no tests/unit/check_$mod.c" >&2; exit 2; }
build=build-test; san=""
for a in "$@"; do
    case "$a" in
    --asan) build=build-asan-test; san="SANITIZE=1" ;;
    *) echo "$0: unknown option $a" >&2; exit 2 ;;
    esac
done
srcs=$(ls src/*/*.c actions/*/*.c tests/unit/unit_*.c)
objs="$build/gen/handlers.o $build/gen/template.o"
for f in $srcs; do objs="$objs $build/${f%.c}.o"; done
# -k: a module that does not compile does not stop the others.
# shellcheck disable=SC2086
make -s -k --no-print-directory TESTING=1 BUILD="$build" $san \
    $objs "$build/tests/unit/check_$mod.o" || true
# An object older than its source is one make could not rebuild: left out,
# so the link names what is missing instead of running yesterday's code.
have=""
for o in $objs; do
    src=${o#"$build"/}; src=${src%.o}.c
    [ -f "$o" ] || continue
    [ -f "$src" ] && [ "$src" -nt "$o" ] && continue
    have="$have $o"
done
mkdir -p "$build/one"
rm -f "$build/one/libunit.a"
# shellcheck disable=SC2086
ar rcs "$build/one/libunit.a" $have
cat > "$build/one/main-$mod.c" <<EOC
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
sanflags=""
[ -n "$san" ] && sanflags="-fsanitize=address,undefined -fno-sanitize-recover=all"
# shellcheck disable=SC2086
${CC:-gcc} $sanflags -o "$build/one/check-$mod" "$build/one/main-$mod.c" \
    "$build/tests/unit/check_$mod.o" "$build/one/libunit.a" \
    $(pkg-config --libs jansson libcurl yaml-0.1 libcrypto check sqlite3) -lfcgi
cd tests/unit && "../../$build/one/check-$mod"
