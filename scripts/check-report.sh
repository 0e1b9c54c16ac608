#!/usr/bin/env bash
# Renders DIR/report.html in headless Chromium (Debian's `chromium`) with every remote request
# sent to a dead proxy, counts the tables and charts the browser actually rendered, and saves a
# full-page screenshot as DIR/report.png to look at. Exit 1 when something is missing.
set -euo pipefail
dir=${1:?usage: scripts/check-report.sh DIR (a directory holding report.html)}
html="$dir/report.html"
[ -f "$html" ] || { echo "no $html: run \`cargo xtask analyze $dir\` first" >&2; exit 1; }
command -v chromium > /dev/null || { echo "chromium is not installed: \`apt-get install chromium\`" >&2; exit 1; }
url="file://$(realpath "$html")"
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars
       --proxy-server=127.0.0.1:9 --proxy-bypass-list='<-loopback>')
dom=$(chromium "${flags[@]}" --dump-dom "$url" 2> /dev/null)
tables=$(grep -o '<table' <<< "$dom" | wc -l)
charts=$(grep -o '<svg' <<< "$dom" | wc -l)
height=$(( 1200 + 60 * $(grep -o '<tr' <<< "$dom" | wc -l) + 420 * charts ))
chromium "${flags[@]}" --window-size=1300,"$height" --screenshot="$dir/report.png" "$url" 2> /dev/null
echo "rendered $tables tables and $charts charts; screenshot: $dir/report.png"
[ "$tables" -ge 3 ] && [ "$charts" -ge 5 ] || { echo "report.html is missing tables or charts" >&2; exit 1; }
