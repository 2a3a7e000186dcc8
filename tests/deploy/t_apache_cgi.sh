#!/bin/bash
# t_apache_cgi.sh - docs/deploy/apache-cgi.md, CGI: Debian's way (mpm_event
# with mod_cgid), conf/apache-cgi.conf as shipped (paths replaced), the
# site owned by a user of its own with the recipe's `permissions` block
# run as written (as root). Then apache_checks.sh's chat, stream, run API
# and approval through Apache; the program runs as www-data.
# Under ASan: GA_BIN=build-asan/gemini-agent (the sanitizer's settings
# pass through Apache, apache_lib.sh).
# shellcheck disable=SC2016,SC2034  # AP_*, GA_PIDFILE: read by apache_checks.sh and the libs
source "$(dirname "${BASH_SOURCE[0]}")/apache_checks.sh"

AP_MPM=event
ap_site_init cgid
ap_run_block apache-cgi.md permissions
mkdir -p "$AP_DIR"
ap_render apache-cgi.conf "$AP_DIR/site.conf"
apache_start "$AP_DIR/site.conf" cgid
ap_checks "cgid"
apache_stop
finish
