#!/usr/bin/env bash
# install-chromium.sh installs Debian's chromium package, which the
# dashboard's browser tests (internal/serve, chromedp) drive headless. It
# does nothing when /usr/bin/chromium is already there, and uses sudo only
# when not running as root.
set -euo pipefail

if [[ -x /usr/bin/chromium ]]; then
	echo "chromium already installed: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-chromium: apt-get not found; install Chromium so that /usr/bin/chromium exists" >&2
	exit 1
fi
as_root=()
if [[ $(id -u) -ne 0 ]]; then
	as_root=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core
/usr/bin/chromium --version
