#!/bin/bash
# scripts/make-bundle.sh - the portable bundle (`make bundle`): one tarball
# a site owner unpacks on a host that has glibc and nothing else of ours.
#
#   make-bundle.sh BINARY VERSION ARCH OUT.tar.gz
#       BINARY was linked with the run path $ORIGIN/lib (the Makefile's
#       BUNDLING=1); the tarball holds gemini-agent-bundle-VERSION-ARCH/,
#       the folder docs/deploy/shared-hosting.md's section 2 makes, less
#       the owner's key and session secret:
#         gemini-agent.cgi  BINARY, stripped ($ORIGIN is its own folder
#                           whatever its name)
#         lib/              every shared library BINARY needs but glibc's
#         agent.yaml        conf/hosting-agent.yaml
#         var/              the server's data folder (empty)
#         agent/ vendor/    the widget (www/agent, www/vendor)
#         .htaccess         conf/htaccess: the routes to the CGI, the
#                           config, key, secret and var/ refused
#         README
#   make-bundle.sh --glibc
#       the libraries left to the host (shell patterns, one a line): the
#       one list of them, which tests/deploy/t_bundle.sh reads too.
#
# The libraries come from ldd, and again from ldd of each library found,
# so that a dependency ldd of the program alone might not show is there.
# Then every NEEDED entry of the program and of each library is checked
# to be in lib/ or glibc's, and no library may carry its own RPATH or
# RUNPATH: one would replace the program's $ORIGIN/lib for that
# library's dependencies (the DT_RPATH rule in ld.so(8)).
set -euo pipefail

# glibc's own libraries: the loader, libc and the libraries built from
# glibc's source (Debian's libc6 package). Every host has these, and they
# must match the loader there, so they are never bundled. linux-vdso and
# linux-gate are the kernel's, not files.
GLIBC_LIBS='ld-linux*.so.*
ld64.so.*
linux-vdso.so.*
linux-gate.so.*
libc.so.*
libm.so.*
libmvec.so.*
libpthread.so.*
libdl.so.*
librt.so.*
libresolv.so.*
libanl.so.*
libutil.so.*
libnss_*.so.*
libBrokenLocale.so.*
libthread_db.so.*
libc_malloc_debug.so.*'

die() {
    echo "make-bundle.sh: $*" >&2
    exit 1
}

# is_glibc NAME: NAME (a file name, no folder) is one of GLIBC_LIBS.
is_glibc() {
    local p
    while IFS= read -r p; do
        # shellcheck disable=SC2053  # the patterns are globs
        [[ $1 == $p ]] && return 0
    done <<<"$GLIBC_LIBS"
    return 1
}

# ldd_deps FILE: "NAME PATH" for each library ldd resolves for FILE; fails
# on one it cannot find.
ldd_deps() {
    local out
    out=$(ldd "$1") || die "ldd $1 failed"
    if grep -q 'not found' <<<"$out"; then
        die "$1: $(grep 'not found' <<<"$out" | tr -s ' \t' ' ' | tr '\n' ';')"
    fi
    awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' <<<"$out"
}

# collect BINARY LIBDIR: copy every non-glibc library BINARY needs into
# LIBDIR under the name it is asked for (its soname), recursively.
collect() {
    local -a todo=("$1")
    local f name path
    while [ ${#todo[@]} -gt 0 ]; do
        f=${todo[0]}
        todo=("${todo[@]:1}")
        while read -r name path; do
            is_glibc "$name" && continue
            [ -e "$2/$name" ] && continue
            cp -L "$path" "$2/$name"
            chmod 0644 "$2/$name"
            todo+=("$path")
        done < <(ldd_deps "$f")
    done
}

# needed FILE: its DT_NEEDED names.
needed() {
    readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'
}

# verify DIR: the program's RPATH is $ORIGIN/lib; every library needed by
# the program or one in lib/ is in lib/ or glibc's; no library in lib/ has
# a run path of its own.
verify() {
    local d=$1 f n
    # shellcheck disable=SC2016  # $ORIGIN is the loader's, not the shell's
    readelf -d "$d/gemini-agent.cgi" | grep -q '(RPATH).*\[\$ORIGIN/lib\]' ||
        die "the program has no RPATH \$ORIGIN/lib (was it linked with BUNDLING=1?)"
    for f in "$d/gemini-agent.cgi" "$d"/lib/*; do
        if [ "$f" != "$d/gemini-agent.cgi" ] && readelf -d "$f" | grep -Eq '\((RPATH|RUNPATH)\)'; then
            die "$(basename "$f") has a run path of its own: it would not find lib/"
        fi
        for n in $(needed "$f"); do
            [ -e "$d/lib/$n" ] || is_glibc "$n" ||
                die "$(basename "$f") needs $n, which is neither in lib/ nor glibc's"
        done
    done
}

# glibc_min DIR: the newest GLIBC_x.y symbol version the program and its
# libraries ask for, i.e. the oldest glibc the bundle runs on.
glibc_min() {
    objdump -T "$1/gemini-agent.cgi" "$1"/lib/* 2>/dev/null |
        grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1
}

if [ "${1:-}" = --glibc ]; then
    printf '%s\n' "$GLIBC_LIBS"
    exit 0
fi
[ $# -eq 4 ] || die "usage: make-bundle.sh BINARY VERSION ARCH OUT.tar.gz | --glibc"
bin=$1 version=$2 arch=$3 out=$4
repo=$(cd "$(dirname "$0")/.." && pwd -P)
[ -x "$bin" ] || die "$bin: no such program"

name=gemini-agent-bundle-$version-$arch
stage=$(mktemp -d "${TMPDIR:-/tmp}/ga-bundle.XXXXXX")
trap 'rm -rf "$stage"' EXIT
d=$stage/$name
mkdir -p "$d/lib" "$d/var"

# Stripped: the debug information names this checkout's folders.
strip -o "$d/gemini-agent.cgi" "$bin"
chmod 0755 "$d/gemini-agent.cgi"
collect "$bin" "$d/lib"
verify "$d"

cp -R "$repo/www/agent" "$repo/www/vendor" "$d/"
cp "$repo/conf/hosting-agent.yaml" "$d/agent.yaml"
cp "$repo/conf/htaccess" "$d/.htaccess"
glibc=$(glibc_min "$d")
sed -e "s/@VERSION@/$version/g" -e "s/@ARCH@/$arch/g" -e "s/@GLIBC@/$glibc/g" \
    "$repo/conf/bundle-README" >"$d/README"

chmod -R u=rwX,go=rX "$d"
chmod 0755 "$d/gemini-agent.cgi"
chmod 0700 "$d/var"
chmod 0600 "$d/agent.yaml"
mkdir -p "$(dirname "$out")"
tar -C "$stage" --owner=0 --group=0 --numeric-owner -czf "$out.tmp" "$name"
mv "$out.tmp" "$out"
echo "$out: $(du -k "$out" | cut -f1) KiB, $(find "$d/lib" -name '*.so*' | wc -l) libraries, glibc $glibc or newer"
