#!/bin/sh
# Render an HTML report to a PNG with headless Chromium, offline: the
# report must not need the network, so every background service that
# would reach out is switched off and no host name resolves; anything the
# page tried to fetch would be missing from the picture.
#
#   scripts/screenshot.sh report.html out.png [width [height]]
#
# Chromium captures the window, not the whole page: the default height
# holds a run's report and a peak search's; the rest is background.
set -eu

if [ $# -lt 2 ]; then
	echo "usage: $0 report.html out.png [width [height]]" >&2
	exit 2
fi
html=$1
png=$2
width=${3:-1400}
height=${4:-5000}

if [ ! -f "$html" ]; then
	echo "$0: $html: no such file" >&2
	exit 1
fi

browser=
for b in chromium chromium-browser google-chrome; do
	if command -v "$b" >/dev/null 2>&1; then
		browser=$b
		break
	fi
done
if [ -z "$browser" ]; then
	echo "$0: no chromium found (Debian: apt-get install -y chromium)" >&2
	exit 1
fi

# Chromium wants absolute paths for both the page and the screenshot.
abs() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$(pwd)" "$1" ;; esac; }
html=$(abs "$html")
png=$(abs "$png")

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT INT TERM

"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--host-resolver-rules='MAP * ~NOTFOUND' \
	--hide-scrollbars --user-data-dir="$profile" \
	--window-size="$width,$height" --screenshot="$png" "file://$html" 2>/dev/null
test -s "$png"
echo "$png"
