#!/bin/sh
# render.sh applies themes to the preview page and screenshots each one
# with headless Chromium, light mode on the left and dark on the right.
#
#   examples/theme-preview/render.sh                  # cyberpunk, northern-lights, elegant-luxury
#   examples/theme-preview/render.sh mono catppuccin  # any presets
#
# PNGs land in examples/theme-preview/out/ (git-ignored). Needs Go and
# Debian's chromium (apt-get install -y chromium).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out="$here/out"
[ $# -gt 0 ] || set -- cyberpunk northern-lights elegant-luxury

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
	echo "render.sh: chromium not found; install it with: apt-get install -y chromium" >&2
	exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/ralph" ./cmd/ralph)
mkdir -p "$out"

for preset in "$@"; do
	site="$work/$preset"
	mkdir -p "$site"
	cp "$here/preview.css" "$site/"
	sed "s/{{PRESET}}/$preset/g; s/{{TITLE}}/preset $preset/g" "$here/index.html" >"$site/index.html"
	"$work/ralph" -C "$site" theme preset "$preset" --apply --stylesheet theme.css
	profile=$(mktemp -d)
	"$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run \
		--user-data-dir="$profile" --hide-scrollbars \
		--screenshot="$out/$preset.png" --window-size=1200,800 \
		"file://$site/index.html" >/dev/null 2>&1
	rm -rf "$profile"
	echo "rendered $out/$preset.png"
done
