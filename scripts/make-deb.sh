#!/bin/sh
# scripts/make-deb.sh VERSION OUTDIR - the Debian package (make deb).
#
# Stages `make install DESTDIR=<stage> PREFIX=/usr` (the program built in
# its own folder with /usr baked in), adds what a package has and
# `make install` does not (conf/deb/: /etc/gemini-agent, the unit, the
# logrotate file, the maintainer scripts), takes Depends from the shared
# libraries the binary really links (dpkg-shlibdeps, which wants a debian/
# tree: a throwaway one in the stage) and builds OUTDIR/gemini-agent_VERSION_ARCH.deb
# with dpkg-deb --root-owner-group (every file root's; the service's user
# is made by postinst). Prints the .deb's path.
set -eu
[ $# -eq 2 ] || { echo "usage: scripts/make-deb.sh VERSION OUTDIR" >&2; exit 2; }
version=$1 outdir=$2
repo=$(cd "$(dirname "$0")/.." && pwd -P)
for tool in dpkg-deb dpkg-shlibdeps; do
    command -v "$tool" >/dev/null ||
        { echo "make-deb: $tool is missing (apt-get install dpkg-dev)" >&2; exit 1; }
done
arch=$(dpkg --print-architecture)
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd -P)
stage=$(mktemp -d "${TMPDIR:-/tmp}/gemini-agent-deb.XXXXXX")
trap 'rm -rf "$stage"' EXIT
root=$stage/root

# The program and its share folder, as make install lays them out.
make -s -C "$repo" install BUILD=build-deb PREFIX=/usr DESTDIR="$root" >&2
strip --strip-unneeded --remove-section=.comment --remove-section=.note \
    "$root/usr/bin/gemini-agent"
# conf/deb/ is this script's source, not a file a site uses.
rm -rf "$root/usr/share/gemini-agent/conf/deb"

# What the package adds. The unit goes where make install puts it, unless
# make install already did.
deb=$repo/conf/deb
unit=$root/usr/lib/systemd/system/gemini-agent.service
[ -f "$unit" ] || install -D -m 0644 "$repo/conf/gemini-agent.service" "$unit"
install -D -m 0644 "$deb/agent.yaml" "$root/etc/gemini-agent/agent.yaml"
install -D -m 0644 "$deb/logrotate" "$root/etc/logrotate.d/gemini-agent"
# postinst copies the key file from here once (it is not a conffile: it
# holds the site owner's key and belongs to the service's user).
install -D -m 0644 "$repo/conf/gemini.yaml.template" \
    "$root/usr/share/gemini-agent/package/gemini.yaml.template"
# The nginx site: the shipped snippet with the package's web root; the
# socket and everything else are already the package's.
grep -qF 'root /srv/gemini-agent/www;' "$repo/nginx/gemini-agent.conf" || {
    echo "make-deb: nginx/gemini-agent.conf lacks 'root /srv/gemini-agent/www;'" >&2; exit 1; }
sed -e 's|root /srv/gemini-agent/www;|root /usr/share/gemini-agent/www;|' \
    -e 's|^# Install: this file belongs.*|# Install (Debian package): ln -s /etc/gemini-agent/nginx.conf /etc/nginx/sites-enabled/gemini-agent.conf|' \
    -e 's|^# to /etc/nginx/sites-available/gemini-agent.conf, link it from|# then `nginx -t \&\& systemctl reload nginx`. This file is a conffile: edit|' \
    -e 's|^# /etc/nginx/sites-enabled/, then `nginx -t && systemctl reload nginx`.|# it here, upgrades keep your changes.|' \
    "$repo/nginx/gemini-agent.conf" >"$stage/nginx.conf"
install -D -m 0644 "$stage/nginx.conf" "$root/etc/gemini-agent/nginx.conf"
# The site's first page, with the widget in it: the one `setup DIR` writes
# (conf/site-index.html) where make install brings no index.html.
www=$root/usr/share/gemini-agent/www
if [ ! -f "$www/index.html" ] && [ -f "$repo/conf/site-index.html" ]; then
    install -m 0644 "$repo/conf/site-index.html" "$www/index.html"
fi
chmod -R u=rwX,go=rX "$root"

# Depends from the libraries the binary links (a debian/control is all
# dpkg-shlibdeps needs of a source tree).
mkdir -p "$stage/debian"
printf 'Source: gemini-agent\n\nPackage: gemini-agent\nArchitecture: any\n' \
    >"$stage/debian/control"
depends=$(cd "$stage" && dpkg-shlibdeps -O -e"root/usr/bin/gemini-agent" 2>/dev/null |
          sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "make-deb: dpkg-shlibdeps found no libraries" >&2; exit 1; }

mkdir -p "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@SIZE@|$size|" \
    -e "s|@DEPENDS@|$depends|" "$deb/control.in" >"$root/DEBIAN/control"
install -m 0644 "$deb/conffiles" "$root/DEBIAN/conffiles"
for s in postinst prerm postrm; do install -m 0755 "$deb/$s" "$root/DEBIAN/$s"; done
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\n' | LC_ALL=C sort |
    xargs -d '\n' md5sum) >"$root/DEBIAN/md5sums"

out=$outdir/gemini-agent_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$out" >&2
echo "$out"
