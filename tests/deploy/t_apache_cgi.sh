#!/bin/bash
# t_apache_cgi.sh - docs/deploy/apache-cgi.md, CGI: Debian's way (mpm_event
# with mod_cgid). The site made by the recipe's `setup` block as written,
# run as a user of its own (apache_checks.sh ap_site_init), its
# `permissions` block as written (as root), and the server/apache-cgi.conf
# setup rendered, Included unchanged. Then apache_checks.sh's chat, stream,
# run API and approval through Apache; the program runs as www-data.
# Under ASan: GA_BIN=build-asan/gemini-agent (the sanitizer's settings
# pass through Apache, apache_lib.sh).
# shellcheck disable=SC2016,SC2034  # AP_*, GA_PIDFILE: read by apache_checks.sh and the libs
source "$(dirname "${BASH_SOURCE[0]}")/apache_checks.sh"

AP_MPM=event
ap_site_init apache-cgi.md cgid
ap_run_block apache-cgi.md permissions
ap_www_data_checks
ap_snippet apache-cgi.conf
apache_start "$AP_SNIPPET" cgid
ap_checks "cgid"
apache_stop
finish
