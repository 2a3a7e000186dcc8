#!/bin/sh
# Install every Debian package the build and the tests need.
# Safe to run twice: apt-get install skips what is already there.
set -eu
# slowhttptest: tests/http/t_slowloris.sh's attacker (slow heads and bodies).
# apache2: tests/http/t_remote_user_apache.sh runs conf/apache-cgi.conf;
# libapache2-mod-fcgid and apache2-suexec-pristine: tests/deploy runs each
# Apache mode and shared hosting under suEXEC; dpkg-dev and fakeroot build
# the .deb (make deb), systemd gives systemd-analyze to verify its unit.
PKGS="build-essential pkg-config clang libfcgi-dev libfcgi-bin libcurl4-openssl-dev \
libssl-dev libyaml-dev libjansson-dev libsqlite3-dev check nginx curl python3 wrk chromium \
slowhttptest apache2 libapache2-mod-fcgid apache2-suexec-pristine dpkg-dev fakeroot \
systemd"
# Node.js and npm for the browser tests and www/vendor: the machine's own
# when present, else Debian's.
command -v node >/dev/null 2>&1 || PKGS="$PKGS nodejs"
command -v npm >/dev/null 2>&1 || PKGS="$PKGS npm"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
        || missing="$missing $p"
done
if [ -z "$missing" ]; then
    echo "install-deps: all packages present"
    exit 0
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing
