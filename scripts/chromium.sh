#!/usr/bin/env bash
# chromium.sh — the headless Chromium the report's page tests open each
# HTML report in (report/pagetest): Debian's package.
#
#   scripts/chromium.sh install   install it unless a chromium is on PATH
#   scripts/chromium.sh path      print the browser's path (exit 1: none)
set -euo pipefail

find_browser() {
	local b
	for b in chromium chromium-browser google-chrome; do
		if command -v "$b" >/dev/null 2>&1; then
			command -v "$b"
			return 0
		fi
	done
	return 1
}

case ${1:-} in
install)
	if find_browser >/dev/null; then
		find_browser
		exit 0
	fi
	[[ $(id -u) == 0 ]] || { echo "$0: no chromium on PATH; run as root to apt-get install chromium" >&2; exit 1; }
	apt-get update -q >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >&2
	find_browser
	;;
path) find_browser ;;
*)
	echo "usage: $0 install|path" >&2
	exit 2
	;;
esac
